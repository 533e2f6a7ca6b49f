// Lesson 01, exercise 3: orderly shutdown. These tests do not use wait_idle.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson01::ThreadPool;
using ws::testing::slowdown;
using ws::testing::wait_until;

TEST(Lesson01Ex3, DestructorRunsEveryQueuedTask) {
    std::atomic<int> ran{0};
    std::atomic<bool> gate{false};
    std::atomic<bool> blocker_started{false};
    {
        ThreadPool pool(1);
        // The only worker is held up, so the next 1000 tasks are still queued at destruction.
        pool.spawn([&] {
            blocker_started = true;
            wait_until([&] { return gate.load(); }, 10s * slowdown());
            ran.fetch_add(1);
        });
        ASSERT_TRUE(wait_until([&] { return blocker_started.load(); }, 10s * slowdown()));
        for (int i = 0; i < 1000; ++i)
            pool.spawn([&] { ran.fetch_add(1); });
        gate = true;
    }  // ~ThreadPool
    EXPECT_EQ(ran.load(), 1001) << "the destructor must run every task queued before it";
}

TEST(Lesson01Ex3, TasksSpawnedWhileDrainingAlsoRun) {
    std::atomic<int> ran{0};
    std::atomic<bool> gate{false};
    std::atomic<bool> blocker_started{false};
    {
        ThreadPool pool(1);
        pool.spawn([&] {
            blocker_started = true;
            wait_until([&] { return gate.load(); }, 10s * slowdown());
        });
        ASSERT_TRUE(wait_until([&] { return blocker_started.load(); }, 10s * slowdown()));
        for (int i = 0; i < 100; ++i) {
            pool.spawn([&] {
                ran.fetch_add(1);
                pool.spawn([&] { ran.fetch_add(1); });
            });
        }
        gate = true;
    }
    EXPECT_EQ(ran.load(), 200);
}

TEST(Lesson01Ex3, DestroyingAnIdlePoolIsPrompt) {
    // The pool first runs a task, then its workers go to sleep (checked in /proc where there is
    // one): only then is "destroyed at once" about waking sleepers, not about workers that left
    // or never started.
    const auto before = ws::testing::thread_ids();
    std::optional<ThreadPool> pool(std::in_place, 2);
    const auto workers = ws::testing::new_threads(before);
    std::atomic<bool> ran{false};
    pool->spawn([&] { ran = true; });
    ASSERT_TRUE(wait_until([&] { return ran.load(); }, 10s * slowdown()))
        << "a task spawned into the pool never ran (exercise 1)";
    if (ws::testing::kCanSteerThreads) {
        ASSERT_TRUE(workers.size() == 2 &&
                    ws::testing::wait_until_asleep(workers, 10s * slowdown()))
            << "the 2 workers of the idle pool did not go to sleep, or left (exercise 1): a "
               "worker waits for work while the pool is not stopping";
    } else {
        std::this_thread::sleep_for(20ms);  // let the workers go to sleep
    }
    const auto t0 = std::chrono::steady_clock::now();
    pool.reset();
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_LT(took, 100ms * slowdown())
        << "destroying a pool whose workers slept took "
        << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
        << " ms: sleeping workers must wake as soon as the pool stops (woken by the destructor, "
           "their wait looking at stopping_), not be waited out";
}

TEST(Lesson01Ex3, DestroyingAPoolWakesEverySleepingWorker) {
    // Three workers, all asleep (checked in /proc): the destructor must wake every one of them.
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    const auto before = ws::testing::thread_ids();
    auto pool = std::make_unique<ThreadPool>(3);
    const auto workers = ws::testing::new_threads(before);
    ASSERT_EQ(workers.size(), 3u);
    ASSERT_TRUE(ws::testing::wait_until_asleep(workers, 10s * slowdown()))
        << "the workers of an idle pool did not go to sleep";
    // On a thread of its own: if it hangs, it hangs there, and the pool is never freed.
    const bool destroyed =
        ws::testing::run_within(2s * slowdown(), [p = pool.release()] { delete p; });
    EXPECT_TRUE(destroyed) << "the destructor of a pool whose workers slept did not return: wake "
                              "every sleeping worker (notify_all), not one";
}
