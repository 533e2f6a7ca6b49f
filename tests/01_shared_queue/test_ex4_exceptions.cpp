// Lesson 01, exercise 4: a throwing task.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>

#include "exercises.hpp"
#include "thread_pool.hpp"

using ws::lesson01::ThreadPool;

TEST(Lesson01Ex4, AThrowingTaskIsRethrownAfterEveryOtherTaskRan) {
    std::atomic<int> ran{0};
    ThreadPool pool(2);
    for (int i = 0; i < 1000; ++i) {
        pool.spawn([&ran, i] {
            if (i == 500) throw std::runtime_error("task 500 failed");
            ran.fetch_add(1);
        });
    }
    try {
        pool.wait_idle();
        FAIL() << "wait_idle must rethrow the exception of task 500";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "task 500 failed");
    }
    EXPECT_EQ(ran.load(), 999) << "every other task must have finished before the rethrow";
}

TEST(Lesson01Ex4, OnlyTheFirstExceptionIsRethrownAndOnlyOnce) {
    ThreadPool pool(1);  // one worker: "first" is well defined
    pool.spawn([] { throw std::runtime_error("first"); });
    pool.spawn([] { throw std::logic_error("second"); });
    try {
        pool.wait_idle();
        FAIL() << "wait_idle must rethrow";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "first");
    }
    EXPECT_NO_THROW(pool.wait_idle()) << "the exception was already reported";
}

TEST(Lesson01Ex4, ThePoolKeepsWorkingAfterATaskThrew) {
    std::atomic<int> ran{0};
    ThreadPool pool(2);
    for (int i = 0; i < 10; ++i)
        pool.spawn([] { throw 42; });
    EXPECT_ANY_THROW(pool.wait_idle());
    for (int i = 0; i < 100; ++i)
        pool.spawn([&] { ran.fetch_add(1); });
    pool.wait_idle();
    EXPECT_EQ(ran.load(), 100);
    EXPECT_EQ(pool.stats().executed(), 110u);
}
