// Lesson 07's pool, given (lesson 06's, with deques of Job*): the ThreadPool contract still
// holds — also for the per-worker idle counters and the recycled task nodes that are new here.
// Not an exercise: these pass in the starter too.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <thread>

#if defined(__linux__)
#include <sys/resource.h>
#include <unistd.h>
#endif

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/pool_checks.hpp>
#include <ws/testing/sanitizer.hpp>
#include <ws/testing/stress.hpp>
#include <ws/testing/task_trees.hpp>

#include "fork_join.hpp"
#include "thread_pool.hpp"

using ws::lesson07::Config;
using ws::lesson07::ThreadPool;

TEST(Lesson07Pool, ZeroWorkersOrAZeroStealBatchIsInvalid) {
    EXPECT_THROW(ThreadPool pool(std::size_t{0}), std::invalid_argument);
    Config config;
    config.num_workers = 0;
    EXPECT_THROW(ThreadPool pool(config), std::invalid_argument);
    config.num_workers = 2;
    config.max_steal_batch = 0;
    EXPECT_THROW(ThreadPool pool(config), std::invalid_argument);
}

TEST(Lesson07Pool, ConfigHasDefaults) {
    const Config config;
    EXPECT_GE(config.num_workers, 1u);
    EXPECT_GE(config.local_queue_capacity, 1u);
    EXPECT_GE(config.max_steal_batch, 1u);
    ThreadPool pool(config);
    EXPECT_EQ(pool.num_workers(), config.num_workers);
}

TEST(Lesson07Pool, WaitIdleFromATaskIsALogicError) {
    ThreadPool pool(2);
    EXPECT_EQ(ws::testing::call_wait_idle_from_a_task(pool),
              ws::testing::WaitIdleFromTask::kLogicError);
}

