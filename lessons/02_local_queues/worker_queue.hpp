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
        // TODO(exercise 1): afterwards the task is the newest in the queue. Rule: the owner and
        // any number of thieves use this queue at the same moment, so tasks_ is never touched
        // outside mutex_. Checked by Lesson02Ex1.
        (void)task;
        throw NotImplemented("lesson 02, exercise 1: WorkerQueue::push");
    }

    // Owner: takes the newest task.
    std::optional<Task> pop() {
        // TODO(exercise 1): returns the newest task and it is no longer queued, or nullopt if
        // there is none. Rule: every task is handed out exactly once, even to an owner and
        // thieves asking at the same moment. Checked by Lesson02Ex1.
        throw NotImplemented("lesson 02, exercise 1: WorkerQueue::pop");
    }

    // Any other thread: takes the oldest task.
    std::optional<Task> steal() {
        // TODO(exercise 1): returns the oldest task and it is no longer queued, or nullopt if
        // there is none. Rule: as for pop(), every task is handed out exactly once, even to an
        // owner and thieves asking at the same moment. Checked by Lesson02Ex1.
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
