// Lesson 01, exercise 2: wait_idle.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson01::ThreadPool;

TEST(Lesson01Ex2, WaitIdleWaitsForEveryTask) {
    std::atomic<int> ran{0};
    ThreadPool pool(2);
    for (int i = 0; i < 10'000; ++i)
        pool.spawn([&] { ran.fetch_add(1, std::memory_order_relaxed); });
    pool.wait_idle();
    EXPECT_EQ(ran.load(), 10'000);
}

TEST(Lesson01Ex2, WaitIdleWaitsForRunningTasksNotOnlyQueuedOnes) {
    std::atomic<bool> finished{false};
    ThreadPool pool(2);
    pool.spawn([&] {
        std::this_thread::sleep_for(50ms);
        finished = true;
    });
    std::this_thread::sleep_for(10ms);  // the task is running now, the queue empty
    pool.wait_idle();
    EXPECT_TRUE(finished.load()) << "wait_idle returned while a task was still running";
}

TEST(Lesson01Ex2, WaitIdleWaitsForTasksSpawnedByTasks) {
    std::atomic<int> ran{0};
    ThreadPool pool(2);
    pool.spawn([&] {
        std::this_thread::sleep_for(5ms);
        for (int i = 0; i < 10; ++i) {
            pool.spawn([&] {
                std::this_thread::sleep_for(1ms);
                for (int j = 0; j < 10; ++j)
                    pool.spawn([&] { ran.fetch_add(1); });
                ran.fetch_add(1);
            });
        }
        ran.fetch_add(1);
    });
    pool.wait_idle();
    EXPECT_EQ(ran.load(), 111);
}

TEST(Lesson01Ex2, WaitIdleIsReusable) {
    std::atomic<int> ran{0};
    ThreadPool pool(2);
    for (int round = 1; round <= 5; ++round) {
        for (int i = 0; i < 1000; ++i)
            pool.spawn([&] { ran.fetch_add(1); });
        pool.wait_idle();
        EXPECT_EQ(ran.load(), round * 1000);
    }
}

TEST(Lesson01Ex2, WaitIdleOnAFreshPoolReturns) {
    ThreadPool pool(2);
    pool.wait_idle();
    pool.wait_idle();
    SUCCEED();
}

TEST(Lesson01Ex2, WaitIdleFromInsideATaskIsALogicError) {
    ThreadPool pool(2);
    std::atomic<int> outcome{0};  // 1: logic_error, 2: returned, 3: other exception
    pool.spawn([&] {
        try {
            pool.wait_idle();
            outcome = 2;
        } catch (const std::logic_error&) {
            outcome = 1;
        } catch (...) {
            outcome = 3;
        }
    });
    pool.wait_idle();
    EXPECT_EQ(outcome.load(), 1) << "wait_idle on a worker must throw std::logic_error";
}

TEST(Lesson01Ex2, StatsCountEveryExecutedTask) {
    ThreadPool pool(2);
    for (int i = 0; i < 5000; ++i)
        pool.spawn([] {});
    pool.wait_idle();
    const ws::PoolStats s = pool.stats();
    ASSERT_EQ(s.executed_per_worker.size(), 2u);
    EXPECT_EQ(s.executed(), 5000u);
    EXPECT_EQ(s.steals, 0u) << "lesson 01 has nothing to steal from";
}
