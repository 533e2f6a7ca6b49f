// Lesson 04, exercise 5: the pool on Chase-Lev deques. Lesson 03's pool, with each worker's
// locked queue replaced by a ChaseLevDeque<Task*>; everything the earlier lessons promised
// still holds, and a thief still moves a batch — one CAS per task.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/pool_checks.hpp>
#include <ws/testing/stress.hpp>
#include <ws/testing/task_trees.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson04::Config;
using ws::lesson04::ThreadPool;
using ws::testing::slowdown;

namespace {
// Keeps its worker busy for about `d` without sleeping, so that others must steal to help.
void busy_for(std::chrono::microseconds d) {
    const auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) {
    }
}

// Counts how many copies of it are alive: a task capturing one shows whether the task (and
// the Task object holding it) was destroyed.
struct Alive {
    std::atomic<int>* count;
    explicit Alive(std::atomic<int>* c) : count(c) { count->fetch_add(1); }
    Alive(const Alive& o) : count(o.count) { count->fetch_add(1); }
    Alive& operator=(const Alive&) = delete;
    ~Alive() { count->fetch_sub(1); }
};
}  // namespace

TEST(Lesson04Ex5, ConfigHasDocumentedDefaults) {
    const Config c;
    EXPECT_GE(c.num_workers, 1u);
    EXPECT_EQ(c.num_workers, std::max(1u, std::thread::hardware_concurrency()));
    EXPECT_EQ(c.local_queue_capacity, 256u);
    EXPECT_EQ(c.max_steal_batch, 16u);
    ThreadPool pool(Config{.num_workers = 3, .local_queue_capacity = 2, .max_steal_batch = 2});
    EXPECT_EQ(pool.num_workers(), 3u);
    std::atomic<int> ran{0};
    pool.spawn([&] {
        for (int i = 0; i < 1000; ++i)  // far beyond the initial capacity: the deque grows
            pool.spawn([&] { ran.fetch_add(1); });
    });
    pool.wait_idle();
    EXPECT_EQ(ran.load(), 1000);
}

TEST(Lesson04Ex5, ZeroWorkersOrAZeroStealBatchIsAnError) {
    EXPECT_THROW(ThreadPool pool(0), std::invalid_argument);
    EXPECT_THROW(ThreadPool pool(Config{.num_workers = 0}), std::invalid_argument);
    EXPECT_THROW(ThreadPool pool(Config{.num_workers = 2, .max_steal_batch = 0}),
                 std::invalid_argument);
}

TEST(Lesson04Ex5, OnOneWorkerTasksSpawnedByATaskRunNewestFirst) {
    std::vector<int> log;  // only the one worker writes it; wait_idle orders the reads after
    ThreadPool pool(1);
    pool.spawn([&] {
        for (int i = 1; i <= 5; ++i)
            pool.spawn([&log, i] { log.push_back(i); });
    });
    pool.wait_idle();
    EXPECT_EQ(log, (std::vector<int>{5, 4, 3, 2, 1}))
        << "a task spawned by a worker goes onto that worker's own deque, whose owner pops the "
           "newest first";
}

TEST(Lesson04Ex5, AStealMovesABatchOneTaskAtATime) {
    // One task spawns 1,000 tasks onto its worker's deque; the other worker can only get work
    // by stealing, and each visit takes several tasks (each with its own CAS), never more than
    // max_steal_batch.
    constexpr int kChildren = 1000;
    constexpr std::size_t kBatch = 8;
    ThreadPool pool(Config{.num_workers = 2, .max_steal_batch = kBatch});
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
                              << " steals: a visit should take up to half of the victim's deque";
    EXPECT_LE(s.stolen_tasks, s.steals * kBatch) << "a visit took more than max_steal_batch";
    EXPECT_EQ(s.executed(), 1u + kChildren);
}

TEST(Lesson04Ex5, ALoneTaskBehindABusyWorkerIsStolen) {
    // A task spawns one child onto its worker's deque, then keeps that worker busy until the
    // child has run: only the other, idle, worker can run it, by stealing it. "Half of what the
    // victim holds" must round up: half of one task is that task.
    ThreadPool pool(2);
    std::atomic<bool> child_ran{false};
    bool ran_while_parent_waited = false;  // written by the parent; wait_idle orders the read
    pool.spawn([&] {
        pool.spawn([&] { child_ran.store(true, std::memory_order_release); });
        // An idle worker sleeps at most 8 ms between looks: 2 s is ample.
        const auto deadline = std::chrono::steady_clock::now() + 2s * slowdown();
        while (!child_ran.load(std::memory_order_acquire) &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::yield();
        }
        ran_while_parent_waited = child_ran.load(std::memory_order_acquire);
    });
    pool.wait_idle();
    EXPECT_TRUE(ran_while_parent_waited)
        << "the idle worker never stole the only task of a busy worker's deque: does a visit "
           "take (size + 1) / 2 tasks, rounded up, not size / 2?";
}

