// Lesson 06, exercise 4: spawning through the injector — spawns from outside the pool go into
// the injector, and a worker takes a batch of them into its own deque.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/harness.hpp>
#include <ws/testing/parking_checks.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson06::Config;
using ws::lesson06::ThreadPool;

namespace {
Config workers(std::size_t n) {
    Config c;
    c.num_workers = n;
    return c;
}

// The parking tests below check that a worker's recheck before it sleeps sees the injector.
// The starter's stand-in queue already parks correctly, so they mean something only once spawns
// from outside go through the injector: this comes first in each.
void expect_outside_spawns_use_the_injector() {
    ThreadPool pool(workers(1));
    pool.spawn([] {});
    pool.wait_idle();
    ASSERT_GT(pool.stats().injector_takes, 0u)
        << "a spawn from outside did not come through the injector (exercise 4): the parking "
           "checks of this test only mean something once it does";
}
}  // namespace

TEST(Lesson06Ex4, SpawnsFromEightOutsideThreadsRunExactlyOnce) {
    constexpr std::size_t kThreads = 8, kPerThread = 10'000;
    ws::testing::ExactlyOnce seen(kThreads * kPerThread);
    ThreadPool pool(workers(2));
    std::vector<std::thread> spawners;
    for (std::size_t t = 0; t < kThreads; ++t) {
        spawners.emplace_back([&, t] {
            for (std::size_t i = 0; i < kPerThread; ++i)
                pool.spawn([&seen, item = t * kPerThread + i] { seen.mark(item); });
        });
    }
    for (auto& s : spawners)
        s.join();
    pool.wait_idle();
    EXPECT_TRUE(seen.verify());
    const ws::PoolStats s = pool.stats();
    EXPECT_EQ(s.executed(), seen.size());
    EXPECT_GT(s.injector_takes, 0u) << "outside spawns must go through the injector";
    EXPECT_LE(s.injector_takes, seen.size());
}

TEST(Lesson06Ex4, AWorkerTakesABatchFromTheInjector) {
    // The only worker is held up while 1,000 tasks are injected; then it takes them in
    // batches, so it needs far fewer takes than tasks.
    ThreadPool pool(workers(1));
    std::atomic<bool> gate{false};
    pool.spawn([&] { ws::testing::wait_until([&] { return gate.load(); }, 10s); });
    for (int i = 0; i < 1000; ++i)
        pool.spawn([] {});
    const std::uint64_t before = pool.stats().injector_takes;
    gate = true;
    pool.wait_idle();
    const std::uint64_t takes = pool.stats().injector_takes - before;
    EXPECT_GT(takes, 0u) << "the tasks did not come from the injector";
    EXPECT_LT(takes, 200u) << takes << " takes for 1,000 injected tasks: no batches?";
}

TEST(Lesson06Ex4, TasksSpawnedByTasksStayLocal) {
    ThreadPool pool(workers(2));
    std::atomic<int> ran{0};
    pool.spawn([&] {
        for (int i = 0; i < 1000; ++i)
            pool.spawn([&] { ran.fetch_add(1); });
    });
    pool.wait_idle();
    EXPECT_EQ(ran.load(), 1000);
    EXPECT_LE(pool.stats().injector_takes, 1u) << "spawns from a worker belong in its own deque";
}

// The parking protocol with the injector: the recheck of a worker about to sleep must look at
// the injector, or a spawn from outside can be lost.
TEST(Lesson06Ex4, AnIdlePoolUsesUnderTwoPercentOfACore) {
    ASSERT_NO_FATAL_FAILURE(expect_outside_spawns_use_the_injector());
    ws::testing::parking::check_idle_cpu<ThreadPool>(workers(2));
}

