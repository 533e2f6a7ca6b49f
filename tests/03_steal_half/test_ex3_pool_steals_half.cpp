// Lesson 03, exercise 3: the pool's thieves steal half of a victim's queue in one operation,
// and run one task of the batch. Everything lesson 02 promised still holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/pool_checks.hpp>
#include <ws/testing/stress.hpp>
#include <ws/testing/task_trees.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>

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

namespace {
// One task queues four children on its worker's queue while the other worker is held up, then
// holds its own worker until they have all run: the other worker gets them only by stealing,
// half of the queue each time, so 2, then 1, then 1 (three steals, four stolen tasks). Both
// workers look at each other's empty queue at least once before wait_idle returns: a worker
// reports its finished tasks only after a round that found nothing, steal attempts included.
ws::PoolStats four_children_of_a_busy_worker_stolen() {
    ThreadPool two(2);
    std::atomic<bool> queued{false};
    std::atomic<int> children_ran{0};
    two.spawn([&] { ws::testing::wait_until([&] { return queued.load(); }, 10s * slowdown()); });
    two.spawn([&] {
        for (int i = 0; i < 4; ++i)
            two.spawn([&] { children_ran.fetch_add(1); });
        queued = true;
        ws::testing::wait_until([&] { return children_ran.load() == 4; }, 10s * slowdown());
    });
    two.wait_idle();
    return two.stats();
}
}  // namespace

TEST(Lesson03Ex3, OnlyALookThatMovesTasksCountsAsASteal) {
    // Exact counts, whatever the timing: the thief's three steals move 2, 1 and 1 tasks, and
    // each worker's last look at the other's empty queue is an attempt, not a steal.
    const ws::PoolStats s = four_children_of_a_busy_worker_stolen();
    EXPECT_EQ(s.stolen_tasks, 4u) << "every task a steal moved counts in stolen_tasks";
    EXPECT_EQ(s.steals, 3u)
        << "4 children queued by a busy worker leave it in 3 steals (2, 1 and 1 tasks); counted: "
        << s.steals << " steals of " << s.steal_attempts
        << " attempts. A look at a victim counts as a steal only if it moved tasks";
    EXPECT_GT(s.steal_attempts, s.steals) << "the workers' looks at empty queues are attempts";
}

