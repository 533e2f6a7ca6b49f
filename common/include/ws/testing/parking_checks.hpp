// Checks of a pool whose idle workers park (lessons 05 and later), written once for any pool
// with spawn, wait_idle, num_workers, stats() (parks, wakeups) and a constructor from `config`.
// The bounds are the ones lesson 05's issue sets; each check reports through GoogleTest.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "ws/pool.hpp"
#include "ws/testing/exactly_once.hpp"
#include "ws/testing/harness.hpp"
#include "ws/testing/latency.hpp"
#include "ws/testing/pool_checks.hpp"
#include "ws/testing/stress.hpp"
#include "ws/testing/thread_state.hpp"
#include "ws/testing/wait.hpp"

namespace ws::testing::parking {

using namespace std::chrono_literals;

// Workers asleep right now: each park ends with exactly one wake-up.
template <ws::Pool P>
std::uint64_t asleep(const P& pool) {
    const auto s = pool.stats();
    return s.parks - s.wakeups;
}

template <ws::Pool P>
bool wait_until_all_asleep(const P& pool) {
    return wait_until([&] { return asleep(pool) == pool.num_workers(); }, 5s * slowdown());
}

// Every task from four outside threads, and every task those spawn, runs exactly once.
template <ws::Pool P, typename Config>
void check_exactly_once(const Config& config) {
    constexpr std::size_t kThreads = 4, kPerThread = 10'000;
    ExactlyOnce seen(2 * kThreads * kPerThread);
    P pool(config);
    std::vector<std::thread> spawners;
    for (std::size_t t = 0; t < kThreads; ++t) {
        spawners.emplace_back([&, t] {
            for (std::size_t i = 0; i < kPerThread; ++i) {
                const std::size_t item = 2 * (t * kPerThread + i);
                pool.spawn([&pool, &seen, item] {
                    seen.mark(item);
                    pool.spawn([&seen, item] { seen.mark(item + 1); });
                });
            }
        });
    }
    for (auto& s : spawners)
        s.join();
    pool.wait_idle();
    EXPECT_TRUE(seen.verify());
    EXPECT_EQ(pool.stats().executed(), seen.size());
}

// An idle 2-worker pool uses under 2 % of a core over 500 ms (the least of three windows).
template <ws::Pool P, typename Config>
void check_idle_cpu(const Config& config) {
    P pool(config);
    const auto used = idle_cpu_seconds(pool, 50ms, 500ms);
    ASSERT_TRUE(used.has_value()) << "a task spawned on the idle pool never ran";
    EXPECT_LT(*used, 0.02 * 0.5) << "the idle pool used " << *used * 1000
                                 << " ms of CPU in 500 ms: a worker does not sleep";
}

// `rounds` times: pool idle (or about to be: every other round does not wait for the workers
// to sleep, so the spawn lands while they are on their way) → spawn one task from outside → it
// must start. A lost wake-up is a state, not a delay: every worker asleep with the task queued.
// So a task that has not started within 1 s is a miss once every worker has been asleep for
// 20 ms in a row (in /proc; without it, at once), or after 10 s: a worker woken for it but
// waiting for a core on a busy machine is runnable, not asleep, and fails nothing.
template <ws::Pool P, typename Config>
void check_wake_rounds(const Config& config, std::uint64_t rounds) {
    const auto before = thread_ids();
    std::atomic<std::uint64_t> started{0};  // before the pool: its destructor may run a task
    P pool(config);
    const auto workers = new_threads(before);
    std::uint64_t misses = 0, waited_for_sleep = 0;
    // As many of `rounds` as fit in 20 s: beside busy processes a round that waits for the
    // workers to park can take milliseconds, and 60 s overran the watchdog's 30 s (seen on the
    // reference of lesson 06 beside 2 busy processes, with either form of the check below).
    const auto done =
        stress(rounds, 20s * slowdown(), [&](std::mt19937_64& rng, std::uint64_t round) {
            if (rng() % 2 == 0) {
                ASSERT_TRUE(wait_until_all_asleep(pool)) << "round " << round;
                ++waited_for_sleep;
            }
            pool.spawn([&] { started.fetch_add(1, std::memory_order_relaxed); });
            const auto spawned = std::chrono::steady_clock::now();
            bool all_asleep = false;
            std::chrono::steady_clock::time_point asleep_since{};
            while (started.load(std::memory_order_relaxed) < round + 1) {
                const auto now = std::chrono::steady_clock::now();
                if (now - spawned > 1s * slowdown()) {
                    const bool was = all_asleep;
                    all_asleep = !kCanSteerThreads ||
                                 std::all_of(workers.begin(), workers.end(), ws::testing::asleep);
                    if (all_asleep && !was) asleep_since = now;
                    const bool lost =
                        all_asleep && (!kCanSteerThreads || now - asleep_since >= 20ms);
                    if (lost || now - spawned > 10s * slowdown()) {
                        ++misses;
                        FAIL() << "round " << round << ": the task did not start"
                               << (lost ? ", and every worker went to sleep (a lost wake-up)"
                                        : " within 10 s");
                    }
                }
                std::this_thread::yield();
            }
        });
    if (misses > 0) {
        // The lost task is still queued and every worker sleeps: wait_idle() would wait for
        // ever. The pool's destructor wakes every worker, and they run it then.
        return;
    }
    pool.wait_idle();
    EXPECT_GT(waited_for_sleep, 0u);
    EXPECT_GT(done, 0u);
    std::printf("%llu rounds, %llu after the workers were asleep, %llu wake-ups\n",
                static_cast<unsigned long long>(done),
                static_cast<unsigned long long>(waited_for_sleep),
                static_cast<unsigned long long>(pool.stats().wakeups));
    EXPECT_GE(pool.stats().wakeups, waited_for_sleep / 2) << "tasks ran, but nobody was woken?";
}

// Two long tasks spawned together from outside an idle pool run at the same time.
template <ws::Pool P, typename Config>
void check_two_long_tasks(const Config& config) {
    P pool(config);
    ASSERT_TRUE(wait_until_all_asleep(pool));
    std::atomic<int> arrived{0}, met{0};
    for (int i = 0; i < 2; ++i) {
        pool.spawn([&] {
            arrived.fetch_add(1);
            if (wait_until([&] { return arrived.load() == 2; }, 2s * slowdown())) met.fetch_add(1);
        });
    }
    pool.wait_idle();
    EXPECT_EQ(met.load(), 2) << "the second task did not start while the first ran: the "
                                "worker that took the first did not wake the other";
}

// Destroying a pool takes under `bound` × slowdown() once its workers are parked: timed from the
// call to the destructor's return, less the time the worker that ended last, and then the test
// thread, waited, runnable, for a core (<ws/testing/latency.hpp>; beside busy processes a worker
// woken at once can wait longer than the bound for a core). A worker left asleep is all counted.
// Its workers first each run a task that leaves a probe in them (EndProbes).
template <ws::Pool P, typename Config>
void check_prompt_destruction(const Config& config, std::chrono::milliseconds bound) {
    const auto limit = bound * slowdown();
    const auto took = measure_until_clear(limit, [&]() -> std::optional<Latency> {
        std::optional<P> pool(std::in_place, config);
        EndProbes probes;
        if (!probes.arm(*pool, pool->num_workers())) {
            ADD_FAILURE() << "tasks that wait for each other did not run, each on a worker of its "
                             "own: a task spawned while the others are busy must wake a worker";
            return std::nullopt;
        }
        if (!wait_until_all_asleep(*pool)) {
            ADD_FAILURE() << "the workers never parked";
            return std::nullopt;
        }
        return time_to_destroy(probes, [&] { pool.reset(); });
    });
    ASSERT_TRUE(took.has_value());
    LatencyRecord().add(*took);
    EXPECT_LT(took->left(), limit)
        << "destroying a parked pool took " << describe(*took)
        << ": the shutdown must wake every parked worker, and a woken worker must leave";
}

}  // namespace ws::testing::parking