TEST(Lesson06Ex4, TwentyThousandIdleToSpawnRoundsWithoutAMiss) {
    ASSERT_NO_FATAL_FAILURE(expect_outside_spawns_use_the_injector());
    ws::testing::parking::check_wake_rounds<ThreadPool>(workers(2), 20'000);
}

TEST(Lesson06Ex4, DestroyingAParkedPoolIsPrompt) {
    ASSERT_NO_FATAL_FAILURE(expect_outside_spawns_use_the_injector());
    ws::testing::parking::check_prompt_destruction<ThreadPool>(workers(2), 100ms);
}

// A worker's last search before it sleeps looks at the injector, then visits every other
// worker's deque, then announces its sleep and rechecks. A task injected after that look and
// before the announcement finds the worker still searching, so spawn wakes nobody: only the
// recheck can see the task. No call of the test can stop the worker there, so the test aims at
// the visits: with 256 workers they take microseconds, and stats() counts each one
// (steal_attempts). One task wakes the only worker to run; it runs it, searches (255 visits),
// searches again (the look, then 255 visits) and sleeps. The test injects its task as soon as
// it sees the second search's first visit. It needs the worker and itself to run at the same
// time: the workers run on one CPU, with a short time slice (so that a woken worker does not
// wait behind a busy process there), and the spawning thread on another.
TEST(Lesson06Ex4, ATaskInjectedDuringAWorkersLastSearchRuns) {
    ASSERT_NO_FATAL_FAILURE(expect_outside_spawns_use_the_injector());
    constexpr std::size_t kWorkers = 256;
    constexpr int kAttempts = 100;
    std::atomic<int> started{0};  // before the pool: its destructor may run a lost task
    const auto before = ws::testing::thread_ids();
    ThreadPool pool(Config{.num_workers = kWorkers, .local_queue_capacity = 2});
    const auto tids = ws::testing::new_threads(before);
    const std::vector<int> cpus = ws::testing::cpus_of_this_thread(2);
    for (const auto tid : tids) {
        if (cpus.size() == 2) ws::testing::pin_to_cpu(tid, cpus[1]);
        ws::testing::request_short_slice(tid);
    }
    // The spawning thread: not this one, whose CPU mask the later tests of this process inherit.
    std::thread spawner([&] {
        if (cpus.size() == 2) ws::testing::pin_to_cpu(ws::testing::current_thread_id(), cpus[0]);
        using ws::testing::parking::wait_until_all_asleep;
        for (int attempt = 1; attempt <= kAttempts; ++attempt) {
            ASSERT_TRUE(wait_until_all_asleep(pool)) << "the workers of an idle pool did not sleep";
            const std::uint64_t last_search = pool.stats().steal_attempts + kWorkers;
            pool.spawn([] {});
            const auto spawned = std::chrono::steady_clock::now();
            while (pool.stats().steal_attempts < last_search) {
                ASSERT_TRUE(std::chrono::steady_clock::now() - spawned <
                            10s * ws::testing::slowdown())
                    << "the worker woken for a task did not search twice before sleeping";
            }
            pool.spawn([&] { started.fetch_add(1); });
            // A lost wake-up is a state: the task not started while every worker sleeps (in the
            // parker's count and in /proc) and none has woken, for 20 ms. A worker woken for it
            // is runnable at once, and one that ran it and slept again counts a wake-up. The
            // task is looked at after each look at the workers: one that ran meanwhile counts.
            const auto injected = std::chrono::steady_clock::now();
            auto asleep_since = injected;
            std::uint64_t wakeups = pool.stats().wakeups;
            for (;;) {
                const auto now = std::chrono::steady_clock::now();
                const ws::PoolStats s = pool.stats();
                const bool all_asleep =
                    s.parks - s.wakeups == kWorkers && s.wakeups == wakeups &&
                    (!ws::testing::kCanSteerThreads ||
                     std::all_of(tids.begin(), tids.end(), ws::testing::asleep));
                if (started.load() >= attempt) break;
                if (!all_asleep) {
                    asleep_since = std::chrono::steady_clock::now();
                    wakeups = s.wakeups;
                }
                ASSERT_TRUE(now - asleep_since < 20ms)
                    << "attempt " << attempt << ": a task injected while the last awake worker "
                    << "was on its last search never started, and every worker went to sleep (a "
                    << "lost wake-up): does the recheck before sleeping look at the injector?";
                ASSERT_TRUE(now - injected < 10s * ws::testing::slowdown())
                    << "attempt " << attempt << ": the injected task did not start within 10 s";
                std::this_thread::yield();
            }
        }
    });
    spawner.join();
}
