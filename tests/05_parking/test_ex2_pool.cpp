// Lesson 05, exercise 2: the pool with the event count — idle workers sleep, and a spawn from
// outside wakes one, every time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>

#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

#include "exercises.hpp"
#include "parking_helpers.hpp"

using namespace std::chrono_literals;
using lesson05_test::pool_config;
using ws::testing::slowdown;

TEST(Lesson05Ex2, PoolRunsEveryTaskExactlyOnce) {
    ws::testing::parking::check_exactly_once<lesson05_test::Pool>(pool_config(2, false));
}

TEST(Lesson05Ex2, AnIdlePoolUsesUnderTwoPercentOfACore) {
    ws::testing::parking::check_idle_cpu<lesson05_test::Pool>(pool_config(2, false));
}

TEST(Lesson05Ex2, TwentyThousandIdleToSpawnRoundsWithoutAMiss) {
    ws::testing::parking::check_wake_rounds<lesson05_test::Pool>(pool_config(2, false), 20'000);
}

TEST(Lesson05Ex2, TwoLongTasksSpawnedTogetherRunAtTheSameTime) {
    ws::testing::parking::check_two_long_tasks<lesson05_test::Pool>(pool_config(2, false));
}

TEST(Lesson05Ex2, ParksAndWakeupsAreCounted) {
    ws::lesson05::ThreadPool pool(pool_config(2, false));
    ASSERT_TRUE(ws::testing::parking::wait_until_all_asleep(pool));
    const auto before = pool.stats();
    EXPECT_GE(before.parks, 2u);
    pool.spawn([] {});
    pool.wait_idle();
    ASSERT_TRUE(ws::testing::parking::wait_until_all_asleep(pool));
    const auto after = pool.stats();
    EXPECT_GE(after.wakeups, before.wakeups + 1);
    EXPECT_GE(after.parks, before.parks + 1);
}

TEST(Lesson05Ex2, ASpawnIntoAPoolOfSleepingWorkersIsNotLost) {
    // A wake-up that comes before the task is published, forced rather than left to timing:
    // the workers asleep, the spawning thread pinned to their CPU with SCHED_IDLE, so a worker
    // its notify wakes runs before the spawn goes on (and, finding nothing, parks again). The
    // scheduler does not always switch at once on a busy machine: up to 8 attempts.
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc, sched_setscheduler)";
    const auto before = ws::testing::thread_ids();
    auto pool = std::make_unique<ws::lesson05::ThreadPool>(pool_config(2, false));
    const auto workers = ws::testing::new_threads(before);
    ASSERT_EQ(workers.size(), 2u);
    const int cpu = ws::testing::a_cpu_of_this_thread();
    for (const auto tid : workers) {
        ws::testing::pin_to_cpu(tid, cpu);
        ws::testing::request_short_slice(tid);
    }
    for (int attempt = 1; attempt <= 8; ++attempt) {
        ASSERT_TRUE(ws::testing::wait_until_asleep(workers, 10s * slowdown()))
            << "the workers of an idle pool did not go to sleep";
        auto ran = std::make_shared<std::atomic<bool>>(false);
        ws::testing::DetachedCall spawner([&pool = *pool, cpu, ran] {
            ws::testing::call_born_idle_on(cpu, [&] { pool.spawn([ran] { *ran = true; }); });
        });
        ASSERT_TRUE(spawner.wait_for(10s * slowdown())) << "spawn did not return";
        if (const auto error = spawner.error()) std::rethrow_exception(error);
        if (!ws::testing::wait_until([&] { return ran->load(); }, 1s * slowdown())) {
            (void)pool.release();  // its destructor would drain a task nobody runs: leak it
            FAIL() << "a task spawned into a pool of sleeping workers never ran (attempt "
                   << attempt
                   << "): was a worker woken before the task was published? Publish "
                      "first, then notify";
        }
    }
}
