// The exercises of lesson 01, with what most often makes their tests hang.
#pragma once

#include <ws/testing/harness.hpp>

WS_EXERCISE(Lesson01Ex1, "lesson 01, exercise 1 (spawn and the worker loop)",
            "a spawned task never runs: does spawn notify work_available_, and does the worker "
            "loop wait with a predicate that becomes true when a task is queued?");
WS_EXERCISE(Lesson01Ex2, "lesson 01, exercise 2 (wait_idle)",
            "wait_idle never returns: is pending_ counted up in spawn and down after every task "
            "(even one that spawned others), and is idle_ notified when it reaches zero?");
WS_EXERCISE(Lesson01Ex3, "lesson 01, exercise 3 (orderly shutdown)",
            "the destructor never returns: does it set stopping_ under the lock and notify_all, "
            "and does a worker leave once stopping_ is set and the queue is empty?");
WS_EXERCISE(Lesson01Ex4, "lesson 01, exercise 4 (a throwing task)",
            "after a task threw, pending_ was never decremented: count the task as finished "
            "whether or not it threw");