TEST(Lesson04Ex5, TasksSpawnedFromOutsideRunOldestFirst) {
    // A thread that is not one of the pool's workers owns no deque: its tasks go to the shared
    // queue, which hands them out oldest first. (Pushed onto a worker's deque instead, which
    // only that worker may push onto, they would come back newest first.) The one worker is
    // kept busy while the outside thread spawns, so the order is the queue's alone.
    ThreadPool pool(1);
    std::atomic<bool> started{false};
    std::atomic<bool> go{false};
    std::vector<int> log;  // only the one worker writes it; wait_idle orders the read
    pool.spawn([&] {
        started.store(true, std::memory_order_release);
        while (!go.load(std::memory_order_acquire))
            std::this_thread::yield();
    });
    while (!started.load(std::memory_order_acquire))
        std::this_thread::yield();
    for (int i = 1; i <= 5; ++i)
        pool.spawn([&log, i] { log.push_back(i); });
    go.store(true, std::memory_order_release);
    pool.wait_idle();
    EXPECT_EQ(log, (std::vector<int>{1, 2, 3, 4, 5}))
        << "tasks spawned from outside the pool go to the shared queue (oldest first), never "
           "onto a worker's deque: only its owner may push there";
}

TEST(Lesson04Ex5, EveryTaskRunsExactlyOnceWhileEveryWorkerStealsFromEveryOther) {
    // Four workers on two cores, deques that start at capacity 2 (so they grow), random trees
    // started from outside: every worker steals batches from every other, and stolen tasks get
    // stolen again from their thieves.
    constexpr std::size_t kTasks = 20'000;
    ThreadPool pool(Config{.num_workers = 4, .local_queue_capacity = 2});
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

TEST(Lesson04Ex5, TheSpawnTreeCountsExactly) {
    constexpr unsigned kDepth = 15;  // 65,535 tasks
    for (std::size_t workers : {1, 2, 4}) {
        EXPECT_EQ(ws::testing::count_binary_tree<ThreadPool>(workers, kDepth),
                  ws::testing::binary_tree_nodes(kDepth))
            << "with " << workers << " workers";
    }
}

TEST(Lesson04Ex5, TheDestructorRunsAndFreesEveryQueuedTask) {
    // Tasks still on the deques when the pool is destroyed run, and every Task — the pool
    // allocates each one and owns it through a raw pointer in the deque — is destroyed: its
    // captures with it. (Under --asan, LeakSanitizer also checks the Task objects themselves.)
    std::atomic<int> ran{0};
    std::atomic<int> alive{0};
    {
        ThreadPool pool(3);
        pool.spawn([&, guard = Alive(&alive)] {
            for (int i = 0; i < 3000; ++i) {
                pool.spawn([&, guard = Alive(&alive)] {
                    busy_for(1us);
                    ran.fetch_add(1);
                });
            }
        });
    }  // ~ThreadPool
    EXPECT_EQ(ran.load(), 3000) << "the destructor must run every task already spawned";
    EXPECT_EQ(alive.load(), 0) << "tasks were run but not destroyed";
}

TEST(Lesson04Ex5, AnExceptionFromATaskIsRethrownAfterTheOthersRan) {
    std::atomic<int> ran{0};
    ThreadPool pool(2);
    pool.spawn([&] {
        for (int i = 0; i < 1000; ++i) {
            pool.spawn([&ran, i] {
                if (i == 500) throw std::runtime_error("task 500 failed");
                ran.fetch_add(1);
            });
        }
    });
    EXPECT_THROW(pool.wait_idle(), std::runtime_error);
    EXPECT_EQ(ran.load(), 999);
    EXPECT_NO_THROW(pool.wait_idle()) << "the exception was already reported";
}

TEST(Lesson04Ex5, ATaskCanSpawnIntoAnotherPool) {
    // A worker of `a` is not a worker of `b`: its spawns into `b` must not go onto a deque of
    // b picked by a's worker index (only a deque's owner may push onto it).
    ThreadPool a(3), b(1);
    const auto seen = ws::testing::spawn_from_one_pool_into_another(a, b, 300);
    EXPECT_EQ(seen.ran, 300);
    EXPECT_EQ(seen.b_threads, 1u) << "b has one worker; all of b's tasks run on it";
}

TEST(Lesson04Ex5, WaitIdleFromInsideATaskIsStillALogicError) {
    ThreadPool pool(2);
    EXPECT_EQ(ws::testing::call_wait_idle_from_a_task(pool),
              ws::testing::WaitIdleFromTask::kLogicError);
}

TEST(Lesson04Ex5, AnIdlePoolSleeps) {
    // Lesson 02's backoff, unchanged: under 2 % of a core over 500 ms.
    ThreadPool pool(2);
    const auto used = ws::testing::idle_cpu_seconds(pool, 50ms, 500ms);
    ASSERT_TRUE(used.has_value()) << "a spawned task never ran";
    EXPECT_LT(*used, 0.02 * 0.5 * slowdown())
        << "the idle pool used " << *used * 1000 << " ms of CPU in 500 ms";
}
