// Lesson 01, exercise 3: orderly shutdown. These tests do not use wait_idle.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include <ws/testing/latency.hpp>
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
    // The pool first runs a task on each worker, then its workers go to sleep (checked in /proc
    // where there is one): only then is "destroyed at once" about waking sleepers, not about
    // workers that left or never started. Under 100 ms, timed from the call to the destructor's
    // return, less the time the worker that ended last, and then this thread, waited, runnable,
    // for a core (<ws/testing/latency.hpp>): beside busy processes a worker woken at once can
    // wait longer than that for a core. A worker left asleep is all counted. The two tasks leave
    // a probe in their workers (EndProbes) that reads those figures as each worker ends.
    const auto bound = 100ms * slowdown();
    const auto took =
        ws::testing::measure_until_clear(bound, [&]() -> std::optional<ws::testing::Latency> {
            const auto before = ws::testing::thread_ids();
            std::optional<ThreadPool> pool(std::in_place, 2);
            const auto workers = ws::testing::new_threads(before);
            ws::testing::EndProbes probes;
            if (!probes.arm(*pool, 2)) {
                ADD_FAILURE() << "two tasks that wait for each other did not both run, each on a "
                                 "worker of its own (exercise 1)";
                return std::nullopt;
            }
            if (ws::testing::kCanSteerThreads) {
                if (workers.size() != 2 ||
                    !ws::testing::wait_until_asleep(workers, 10s * slowdown())) {
                    ADD_FAILURE() << "the 2 workers of the idle pool did not go to sleep, or left "
                                     "(exercise 1): a worker waits for work while the pool is "
                                     "not stopping";
                    return std::nullopt;
                }
            } else {
                std::this_thread::sleep_for(20ms);  // let the workers go to sleep
            }
            return ws::testing::time_to_destroy(probes, [&] { pool.reset(); });
        });
    ASSERT_TRUE(took.has_value());
    ws::testing::LatencyRecord().add(*took);
    EXPECT_LT(took->left(), bound)
        << "destroying a pool whose workers slept took " << describe(*took)
        << ": sleeping workers must wake as soon as the pool stops (woken by the destructor, "
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
