// The exercises of lesson 06, with what most often makes their tests hang.
#pragma once

#include <ws/testing/harness.hpp>

WS_EXERCISE(Lesson06Ex1, "lesson 06, exercise 1 (the injector: push and steal)",
            "a consumer waits forever: for a slot's `written` flag that its producer never set, "
            "or for a head or tail stuck at the phantom offset because the thread that took a "
            "block's last slot never moved it to the next block (or never linked `next`)");
WS_EXERCISE(Lesson06Ex2, "lesson 06, exercise 2 (reclaiming blocks)",
            "reclamation should never block: is a block freed by the consumer whose read "
            "completes it, and is `reads_done` counted once per slot read?");
WS_EXERCISE(Lesson06Ex3, "lesson 06, exercise 3 (steal_batch_and_pop)",
            "a batch claimed more positions than the producers had claimed (past the tail), or "
            "crossed into the next block: its consumer waits for slots nobody will write");
WS_EXERCISE(Lesson06Ex4, "lesson 06, exercise 4 (spawning through the injector)",
            "a task pushed into the injector is never taken: does the worker loop look at the "
            "injector, does the sleeping worker's recheck look at it, and does spawn from outside "
            "wake a sleeper after pushing?");
WS_EXERCISE(Lesson06Ex5, "lesson 06, exercise 5 (fairness)",
            "the two respawning tasks never stop: the test stops them after its check; if it "
            "hangs, the pool does not drain or the check never ran");
