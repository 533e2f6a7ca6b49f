// The exercises of lesson 07, with what most often makes their tests hang.
#pragma once

#include <ws/testing/harness.hpp>

WS_EXERCISE(Lesson07Ex1, "lesson 07, exercise 1 (try_run_one: the helping step)",
            "a task that waits by calling try_run_one never sees its work done: does "
            "try_run_one look in the worker's own deque first, then the injector, then steal?");
WS_EXERCISE(Lesson07Ex2, "lesson 07, exercise 2 (join with helping)",
            "join waits for b but nobody runs it: after a(), does the joiner keep calling "
            "try_run_one (which pops b itself when nobody stole it) until b's job is done?");
WS_EXERCISE(Lesson07Ex3, "lesson 07, exercise 3 (fork-join from outside the pool)",
            "the caller never wakes up: does the task that runs the work set `done` (release) "
            "and then call pool.notify_outside(), and does the caller wait with "
            "pool.block_until(done)?");
WS_EXERCISE(Lesson07Ex4, "lesson 07, exercise 4 (exceptions in join)",
            "if a threw, does join still wait for b before it rethrows?");
WS_EXERCISE(Lesson07Ex5, "lesson 07, exercise 5 (TaskGroup)",
            "wait() never returns: is pending_ counted up in run() and down after every task, "
            "even one that threw, and does wait() help until it reaches zero?");
WS_EXERCISE(Lesson07Ex6, "lesson 07, exercise 6 (parallel_for and parallel_reduce)",
            "the recursion never reaches a chunk of at most `grain` indices, or splits an "
            "empty range forever");
