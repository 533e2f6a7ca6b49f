// The exercises of lesson 05, with what most often makes their tests hang.
#pragma once

#include <ws/testing/harness.hpp>

WS_EXERCISE(Lesson05Ex1, "lesson 05, exercise 1 (the naive parker)",
            "a parked worker is never woken: does notify_one lock and unlock the mutex before "
            "cv_.notify_one(), and does park() recheck for work under that mutex before waiting?");
WS_EXERCISE(Lesson05Ex2, "lesson 05, exercise 2 (announce, recheck, sleep)",
            "a lost wake-up: does park() announce (seq_cst RMW on state_) before it rechecks, "
            "does the pool publish a task before notify_one loads state_, and does every claimed "
            "sleeper get a token?");
WS_EXERCISE(Lesson05Ex3, "lesson 05, exercise 3 (fewer wake-ups)",
            "nobody wakes because the searching count never drops to zero: does every worker "
            "that begins a search end it (end_search) or park (which stops searching), and does "
            "a woken worker count as a searcher?");
WS_EXERCISE(Lesson05Ex4, "lesson 05, exercise 4 (shutdown wakes everyone)",
            "a worker sleeps through the shutdown: does notify_all set kStop and claim every "
            "sleeper in one CAS, and does park() return at once when its announcement sees kStop?");
