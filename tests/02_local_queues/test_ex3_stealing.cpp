// Lesson 02, exercise 3: an idle worker steals the oldest task of a random other worker.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/stress.hpp>
#include <ws/testing/task_trees.hpp>
#include <ws/testing/wait.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson02::ThreadPool;
using ws::testing::slowdown;
using ws::testing::wait_until;

TEST(Lesson02Ex3, WorkSpawnedByOneTaskIsRunByBothWorkers) {
    // One task spawns 64 children onto its worker's queue. Each child holds its worker until a
    // second thread has run a child too, so the children can only finish if the other worker
    // steals. Bounded once for all children (1 s, where 5 ms each gave the thief 320 ms in all):
    // the idle worker looks every 8 ms at most, so only a pool that never steals, or a thief kept
    // from a core for a whole second, fails.
    constexpr int kChildren = 64;
    std::mutex m;
    std::set<std::thread::id> threads;
    std::atomic<bool> gave_up{false};
    ThreadPool pool(2);
    pool.spawn([&] {
        for (int i = 0; i < kChildren; ++i) {
            pool.spawn([&] {
                {
                    std::lock_guard lock(m);
                    threads.insert(std::this_thread::get_id());
                }
                const bool met = wait_until(
                    [&] {
                        std::lock_guard lock(m);
                        return threads.size() >= 2 || gave_up.load();
                    },
                    1s * slowdown());
                if (!met) gave_up = true;
            });
        }
    });
    pool.wait_idle();
    const ws::PoolStats s = pool.stats();
    ASSERT_EQ(s.executed_per_worker.size(), 2u);
    EXPECT_GT(s.executed_per_worker[0], 0u);
    EXPECT_GT(s.executed_per_worker[1], 0u);
    EXPECT_GT(s.steals, 0u) << "the children sat on one worker's queue: the other worker must "
                               "steal them";
    EXPECT_EQ(s.stolen_tasks, s.steals) << "in lesson 02 every steal moves exactly one task";
    EXPECT_GE(s.steal_attempts, s.steals);
    EXPECT_EQ(s.executed(), 1u + kChildren);
}

TEST(Lesson02Ex3, IdleWorkersCountTheirFailedStealAttempts) {
    ThreadPool pool(2);
    pool.spawn([] {});
    pool.wait_idle();
    EXPECT_TRUE(wait_until([&] { return pool.stats().steal_attempts > 0; }, 2s * slowdown()))
        << "an idle worker looks in the other queues, and counts each try in steal_attempts";
    const ws::PoolStats s = pool.stats();
    EXPECT_GE(s.steal_attempts, s.steals);
}

TEST(Lesson02Ex3, EverySuccessfulStealCountsAsAnAttemptToo) {
    // steal_attempts counts every look at a victim, steals the looks that came back with a task:
    // so steal_attempts >= steals, and a steal is an attempt that succeeded. One worker holds a
    // thousand children on its queue and waits for them: the other steals every one, each with
    // one successful look and hardly a failed look among them. Counting only the failed looks as
    // attempts gives a few hundred at most (the idle looks of both workers around the test), far
    // fewer than the thousand steals.
    constexpr int kChildren = 1000;
    std::atomic<bool> queued{false};
    std::atomic<int> ran{0};
    ThreadPool pool(2);
    pool.spawn([&] {  // holds one worker until the children are queued
        wait_until([&] { return queued.load(); }, 10s * slowdown());
    });
    pool.spawn([&] {  // on the other worker: its children can only run by being stolen
        for (int i = 0; i < kChildren; ++i)
            pool.spawn([&] { ran.fetch_add(1); });
        queued = true;
        wait_until([&] { return ran.load() == kChildren; }, 2s * slowdown());
    });
    pool.wait_idle();
    const ws::PoolStats s = pool.stats();
    ASSERT_EQ(s.steals, static_cast<std::uint64_t>(kChildren))
        << "every child had to be stolen: its worker was busy waiting for them";
    EXPECT_GE(s.steal_attempts, s.steals)
        << "a steal is a look at a victim too: count every look in steal_attempts, the "
           "successful ones included";
}

TEST(Lesson02Ex3, AOneWorkerPoolNeverSteals) {
    // First the idle worker of a two-worker pool must count its looks at the other queue: a
    // pool that never looks (as given) would pass the check below without stealing at all.
    {
        ThreadPool two(2);
        two.spawn([] {});
        two.wait_idle();
        ASSERT_TRUE(wait_until([&] { return two.stats().steal_attempts > 0; }, 5s * slowdown()))
            << "in a two-worker pool, an idle worker never counted a look at the other's queue "
               "in steal_attempts: steal() must try every other worker";
    }
    ThreadPool pool(1);
    for (int i = 0; i < 100; ++i)
        pool.spawn([&pool] { pool.spawn([] {}); });
    pool.wait_idle();
    const ws::PoolStats s = pool.stats();
    EXPECT_EQ(s.steal_attempts, 0u) << "there is no other worker to steal from";
    EXPECT_EQ(s.steals, 0u);
}

TEST(Lesson02Ex3, EveryTaskRunsExactlyOnceWhileFourWorkersSteal) {
    // More workers than cores, random trees started from outside: every worker steals from
    // every other.
    constexpr std::size_t kTasks = 20'000;
    ThreadPool pool(4);
    std::uint64_t total_steals = 0;
    const auto rounds =
        ws::testing::stress(40, 5s * slowdown(), [&](std::mt19937_64& rng, std::uint64_t) {
            ws::testing::ExactlyOnce seen(kTasks);
            ws::testing::run_random_trees(pool, seen, rng);
            ASSERT_TRUE(seen.verify());
            total_steals = pool.stats().steals;
        });
    EXPECT_GT(rounds, 0u);
    EXPECT_GT(total_steals, 0u) << "four workers on random trees and not one steal";
}

TEST(Lesson02Ex3, AThiefTakesTheOldestTaskOfItsVictim) {
    // One task queues ten children on its worker's queue while the other worker is held up, then
    // keeps its own worker busy until a child has run: the first child to run was stolen, and a
    // thief takes the oldest task. Each child notes whether its parent still held its worker,
    // so a child that ran only after the parent gave up waiting does not count as stolen.
    constexpr int kChildren = 10;
    std::atomic<bool> queued{false};
    std::atomic<bool> parent_waiting{false};
    std::atomic<int> first{-1};
    std::atomic<bool> first_while_parent_waited{false};
    ThreadPool pool(2);
    pool.spawn([&] {  // holds one worker until the children are queued
        wait_until([&] { return queued.load(); }, 10s * slowdown());
    });
    pool.spawn([&] {
        parent_waiting = true;
        for (int i = 0; i < kChildren; ++i) {
            pool.spawn([&, i] {
                int none = -1;
                if (first.compare_exchange_strong(none, i))
                    first_while_parent_waited = parent_waiting.load();
            });
        }
        queued = true;
        wait_until([&] { return first.load() != -1; }, 10s * slowdown());
        parent_waiting = false;
    });
    pool.wait_idle();
    const ws::PoolStats s = pool.stats();
    ASSERT_TRUE(first_while_parent_waited.load() && s.steals > 0)
        << "no child ran while its parent held its worker (" << s.steals
        << " steals): the idle worker must steal from the parent's worker's queue";
    EXPECT_EQ(first.load(), 0) << "the thief took child " << first.load() << " of 0.."
                               << kChildren - 1
                               << ": steal the victim's oldest task (the front), not its newest";
}
