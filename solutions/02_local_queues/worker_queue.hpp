// Lesson 02: one worker's queue. A std::deque<Task> behind a mutex of its own, used from two
// ends: the owner pushes and pops at the back (newest first), thieves take from the front
// (oldest first). The two ends are why a worker and a thief rarely want the same task.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

#include <ws/task.hpp>

namespace ws::lesson02 {

// ANCHOR: worker_queue
class WorkerQueue {
  public:
    // Owner: adds the newest task.
    void push(Task task) {
        std::lock_guard lock(mutex_);
        tasks_.push_back(std::move(task));
    }

    // Owner: takes the newest task. Its data was written moments ago, so it is likely still in
    // this core's cache; and it is the task the thieves want least.
    std::optional<Task> pop() {
        std::lock_guard lock(mutex_);
        if (tasks_.empty()) return std::nullopt;
        Task task = std::move(tasks_.back());
        tasks_.pop_back();
        return task;
    }

    // Any other thread: takes the oldest task. In a tree of spawns the oldest task is the
    // closest to the root, so it tends to carry the most work with it. Under a lock no thief
    // can lose a race half-way, so there is no "retry" outcome (lesson 04's lock-free deque has
    // one: ws::Steal).
    std::optional<Task> steal() {
        std::lock_guard lock(mutex_);
        if (tasks_.empty()) return std::nullopt;
        Task task = std::move(tasks_.front());
        tasks_.pop_front();
        return task;
    }
    // ANCHOR_END: worker_queue

    // Exact at the moment it is read; may be stale by the time the caller looks at it.
    std::size_t size() const {
        std::lock_guard lock(mutex_);
        return tasks_.size();
    }

  private:
    mutable std::mutex mutex_;
    std::deque<Task> tasks_;  // front: oldest, back: newest
};

}  // namespace ws::lesson02
