// Lesson 06, exercise 5: fairness — a worker checks the injector first every 61st task, so two
// tasks that keep respawning each other cannot starve an injected one.
//
// The bounds are counted in tasks, not in time: the injected task must start within a few
// fairness intervals of respawns. A loaded machine slows the worker and the respawns alike, so
// the count does not depend on it; with no fairness check the respawns pass any bound, and the
// test sees that within a millisecond or two. The only clock is a backstop for a pool that does
// not run the respawns at all.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
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

    // Starts the two tasks and returns once they have respawned each other a while.
    void start() {
        pool.spawn([this] { ping(); });
        ASSERT_TRUE(wait_until([&] { return bounces.load() > 1000; }, 5s * slowdown()))
            << "the respawning tasks did not get going";
    }
    // Waits until `done` or until the tasks have bounced `more` times past `from`; true if
    // `done` came first.
    template <typename Pred>
    bool wait_for_or_bounces(Pred done, std::uint64_t from, std::uint64_t more) {
        wait_until([&] { return done() || bounces.load() > from + more; }, 20s * slowdown());
        return done();
    }
    // Stops the two tasks and drains the pool.
    void finish() {
        stop = true;
        pool.wait_idle();
    }

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

// Bounds in bounces: the worker runs its fairness look at least once every kFairnessInterval
// tasks, and the injected task is visible to it once spawn has returned; ten intervals leave
// room for a look that just missed the push.
constexpr std::uint64_t kWithinBounces = 10 * ThreadPool::kFairnessInterval;

TEST(Lesson06Ex5, AnInjectedTaskRunsWhileTwoTasksRespawnEachOther) {
    Config c;
    c.num_workers = 1;  // one worker: nobody else would pick the injected task up
    ThreadPool pool(c);
    PingPong pp{pool};
    pp.start();

    std::atomic<std::uint64_t> ran_at{0};  // bounces when the injected task ran, + 1
    pool.spawn([&] { ran_at = pp.bounces.load() + 1; });
    const std::uint64_t pushed_at = pp.bounces.load();  // at or after the push: a looser bound
    const bool ran =
        pp.wait_for_or_bounces([&] { return ran_at.load() != 0; }, pushed_at, kWithinBounces);
    pp.finish();
    EXPECT_TRUE(ran) << "the injected task did not run within " << kWithinBounces
                     << " tasks of two tasks that keep respawning each other"
                     << (ran_at.load() != 0 ? " (it ran once they stopped)" : "")
                     << ": does the worker look at the injector first every "
                        "kFairnessInterval-th task, before its own deque?";
    EXPECT_NE(ran_at.load(), 0u) << "the injected task never ran, not even once the pool drained";
}

TEST(Lesson06Ex5, ManyInjectedTasksAllRunWhileTheWorkerIsBusy) {
    Config c;
    c.num_workers = 1;
    ThreadPool pool(c);
    PingPong pp{pool};
    pp.start();
    std::atomic<int> ran{0};
    for (int i = 0; i < 100; ++i)
        pool.spawn([&] { ran.fetch_add(1); });
    const std::uint64_t pushed_at = pp.bounces.load();
    // A fairness look takes a batch (about half of what is queued): a dozen looks take all 100.
    const bool all =
        pp.wait_for_or_bounces([&] { return ran.load() == 100; }, pushed_at, 10 * kWithinBounces);
    const int ran_in_time = ran.load();
    pp.finish();
    EXPECT_TRUE(all) << "only " << ran_in_time << " of 100 injected tasks ran within "
                     << 10 * kWithinBounces << " tasks of two that keep respawning each other";
    EXPECT_EQ(ran.load(), 100) << "injected tasks were lost: not even the drain ran them";
}
