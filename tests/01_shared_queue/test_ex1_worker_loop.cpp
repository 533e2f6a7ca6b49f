// Lesson 01, exercise 1: spawn and the worker loop. These tests do not use wait_idle
// (exercise 2): they poll a counter with a deadline instead.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/wait.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson01::ThreadPool;
using ws::testing::slowdown;
using ws::testing::wait_until;

TEST(Lesson01Ex1, ZeroWorkersIsAnError) {
    EXPECT_THROW(ThreadPool pool(0), std::invalid_argument);
}

TEST(Lesson01Ex1, EveryTaskFromFourOutsideThreadsRunsExactlyOnce) {
    constexpr std::size_t kThreads = 4, kPerThread = 25'000;
    ws::testing::ExactlyOnce seen(kThreads * kPerThread);
    std::atomic<std::size_t> finished{0};
    ThreadPool pool(2);
    std::vector<std::thread> spawners;
    for (std::size_t t = 0; t < kThreads; ++t) {
        spawners.emplace_back([&, t] {
            for (std::size_t i = 0; i < kPerThread; ++i) {
                pool.spawn([&, item = t * kPerThread + i] {
                    seen.mark(item);
                    finished.fetch_add(1, std::memory_order_release);
                });
            }
        });
    }
    for (auto& s : spawners)
        s.join();
    ASSERT_TRUE(wait_until([&] { return finished.load(std::memory_order_acquire) == seen.size(); },
                           20s * slowdown()))
        << "only " << finished.load() << " of " << seen.size() << " tasks ran";
    EXPECT_TRUE(seen.verify());
}

TEST(Lesson01Ex1, TasksSpawnedByTasksRun) {
    std::atomic<int> ran{0};
    ThreadPool pool(2);
    pool.spawn([&] {
        ran.fetch_add(1);
        for (int i = 0; i < 10; ++i) {
            pool.spawn([&] {
                ran.fetch_add(1);
                for (int j = 0; j < 10; ++j)
                    pool.spawn([&] { ran.fetch_add(1); });
            });
        }
    });
    EXPECT_TRUE(wait_until([&] { return ran.load() == 111; }, 10s * slowdown()))
        << ran.load() << " of 111 tasks ran";
}

TEST(Lesson01Ex1, TwoWorkersRunTwoTasksAtTheSameTime) {
    // Each task waits (bounded) until both are running: only two workers at once can do it.
    std::atomic<int> arrived{0};
    std::atomic<int> met{0};
    ThreadPool pool(2);
    for (int i = 0; i < 2; ++i) {
        pool.spawn([&] {
            arrived.fetch_add(1);
            if (wait_until([&] { return arrived.load() == 2; }, 5s * slowdown())) met.fetch_add(1);
        });
    }
    ASSERT_TRUE(wait_until([&] { return arrived.load() == 2; }, 10s * slowdown()));
    EXPECT_TRUE(wait_until([&] { return met.load() == 2; }, 10s * slowdown()))
        << "the two tasks did not overlap: do both workers take tasks?";
}

TEST(Lesson01Ex1, AnIdlePoolSleeps) {
    // Workers must sleep on the condition variable, not spin: under 2 % of a core over 500 ms.
    std::atomic<bool> ran{false};
    ThreadPool pool(2);
    pool.spawn([&] { ran = true; });
    ASSERT_TRUE(wait_until([&] { return ran.load(); }, 10s * slowdown()));
    std::this_thread::sleep_for(50ms);
    const double before = ws::testing::process_cpu_seconds();
    std::this_thread::sleep_for(500ms);
    const double used = ws::testing::process_cpu_seconds() - before;
    EXPECT_LT(used, 0.02 * 0.5) << "the idle pool used " << used * 1000
                                << " ms of CPU in 500 ms: a worker is busy-waiting";
}
