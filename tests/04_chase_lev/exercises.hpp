// The exercises of lesson 04, with what most often makes their tests hang.
#pragma once

#include <ws/testing/harness.hpp>

WS_EXERCISE(Lesson04Ex1, "lesson 04, exercise 1 (the ring buffer: push, pop, steal)",
            "a loop over the deque never ends: does pop restore bottom when the deque was empty, "
            "and do push and steal move bottom and top by exactly one?");
WS_EXERCISE(Lesson04Ex2, "lesson 04, exercise 2 (lock-free steal and the last item, with CAS)",
            "a thief or the owner waits for an item that was lost: does steal read the slot "
            "before its CAS and return retry when the CAS fails, and does pop CAS for the last "
            "item?");
WS_EXERCISE(Lesson04Ex3,
            "lesson 04, exercise 3 (the memory orderings; a missing release/acquire shows "
            "under --tsan)",
            "an item was lost in the owner/thief race: is pop's store of bottom seq_cst, followed "
            "by a seq_cst load of top, and does steal load top then bottom with seq_cst?");
WS_EXERCISE(Lesson04Ex4, "lesson 04, exercise 4 (growth)",
            "push never returns or an item vanished after growth: does grow copy every index in "
            "[top, bottom) to the same index of the bigger buffer before publishing it?");
WS_EXERCISE(Lesson04Ex5, "lesson 04, exercise 5 (the pool on Chase-Lev deques)",
            "a task never runs or wait_idle never returns: does a spawn from a worker push onto "
            "that worker's own deque (and count the task first), and does steal_batch return the "
            "first task it got and push the others onto the thief's deque, skipping a retry?");