TEST(Lesson07Pool, EveryTaskOfRandomTreesRunsExactlyOnce) {
    // Spawns from outside (the injector) and from inside (the deques), on recycled nodes.
    ws::testing::stress(20, std::chrono::seconds(5), [](auto& rng, std::uint64_t) {
        ThreadPool pool(2);
        ws::testing::ExactlyOnce seen(20'000);
        ws::testing::run_random_trees(pool, seen, rng);
        EXPECT_TRUE(seen.verify());
    });
}

TEST(Lesson07Pool, WaitIdleWaitsForTasksSpawnedByTasksAndRethrowsOnce) {
    ThreadPool pool(2);
    std::atomic<std::uint64_t> nodes{0};
    pool.spawn([&] { ws::testing::binary_tree(pool, nodes, 14); });
    pool.spawn([] { throw std::runtime_error("one task failed"); });
    EXPECT_THROW(pool.wait_idle(), std::runtime_error);
    EXPECT_EQ(nodes.load(), ws::testing::binary_tree_nodes(14));
    EXPECT_NO_THROW(pool.wait_idle());
}

TEST(Lesson07Pool, TheDestructorRunsEveryTaskAlreadySpawned) {
    std::atomic<int> ran{0};
    {
        ThreadPool pool(2);
        for (int i = 0; i < 10'000; ++i)
            pool.spawn([&] { ran.fetch_add(1, std::memory_order_relaxed); });
    }
    EXPECT_EQ(ran.load(), 10'000);
}

TEST(Lesson07Pool, SpawningFromSeveralOutsideThreadsAndTwoPools) {
    // Outside threads keep a cache of task nodes per pool: switching pools must not mix them.
    ThreadPool a(2), b(1);
    std::atomic<int> ran{0};
    auto spawner = [&] {
        for (int i = 0; i < 5'000; ++i) {
            (i % 3 == 0 ? b : a).spawn([&] { ran.fetch_add(1, std::memory_order_relaxed); });
        }
    };
    std::thread t1(spawner), t2(spawner);
    spawner();
    t1.join();
    t2.join();
    a.wait_idle();
    b.wait_idle();
    EXPECT_EQ(ran.load(), 15'000);
}

TEST(Lesson07Pool, AnIdlePoolSleeps) {
    ThreadPool pool(2);
    const auto cpu = ws::testing::idle_cpu_seconds(pool, std::chrono::milliseconds(100),
                                                   std::chrono::milliseconds(300));
    ASSERT_TRUE(cpu.has_value()) << "a spawned task never ran";
    EXPECT_LT(*cpu, 0.03 * ws::testing::slowdown())
        << "an idle pool should park its workers, not spin (CPU seconds in a 300 ms window)";
}

TEST(Lesson07Pool, AStealTakesSeveralJobsWhenTheVictimHoldsMany) {
    ThreadPool pool(2);
    std::atomic<int> ran{0};
    std::atomic<bool> release{false};
    // One task fills its own deque, then waits for the other worker to have run some of it.
    pool.spawn([&] {
        for (int i = 0; i < 2000; ++i)
            pool.spawn([&] { ran.fetch_add(1, std::memory_order_relaxed); });
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::seconds(5) * ws::testing::slowdown();
        while (ran.load() < 100 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::yield();
        release = true;
    });
    pool.wait_idle();
    EXPECT_TRUE(release.load());
    const ws::PoolStats s = pool.stats();
    ASSERT_GT(s.steals, 0u) << "the other worker never stole";
    EXPECT_GT(s.stolen_tasks, s.steals)
        << "from a deque of 2000 jobs a steal should take a few more than one";
}

// A spawn that fails for want of memory (a block of task nodes, an injector block or a deque
// growth throws std::bad_alloc) must leave nothing counted: wait_idle must still return.
// The child process of a death test runs under a memory limit, so that the allocator really
// runs out. Not under the sanitizers: their allocators report and abort instead of throwing.
#if defined(__linux__) && !defined(WS_SANITIZER_ALLOCATOR)
namespace {
// In the child. Exit code 0: every task that spawned ran and wait_idle returned; 1: a task
// was lost or no spawn ran out of memory; 2: the memory limit could not be set; 3: wait_idle hung.
[[noreturn]] void spawn_until_out_of_memory() {
    ThreadPool pool(1);
    std::atomic<bool> release{false}, blocking{false};
    std::atomic<std::uint64_t> ran{0};
    // The only worker waits here, so the nodes of the tasks below are not recycled: every
    // block of them is a fresh allocation.
    pool.spawn([&] {
        blocking = true;
        while (!release)
            std::this_thread::yield();
    });
    while (!blocking)
        std::this_thread::yield();
    long pages = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
        std::fclose(f);
    }
    rlimit old_limit{};
    getrlimit(RLIMIT_AS, &old_limit);
    const rlimit tight{static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) +
                           (rlim_t{64} << 20),
                       old_limit.rlim_max};
    if (pages == 0 || setrlimit(RLIMIT_AS, &tight) != 0) std::_Exit(2);
    std::uint64_t spawned = 0;
    bool ran_out = false;
    try {
        for (;; ++spawned)
            pool.spawn([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
    } catch (const std::bad_alloc&) {
        ran_out = true;
    }
    setrlimit(RLIMIT_AS, &old_limit);
    release = true;
    // A failed spawn that is still counted makes wait_idle hang: fail instead (the watchdog
    // of the parent process does not see into this child).
    std::thread([] {
        std::this_thread::sleep_for(std::chrono::seconds(10));
        std::fputs("wait_idle did not return within 10 s\n", stderr);
        std::_Exit(3);
    }).detach();
    pool.wait_idle();
    const bool ok = ran_out && ran.load() == spawned;
    std::fprintf(stderr, "spawned %llu, ran %llu\n", static_cast<unsigned long long>(spawned),
                 static_cast<unsigned long long>(ran.load()));
    std::_Exit(ok ? 0 : 1);
}
}  // namespace

TEST(Lesson07Pool, ASpawnThatRunsOutOfMemoryLeavesNothingCounted) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // the parent runs threads of its own
    EXPECT_EXIT(spawn_until_out_of_memory(), ::testing::ExitedWithCode(0), "")
        << "after a spawn threw std::bad_alloc, wait_idle did not see every other task run";
}
#endif