TEST(Lesson03Ex3, EveryTaskRunsExactlyOnceWhileEveryWorkerStealsFromEveryOther) {
    // Four workers on two cores, random trees started from outside: every worker steals
    // batches from every other, and batches get stolen again from their thieves.
    constexpr std::size_t kTasks = 20'000;
    ThreadPool pool(4);
    // Beside busy processes a worker may get its core too rarely to steal in 40 rounds (seen
    // once at load average 9 on 2 cores): stress on, for up to 20 s, until some steal happened.
    std::uint64_t rounds = 0;
    const auto until = std::chrono::steady_clock::now() + 20s * slowdown();
    do {
        rounds +=
            ws::testing::stress(40, 5s * slowdown(), [&](std::mt19937_64& rng, std::uint64_t) {
                ws::testing::ExactlyOnce seen(kTasks);
                ws::testing::run_random_trees(pool, seen, rng);
                ASSERT_TRUE(seen.verify());
            });
        if (HasFatalFailure()) return;
    } while (pool.stats().steals == 0 && std::chrono::steady_clock::now() < until);
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

namespace {

// What the test below shares with the task whose moves it watches.
struct Watch {
    std::atomic<ws::testing::ThreadId> owner{0};  // the worker that spawned the task
    std::vector<ws::testing::ThreadId> workers;   // the pool's three workers
    std::atomic<ws::testing::ThreadId> thief{0};  // the first other thread that moved it
    std::atomic<int> thief_moves{0};
    std::atomic<bool> set_up{false};               // the second thief waited on the first's queue
    std::atomic<ws::testing::ThreadId> runner{0};  // the worker that ran it
    std::atomic<bool> ran{false};
};

// Does nothing when run. Moving it is how the test sees a steal: the first thief moves it out
// of the owner's queue (its batch), then into its own queue. In that second move the thief holds
// its own queue's lock; the move pins the thief and the third worker to one CPU, gives the thief
// SCHED_IDLE (and the third worker a short slice) and waits until the third worker is blocked
// on that lock. When the thief unlocks,
// the third worker preempts it at once and steals the batch back out of the thief's queue,
// before the thief's next step: the pop that takes one task of its batch to run.
struct StolenTwice {
    std::shared_ptr<Watch> watch;

    explicit StolenTwice(std::shared_ptr<Watch> w) : watch(std::move(w)) {}
    StolenTwice(StolenTwice&& other) noexcept : watch(std::move(other.watch)) {
        if (!watch || watch->owner.load() == 0) return;
        const auto me = ws::testing::current_thread_id();
        if (me == watch->owner.load()) return;
        ws::testing::ThreadId none = 0;
        watch->thief.compare_exchange_strong(none, me);
        if (watch->thief.load() != me || watch->thief_moves.fetch_add(1) != 1) return;
        // The thief's second move: into its own queue, under that queue's lock.
        ws::testing::ThreadId third = 0;
        for (const auto tid : watch->workers) {
            if (tid != me && tid != watch->owner.load()) third = tid;
        }
        const int cpu = ws::testing::a_cpu_of_this_thread();
        ws::testing::pin_to_cpu(third, cpu);
        ws::testing::request_short_slice(third);
        ws::testing::pin_to_cpu(me, cpu);
        ws::testing::make_idle_priority(me);
        watch->set_up =
            ws::testing::wait_until_all({third}, ws::testing::blocked_on_futex, 5s * slowdown(), 5);
    }
    StolenTwice& operator=(StolenTwice&&) = delete;
    void operator()() const {
        watch->runner = ws::testing::current_thread_id();
        watch->ran = true;
    }
};

}  // namespace

TEST(Lesson03Ex3, AThiefWhoseBatchIsStolenBeforeItRunsOneGoesOn) {
    // A task queues one child on its worker's queue and waits for it to run elsewhere: a thief
    // steals it (a batch of one) into its own queue, and before the thief pops it to run it,
    // the third worker steals it from there (forced: see StolenTwice). The thief's pop finds
    // nothing; it must go on looking, not assume its batch is still there. On a busy machine the
    // scheduler does not always switch at once, so the test tries up to 5 times.
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc, sched_setscheduler)";
    // First, that a steal moves a batch into the thief's queue at all: a pool that steals one
    // task at a time (as given) runs it at once, leaves no batch to be robbed, and would pass
    // the rest of this test without checking anything. One task queues four children on its
    // worker's queue while the other worker is held up, then holds its own worker until they
    // have all run: the other worker's first steal takes two (half, rounded up), so the four
    // move in fewer than four steals.
    {
        const ws::PoolStats s = four_children_of_a_busy_worker_stolen();
        ASSERT_TRUE(s.stolen_tasks == 4 && s.steals < 4)
            << "4 children queued by a busy worker: " << s.stolen_tasks << " stolen in " << s.steals
            << " steals: a steal must move half of the victim's queue (rounded up) into the "
               "thief's own queue";
    }
    int set_up = 0;
    for (int attempt = 1; attempt <= 5; ++attempt) {
        const auto before = ws::testing::thread_ids();
        ThreadPool pool(3);
        auto watch = std::make_shared<Watch>();
        watch->workers = ws::testing::new_threads(before);
        ASSERT_EQ(watch->workers.size(), 3u);
        pool.spawn([&pool, watch] {
            watch->owner = ws::testing::current_thread_id();
            pool.spawn(StolenTwice(watch));
            ws::testing::wait_until([&] { return watch->ran.load(); }, 10s * slowdown());
        });
        pool.wait_idle();
        ASSERT_TRUE(watch->ran.load()) << "the child never ran";
        set_up += watch->set_up.load() ? 1 : 0;
        const ws::testing::ThreadId runner = watch->runner.load();
        if (runner != watch->owner.load() && runner != watch->thief.load()) {
            // The batch was robbed: the thief moved the child out of the owner's queue, and the
            // worker that ran it moved it out of the thief's. Two steals at least, each of the one
            // task there is to steal, whether or not the thief found its batch still there. The
            // thief (SCHED_IDLE) may not have reached its counters yet: wait for them, briefly.
            ws::PoolStats s;
            const bool counted = ws::testing::wait_until(
                [&] {
                    s = pool.stats();
                    return s.steals >= 2 && s.stolen_tasks == s.steals;
                },
                2s * slowdown());
            ASSERT_TRUE(counted)
                << "a child stolen from its owner's worker and then from its thief counted as "
                << s.steals << " steals moving " << s.stolen_tasks
                << " tasks: a steal that moved a batch counts (and its tasks in stolen_tasks), "
                   "even if the batch was robbed before the thief could run one of it";
        }
    }
    if (set_up == 0) {
        // Not a skip: a skip grades the exercise as not done, and a correct design can land
        // here (a steal that locks both queues at once moves each task once, so there is no
        // second move to hold the thief in). What could be checked was: the batch, the child.
        ::testing::Test::RecordProperty("race_set_up", "no");
        std::printf(
            "[note] the third worker never waited on the thief's queue in 5 attempts (a steal "
            "that moves each task straight into the thief's queue gives it no moment to): the "
            "robbed-batch race was not checked; the batch and the child's run were\n");
    }
}
