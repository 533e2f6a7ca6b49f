#include "serial_executor.hpp"

#include <stdexcept>
#include <utility>

#include <ws/not_implemented.hpp>

namespace ws::lesson00 {

void SerialExecutor::spawn(Task task) {
    // TODO(exercise 1): reject an empty task with std::invalid_argument, then queue it at the back.
    (void)task;
    throw NotImplemented("lesson 00, exercise 1: SerialExecutor::spawn");
}

void SerialExecutor::run() {
    // TODO(exercise 2): run tasks oldest first until the queue is empty (tasks may spawn more),
    // then rethrow the first error if run_one recorded one.
    throw NotImplemented("lesson 00, exercise 2: SerialExecutor::run");
}

void SerialExecutor::run_one(Task& task) {
    // TODO(exercise 3): catch what the task throws and keep the first exception in first_error_,
    // so the other tasks still run. (As given, an exception escapes and run() stops early.)
    task();
}

}  // namespace ws::lesson00
