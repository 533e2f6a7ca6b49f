// The exercises of lesson 03, with what most often makes their tests hang.
#pragma once

#include <ws/testing/harness.hpp>

WS_EXERCISE(Lesson03Ex1, "lesson 03, exercise 1 (take the oldest half)",
            "steal_half never returns: does it take the queue's mutex only once, and stop after "
            "(size + 1) / 2 tasks?");
WS_EXERCISE(Lesson03Ex2, "lesson 03, exercise 2 (move the batch without deadlock)",
            "deadlock: two queues stealing from each other each hold one lock and wait for the "
            "other's. Never hold both locks at once (take the batch out, unlock, then add it), "
            "or always lock the two in one fixed order");
WS_EXERCISE(Lesson03Ex3, "lesson 03, exercise 3 (the pool steals half)",
            "a stolen batch was lost or wait_idle never returns: does the thief add the whole "
            "batch to its own queue and then pop one of it to run?");
