// Lesson 02: one worker's queue. A std::deque<Task> behind a mutex of its own, used from two
// ends: the owner pushes and pops at the back (newest first), thieves take from the front
// (oldest first). The two ends are why a worker and a thief rarely want the same task.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

#include <ws/not_implemented.hpp>
#include <ws/task.hpp>

namespace ws::lesson02 {

class WorkerQueue {
  public:
    // Owner: adds the newest task.
    void push(Task task) {
        // TODO(exercise 1): under mutex_, add the task at the back of tasks_.
        (void)task;
        throw NotImplemented("lesson 02, exercise 1: WorkerQueue::push");
    }

    // Owner: takes the newest task.
    std::optional<Task> pop() {
        // TODO(exercise 1): under mutex_, remove and return the task at the back (or nullopt).
        throw NotImplemented("lesson 02, exercise 1: WorkerQueue::pop");
    }

    // Any other thread: takes the oldest task.
    std::optional<Task> steal() {
        // TODO(exercise 1): under mutex_, remove and return the task at the front (or nullopt).
        throw NotImplemented("lesson 02, exercise 1: WorkerQueue::steal");
    }

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
