// Lesson 03: one worker's queue, as in lesson 02 (a std::deque<Task> behind a mutex of its own;
// the owner at the back, thieves at the front), and now a thief can take half of it at once.
#pragma once

#include <cstddef>
#include <deque>
#include <iterator>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <ws/not_implemented.hpp>
#include <ws/task.hpp>

namespace ws::lesson03 {

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
    std::optional<Task> steal_one() {
        std::lock_guard lock(mutex_);
        if (tasks_.empty()) return std::nullopt;
        Task task = std::move(tasks_.front());
        tasks_.pop_front();
        return task;
    }

    // Any other thread: takes the oldest half of the tasks, rounded up (so a lone task can be
    // stolen too), oldest first. One lock for the whole batch: a thief that takes many tasks at
    // once comes back far less often than one that takes them one by one, and each visit costs
    // the victim a lock it must wait for.
    std::vector<Task> steal_half() {
        // TODO(exercise 1): the batch returned is the oldest half of the queue, rounded up,
        // oldest first, and none of it is still queued; an empty queue gives an empty batch.
        // Rule: one visit, one lock, however big the batch: the owner waits for every lock a
        // thief takes. Checked by Lesson03Ex1.
        throw NotImplemented("lesson 03, exercise 1: WorkerQueue::steal_half");
    }

    // Moves the oldest half of this queue (rounded up) to the back of `dest`, in their order;
    // returns how many moved.
    //
    // Two workers may steal from each other at the same moment: A.steal_half_into(B) while
    // B.steal_half_into(A). Whatever you lock, that must never leave both waiting for good.
    std::size_t steal_half_into(WorkerQueue& dest) {
        // TODO(exercise 2): afterwards the oldest half of this queue (rounded up) is at the back
        // of dest, in its order, nothing lost and nothing twice, and the count moved is
        // returned. Rule: the two-way steal above must never leave both threads waiting, for
        // any number of queues robbing each other in any directions; and when memory runs out
        // (std::bad_alloc, in either step) no task may be lost and no exception may leave: a
        // steal that cannot complete may move nothing. Checked by Lesson03Ex2.
        (void)dest;
        throw NotImplemented("lesson 03, exercise 2: WorkerQueue::steal_half_into");
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

}  // namespace ws::lesson03
