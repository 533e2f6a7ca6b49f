// The exercises of lesson 09, with what most often makes their tests hang.
#pragma once

#include <ws/testing/harness.hpp>

WS_EXERCISE(Lesson09Ex1, "lesson 09, exercise 1 (the promise type and Task<T>)",
            "a task's body never runs or never finishes: is initial_suspend lazy, and does "
            "result() give back what return_value or unhandled_exception kept?");
WS_EXERCISE(Lesson09Ex2, "lesson 09, exercise 2 (spawning a coroutine and resuming it on the pool)",
            "a coroutine is never resumed: does resume_on spawn a job that resumes it, and does "
            "sync_wait's caller sleep until the frame's final suspension tells it?");
WS_EXERCISE(Lesson09Ex3, "lesson 09, exercise 3 (awaiting a child by symmetric transfer)",
            "the parent is never resumed: does the awaiter store the parent as the child's "
            "continuation, and does the final awaiter return it?");
WS_EXERCISE(Lesson09Ex4, "lesson 09, exercise 4 (the waker: no lost wake-up)",
            "a waiter sleeps forever: can set() run between the waiter's check and its "
            "enqueueing? Both must be one compare-exchange on the state word");
WS_EXERCISE(Lesson09Ex5, "lesson 09, exercise 5 (when_all and the channel)",
            "the parent of when_all is never resumed (does the last child to finish resume "
            "it?), or a channel waiter is never woken (is every hand-over followed by resume_on?)");
