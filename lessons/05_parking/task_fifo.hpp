// Lesson 05: the pool's queue for tasks spawned from outside, a first-in-first-out queue of
// tasks held by value in one ring buffer.
//
// Lessons 01-04 kept outside tasks in a std::deque, lesson 04 as pointers to heap-allocated
// tasks (its deques hold pointers). A std::deque also allocates and frees a block of slots as
// the queue moves along. With parking, an outside spawn into an idle pool is a wake-up whose
// latency counts, and an allocation on that path costs more than all the rest of the pool's
// work there (the chapter measures it). This ring allocates only when it is full, to double
// its size, and never shrinks: in the steady state neither push nor pop allocates. Not
// thread-safe: the pool locks around it.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include <ws/task.hpp>

namespace ws::lesson05 {

// ANCHOR: task_fifo
class TaskFifo {
  public:
    bool empty() const noexcept { return size_ == 0; }
    std::size_t size() const noexcept { return size_; }
    std::size_t capacity() const noexcept { return slots_.size(); }  // grows, never shrinks

    // Adds a task at the back. May throw std::bad_alloc when the ring grows; then the queue is
    // unchanged and `task` was not moved from (the caller still owns it).
    void push(Task&& task) {
        if (size_ == slots_.size()) grow();
        slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(task);
        ++size_;
    }

    // Takes the task at the front; the queue must not be empty.
    Task pop() noexcept {
        Task task = std::move(slots_[head_]);  // leaves the slot empty
        head_ = (head_ + 1) & (slots_.size() - 1);
        --size_;
        return task;
    }

  private:
    static constexpr std::size_t kInitialSlots = 16;  // a power of two, like every size after

    // Moves the tasks, oldest first, into a ring twice as large (Task's move cannot throw, so
    // only the allocation can, before anything moved).
    void grow() {
        std::vector<Task> bigger(slots_.empty() ? kInitialSlots : 2 * slots_.size());
        for (std::size_t i = 0; i < size_; ++i)
            bigger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
        slots_ = std::move(bigger);
        head_ = 0;
    }

    std::vector<Task> slots_;  // the ring; its size is 0 or a power of two
    std::size_t head_ = 0;     // the slot of the oldest task
    std::size_t size_ = 0;     // tasks in the ring
};
// ANCHOR_END: task_fifo

}  // namespace ws::lesson05
