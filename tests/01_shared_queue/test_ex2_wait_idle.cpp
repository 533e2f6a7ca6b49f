// Lesson 01, exercise 2: wait_idle.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include <ws/testing/harness.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

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

TEST(Lesson01Ex2, WaitIdleAfterTheLastTaskFinishedSeesWhatItDid) {
    // The task has long finished when wait_idle is called (this thread only saw a relaxed flag,
    // which orders nothing): wait_idle must still be what makes the task's writes visible here,
    // so it must read the count under the mutex, as the worker wrote it. ThreadSanitizer reports
    // a wait_idle that peeks at the count without the lock.
    int result = 0;  // a plain int: only wait_idle orders the task's write before our read
    std::atomic<bool> done{false};
    const auto before = ws::testing::thread_ids();
    ThreadPool pool(1);
    const auto workers = ws::testing::new_threads(before);
    pool.spawn([&] {
        result = 42;
        done.store(true, std::memory_order_relaxed);
    });
    ASSERT_TRUE(ws::testing::wait_until([&] { return done.load(std::memory_order_relaxed); },
                                        10s * ws::testing::slowdown()));
    // The task has counted itself out once its worker sleeps again: not a fixed pause, which a
    // worker kept from a core on a busy machine could outlast (then wait_idle would lock the
    // mutex after the worker's write, and nothing would be left to catch). A worker that never
    // sleeps (it busy-waits: Lesson01Ex1.AnIdlePoolSleeps fails) gets the pause.
    if (!ws::testing::kCanSteerThreads ||
        !ws::testing::wait_until_asleep(workers, 1s * ws::testing::slowdown())) {
        std::this_thread::sleep_for(20ms * ws::testing::slowdown());
    }
    pool.wait_idle();
    EXPECT_EQ(result, 42);
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

TEST(Lesson01Ex2, EveryThreadInWaitIdleWakesWhenTheLastTaskFinishes) {
    // Two threads are asleep in wait_idle before the last task finishes (checked in /proc, not
    // assumed), so the one moment the count reaches zero must wake both.
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    using ws::testing::slowdown;
    auto pool = std::make_unique<ThreadPool>(1);
    auto release = std::make_shared<std::atomic<bool>>(false);
    auto started = std::make_shared<std::atomic<bool>>(false);
    pool->spawn([release, started] {
        *started = true;
        ws::testing::wait_until([&] { return release->load(); }, 10s * slowdown());
    });
    ASSERT_TRUE(ws::testing::wait_until([&] { return started->load(); }, 10s * slowdown()));
    struct WaiterIds {
        std::atomic<ws::testing::ThreadId> id[2]{};
    };
    auto waiter_ids = std::make_shared<WaiterIds>();
    auto wait_on = [&pool = *pool, waiter_ids](int i) {
        return [&pool, waiter_ids, i] {
            waiter_ids->id[i] = ws::testing::current_thread_id();
            pool.wait_idle();
        };
    };
    ws::testing::DetachedCall first(wait_on(0)), second(wait_on(1));
    ASSERT_TRUE(ws::testing::wait_until(
        [&] { return waiter_ids->id[0].load() != 0 && waiter_ids->id[1].load() != 0; },
        10s * slowdown()));
    ASSERT_TRUE(ws::testing::wait_until_asleep({waiter_ids->id[0].load(), waiter_ids->id[1].load()},
                                               10s * slowdown()))
        << "the two threads in wait_idle did not go to sleep while a task was running";
    *release = true;  // the last task finishes: the count reaches zero once, for both
    const bool both = first.wait_for(2s * slowdown()) && second.wait_for(2s * slowdown());
    if (!both) {
        (void)pool.release();  // a thread still waits in it: leak it
        FAIL() << "one of two threads in wait_idle never returned: when the count reaches zero, "
                  "wake every waiter (notify_all), not one";
    }
}
