// Lesson 03, exercise 3: the pool's thieves steal half of a victim's queue in one operation,
// and run one task of the batch. Everything lesson 02 promised still holds.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/pool_checks.hpp>
#include <ws/testing/stress.hpp>
#include <ws/testing/task_trees.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson03::ThreadPool;
using ws::testing::slowdown;

namespace {
// Keeps its worker busy for about `d` without sleeping, so that others must steal to help.
void busy_for(std::chrono::microseconds d) {
    const auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) {
    }
}
}  // namespace

TEST(Lesson03Ex3, AStealMovesABatchNotOneTask) {
    // One task spawns 1,000 tasks onto its worker's queue; the other worker can only get work
    // by stealing. Taking half each time, it needs a handful of steals, not hundreds.
    constexpr int kChildren = 1000;
    ThreadPool pool(2);
    pool.spawn([&] {
        for (int i = 0; i < kChildren; ++i)
            pool.spawn([] { busy_for(20us); });
    });
    pool.wait_idle();
    const ws::PoolStats s = pool.stats();
    ASSERT_GT(s.steals, 0u) << "the other worker never stole anything";
    const double per_steal = static_cast<double>(s.stolen_tasks) / static_cast<double>(s.steals);
    RecordProperty("steals", static_cast<int>(s.steals));
    RecordProperty("stolen_tasks", static_cast<int>(s.stolen_tasks));
    EXPECT_GE(per_steal, 2.0) << s.stolen_tasks << " tasks moved in " << s.steals
                              << " steals: a steal should move half of the victim's queue";
    EXPECT_EQ(s.executed(), 1u + kChildren);
}

TEST(Lesson03Ex3, EveryTaskRunsExactlyOnceWhileEveryWorkerStealsFromEveryOther) {
    // Four workers on two cores, random trees started from outside: every worker steals
    // batches from every other, and batches get stolen again from their thieves.
    constexpr std::size_t kTasks = 20'000;
    ThreadPool pool(4);
    const auto rounds =
        ws::testing::stress(40, 5s * slowdown(), [&](std::mt19937_64& rng, std::uint64_t) {
            ws::testing::ExactlyOnce seen(kTasks);
            ws::testing::run_random_trees(pool, seen, rng);
            ASSERT_TRUE(seen.verify());
        });
    EXPECT_GT(rounds, 0u);
    const ws::PoolStats s = pool.stats();
    EXPECT_GT(s.steals, 0u);
    EXPECT_GE(s.stolen_tasks, s.steals);
    EXPECT_GE(s.steal_attempts, s.steals);
}

TEST(Lesson03Ex3, TheSpawnTreeCountsExactly) {
    constexpr unsigned kDepth = 15;  // 65,535 tasks
    for (std::size_t workers : {1, 2, 4}) {
        EXPECT_EQ(ws::testing::count_binary_tree<ThreadPool>(workers, kDepth),
                  ws::testing::binary_tree_nodes(kDepth))
            << "with " << workers << " workers";
    }
}

TEST(Lesson03Ex3, TheDestructorRunsStolenBatchesToo) {
    std::atomic<int> ran{0};
    {
        ThreadPool pool(3);
        pool.spawn([&] {
            for (int i = 0; i < 3000; ++i) {
                pool.spawn([&] {
                    busy_for(1us);
                    ran.fetch_add(1);
                });
            }
        });
    }  // ~ThreadPool
    EXPECT_EQ(ran.load(), 3000);
}

TEST(Lesson03Ex3, WaitIdleWaitsForAParentThatOutlivesItsChild) {
    for (std::size_t workers : {2, 3}) {
        ThreadPool pool(workers);
        for (int round = 0; round < 20; ++round) {
            EXPECT_TRUE(ws::testing::wait_idle_waits_for_a_parent_that_outlives_its_child(
                pool, 5ms, round % 2 == 1))
                << "wait_idle returned while a task was still running (" << workers
                << " workers): its child finished first, and the parent was no longer counted";
        }
    }
}

TEST(Lesson03Ex3, WaitIdleFromInsideATaskIsStillALogicError) {
    ThreadPool pool(2);
    EXPECT_EQ(ws::testing::call_wait_idle_from_a_task(pool),
              ws::testing::WaitIdleFromTask::kLogicError);
}

TEST(Lesson03Ex3, AnIdlePoolSleeps) {
    // Lesson 02's backoff, unchanged: under 2 % of a core over 500 ms.
    ThreadPool pool(2);
    const auto used = ws::testing::idle_cpu_seconds(pool, 50ms, 500ms);
    ASSERT_TRUE(used.has_value()) << "a spawned task never ran";
    EXPECT_LT(*used, 0.02 * 0.5 * slowdown())
        << "the idle pool used " << *used * 1000 << " ms of CPU in 500 ms";
}
