// Lesson 06, exercise 5: fairness — a worker checks the injector first every 61st task, so two
// tasks that keep respawning each other cannot starve an injected one.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>

#include <ws/testing/harness.hpp>
#include <ws/testing/wait.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson06::Config;
using ws::lesson06::ThreadPool;
using ws::testing::slowdown;
using ws::testing::wait_until;

namespace {

// Two tasks that respawn each other on the worker that runs them, until told to stop: the
// worker's own deque is never empty.
struct PingPong {
    ThreadPool& pool;
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> bounces{0};

    void ping() {
        bounces.fetch_add(1, std::memory_order_relaxed);
        if (!stop.load(std::memory_order_relaxed)) pool.spawn([this] { pong(); });
    }
    void pong() {
        bounces.fetch_add(1, std::memory_order_relaxed);
        if (!stop.load(std::memory_order_relaxed)) pool.spawn([this] { ping(); });
    }
};

}  // namespace

TEST(Lesson06Ex5, AnInjectedTaskRunsWhileTwoTasksRespawnEachOther) {
    Config c;
    c.num_workers = 1;  // one worker: nobody else would pick the injected task up
    ThreadPool pool(c);
    PingPong pp{pool};
    pool.spawn([&] { pp.ping(); });
    ASSERT_TRUE(wait_until([&] { return pp.bounces.load() > 1000; }, 5s * slowdown()));

    std::atomic<bool> injected_ran{false};
    const auto t0 = std::chrono::steady_clock::now();
    pool.spawn([&] { injected_ran = true; });
    const bool ran = wait_until([&] { return injected_ran.load(); }, 100ms * slowdown());
    const auto waited = std::chrono::steady_clock::now() - t0;
    pp.stop = true;
    pool.wait_idle();
    EXPECT_TRUE(ran) << "the injected task did not run within 100 ms while two tasks kept "
                        "respawning each other: does the worker look at the injector first "
                        "every kFairnessInterval-th task?";
    EXPECT_LT(waited, 100ms * slowdown());
    EXPECT_TRUE(injected_ran.load());
}

TEST(Lesson06Ex5, ManyInjectedTasksAllRunWhileTheWorkerIsBusy) {
    Config c;
    c.num_workers = 1;
    ThreadPool pool(c);
    PingPong pp{pool};
    pool.spawn([&] { pp.ping(); });
    ASSERT_TRUE(wait_until([&] { return pp.bounces.load() > 1000; }, 5s * slowdown()));
    std::atomic<int> ran{0};
    for (int i = 0; i < 100; ++i)
        pool.spawn([&] { ran.fetch_add(1); });
    const bool all = wait_until([&] { return ran.load() == 100; }, 1s * slowdown());
    pp.stop = true;
    pool.wait_idle();
    EXPECT_TRUE(all) << ran.load() << " of 100 injected tasks ran within 1 s";
}
