// Lesson 00: a single-threaded executor. No threads yet: the point is the shape every later
// pool keeps — spawn a task, run until nothing is left, and never lose a task or an exception.
#pragma once

#include <cstddef>
#include <deque>
#include <exception>

#include <ws/task.hpp>

namespace ws::lesson00 {

// ANCHOR: class
class SerialExecutor {
  public:
    // Queues `task` to run later, in spawn order. Running tasks may spawn more.
    // An empty Task is rejected with std::invalid_argument.
    void spawn(Task task);

    // Runs queued tasks, oldest first, until the queue is empty — including the tasks that
    // running tasks spawn. If tasks threw, every other task still runs; then the first
    // exception is rethrown (and forgotten, so the executor can be used again). A task may
    // call run() itself, to finish what is queued before it goes on; an exception kept from an
    // earlier task then comes out of that inner run(). (Lesson 01's pool refuses wait_idle
    // from inside its tasks: there the task would wait for itself.)
    void run();

    // The name later pools use for "run until everything is done".
    void wait_idle() { run(); }

    std::size_t pending() const noexcept { return queue_.size(); }

  private:
    void run_one(Task& task);

    std::deque<Task> queue_;
    std::exception_ptr first_error_;
};
// ANCHOR_END: class

}  // namespace ws::lesson00
