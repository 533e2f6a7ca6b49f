#include "serial_executor.hpp"

#include <stdexcept>
#include <utility>

namespace ws::lesson00 {

// ANCHOR: spawn
void SerialExecutor::spawn(Task task) {
    if (!task) throw std::invalid_argument("SerialExecutor::spawn: the task is empty");
    queue_.push_back(std::move(task));
}
// ANCHOR_END: spawn

// ANCHOR: run
void SerialExecutor::run() {
    // Take the task out of the queue before running it: a task left at the front while it runs
    // is still "queued" — a run() called from inside it would run it again, and pending()
    // would count it.
    while (!queue_.empty()) {
        Task task = std::move(queue_.front());
        queue_.pop_front();
        run_one(task);
    }
    if (first_error_) std::rethrow_exception(std::exchange(first_error_, nullptr));
}
// ANCHOR_END: run

// ANCHOR: run_one
void SerialExecutor::run_one(Task& task) {
    // A throwing task must not take the rest of the queue down with it: keep the first
    // exception for run() to rethrow once every task has had its turn.
    try {
        task();
    } catch (...) {
        if (!first_error_) first_error_ = std::current_exception();
    }
}
// ANCHOR_END: run_one

}  // namespace ws::lesson00
