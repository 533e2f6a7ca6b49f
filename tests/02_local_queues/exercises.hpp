// The exercises of lesson 02, with what most often makes their tests hang.
#pragma once

#include <ws/testing/harness.hpp>

WS_EXERCISE(Lesson02Ex1, "lesson 02, exercise 1 (the worker's queue)",
            "a thread waits for a task that was lost or taken twice: do push, pop and steal each "
            "hold the queue's mutex, and do pop and steal remove the task they return?");
WS_EXERCISE(Lesson02Ex2, "lesson 02, exercise 2 (spawn onto the worker's own queue)",
            "a task was pushed where no worker looks: does each worker set the thread-local "
            "identity before it runs anything, and does find_task pop the worker's own queue?");
WS_EXERCISE(Lesson02Ex3, "lesson 02, exercise 3 (steal from a random victim)",
            "work sits in one worker's queue while the others idle: does steal() try every other "
            "worker (never the thief itself) and return the task it took?");
WS_EXERCISE(Lesson02Ex4, "lesson 02, exercise 4 (back off when idle)",
            "an idle worker sleeps for too long, or forever: sleep only for a short, bounded "
            "time, and look for work again after every sleep");
