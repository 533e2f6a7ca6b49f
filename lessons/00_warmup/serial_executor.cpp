#include "serial_executor.hpp"

#include <stdexcept>
#include <utility>

#include <ws/not_implemented.hpp>

namespace ws::lesson00 {

void SerialExecutor::spawn(Task task) {
    // TODO(exercise 1): when spawn returns, the task waits for run() behind every task spawned
    // before it; an empty task is refused here, where the mistake is made
    // (std::invalid_argument). Rule: spawn only stores, it never runs anything.
    // Checked by Lesson00Ex1.
    (void)task;
    throw NotImplemented("lesson 00, exercise 1: SerialExecutor::spawn");
}

void SerialExecutor::run() {
    // TODO(exercise 2): when run returns, every task spawned so far has run exactly once, oldest
    // first, including the tasks that running tasks spawned. Rule: running tasks change the
    // queue under you, and a task still queued while it runs would be found again (by a nested
    // run(), by pending()). Checked by Lesson00Ex2.
    // TODO(exercise 3): once the queue is empty, run() throws the first exception a task threw
    // (see run_one), and the next run() starts clean. Rule: an exception is forgotten when it is
    // rethrown, not when a run() begins: a run() called from inside a task must not lose an
    // earlier task's exception. Checked by Lesson00Ex3.
    throw NotImplemented("lesson 00, exercise 2: SerialExecutor::run");
}

void SerialExecutor::run_one(Task& task) {
    // TODO(exercise 3): a task that throws stops nothing: every other task still runs, then
    // run() throws the first exception, once (the next run() starts clean). Rule: a task may
    // throw anything, not only a std::exception. Checked by Lesson00Ex3.
    // (As given, an exception escapes and run() stops early.)
    task();
}

}  // namespace ws::lesson00
