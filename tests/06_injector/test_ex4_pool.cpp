// Lesson 06, exercise 4: spawning through the injector — spawns from outside the pool go into
// the injector, and a worker takes a batch of them into its own deque.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/harness.hpp>
#include <ws/testing/parking_checks.hpp>
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
