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

#include <ws/task.hpp>

namespace ws::lesson03 {

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
    std::optional<Task> steal_one() {
        std::lock_guard lock(mutex_);
        if (tasks_.empty()) return std::nullopt;
        Task task = std::move(tasks_.front());
        tasks_.pop_front();
        return task;
    }
    // ANCHOR_END: worker_queue

    // ANCHOR: steal_half
    // Any other thread: takes the oldest half of the tasks, rounded up (so a lone task can be
    // stolen too), oldest first. One lock for the whole batch: a thief that takes many tasks at
    // once comes back far less often than one that takes them one by one, and each visit costs
    // the victim a lock it must wait for.
    std::vector<Task> steal_half() {
        std::lock_guard lock(mutex_);
        const std::size_t n = (tasks_.size() + 1) / 2;
        std::vector<Task> batch;
        batch.reserve(n);
        for (std::size_t i = 0; i < n; ++i) {
            batch.push_back(std::move(tasks_.front()));
            tasks_.pop_front();
        }
        return batch;
    }
    // ANCHOR_END: steal_half

    // ANCHOR: steal_half_into
    // Moves the oldest half of this queue (rounded up) to the back of `dest`, in their order;
    // returns how many moved.
    //
    // Two workers may steal from each other at the same moment: A.steal_half_into(B) while
    // B.steal_half_into(A). Were each to lock its victim and then its own queue, each could hold
    // the lock the other waits for, forever. The choice here is a two-step move that never
    // holds two locks at once: take the batch out under the victim's lock, let go, then add it
    // under dest's lock. With at most one lock held, no cycle of waiting threads can form, for
    // any number of thieves in any directions, and there is no lock order to keep. The price:
    // between the two steps the batch is in neither queue, so another thief cannot see it (it is
    // still counted in the pool's pending count, so the pool cannot look idle), and one vector
    // per steal. Locking both at once in a fixed order (std::scoped_lock) would also be correct,
    // but keeps the victim waiting while the thief waits for its own lock, and needs care when
    // dest is this queue.
    //
    // Out of memory (std::bad_alloc), a steal loses no task and throws nothing: it moves none.
    // Why that is possible: steal_half reserves the batch before it takes a task, and
    // std::deque's insert at either end adds the whole batch or, if it throws, changes nothing.
    // So a batch dest has no room for is still whole, and goes back to the front of this queue,
    // where it was. If even that fails, the batch exists nowhere else: try both again (tasks
    // finishing elsewhere free memory), as a thief that found nothing tries again.
    std::size_t steal_half_into(WorkerQueue& dest) {
        std::vector<Task> batch;
        try {
            batch = steal_half();  // step 1: under this queue's lock only
        } catch (const std::bad_alloc&) {
            return 0;  // no room for the batch: nothing was taken
        }
        if (batch.empty()) return 0;
        for (;;) {
            if (dest.insert_all(batch, /*at_front=*/false)) return batch.size();  // step 2
            if (insert_all(batch, /*at_front=*/true)) return 0;  // put back: nothing stolen
            std::this_thread::yield();
        }
    }
    // ANCHOR_END: steal_half_into

    // Exact at the moment it is read; may be stale by the time the caller looks at it.
    std::size_t size() const {
        std::lock_guard lock(mutex_);
        return tasks_.size();
    }

  private:
    // ANCHOR: insert_all
    // Under this queue's lock only: moves the whole batch in, in its order, at the front or the
    // back; out of memory, moves none of it and returns false.
    bool insert_all(std::vector<Task>& batch, bool at_front) {
        try {
            std::lock_guard lock(mutex_);
            tasks_.insert(at_front ? tasks_.begin() : tasks_.end(),
                          std::make_move_iterator(batch.begin()),
                          std::make_move_iterator(batch.end()));
            return true;
        } catch (const std::bad_alloc&) {
            return false;
        }
    }
    // ANCHOR_END: insert_all

    mutable std::mutex mutex_;
    std::deque<Task> tasks_;  // front: oldest, back: newest
};

}  // namespace ws::lesson03
