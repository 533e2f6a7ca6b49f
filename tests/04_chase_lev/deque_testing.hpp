// Helpers for lesson 04's concurrent deque tests: a busy-wait with a deadline (tests whose
// threads must overlap in time cannot sleep), and the owner/thief race in rounds.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include <ws/testing/harness.hpp>
#include <ws/testing/stress.hpp>

#include "chase_lev_deque.hpp"

namespace lesson04_testing {

using Clock = std::chrono::steady_clock;

// Spins until `done()` or the deadline; returns the last value of done(). It spins flat out
// for a while (a wait across cores takes well under a microsecond), then yields between
// checks, so that it also works with more threads than cores.
template <typename Pred>
bool spin_until(Pred done, Clock::time_point deadline) {
    for (std::uint32_t i = 0;; ++i) {
        if (done()) return true;
        if (i >= 4096 && (i & 63) == 0) {
            if (Clock::now() > deadline) return done();
            std::this_thread::yield();
        }
    }
}

// Calls every operation once on a scratch deque, growth too if asked. Concurrent tests call it
// first, so that an unfinished exercise throws ws::NotImplemented in the test's own thread —
// a clean failure that names the exercise — rather than while other threads are running.
inline void call_each_operation_once(bool grow) {
    ws::lesson04::ChaseLevDeque<std::uint64_t> d(2);
    d.push(1);
    d.push(2);
    if (grow) d.push(3);
    (void)d.pop();
    (void)d.steal();
}

// A thief's loop: steals from `deque` and hands every item to `take`, until a steal finds the
// deque empty after `owner_done()` had become true (the owner then only pops), or the deadline
// passed. While the deque is empty it yields now and then, so that with more threads than
// cores the owner gets to run.
template <typename Deque, typename Done, typename Take>
void steal_until_done(Deque& deque, Done owner_done, Clock::time_point deadline, Take take) {
    for (std::uint32_t empty_streak = 0;;) {
        const bool done = owner_done();  // before the steal: then "empty" is final
        auto s = deque.steal();
        if (s.is_success()) {
            take(s.value());
            empty_streak = 0;
        } else if (s.is_empty()) {
            if (done) return;
            if (++empty_streak % 64 == 0) {
                if (Clock::now() > deadline) return;
                std::this_thread::yield();
            }
        }
    }
}

struct RaceResult {
    std::uint64_t rounds = 0;      // rounds run
    std::uint64_t owner_took = 0;  // items the owner's pop got
    std::uint64_t thief_took = 0;  // items the thief's steal got
    std::uint64_t bad_rounds = 0;  // rounds where some item was not taken exactly once
    std::string first_bad;         // what went wrong in the first bad round
    bool thief_stuck = false;      // the thief did not finish a round in time
};

// The owner/thief race, in rounds. Each round the owner pushes `items` fresh items into a
// deque that starts empty, then the owner pops and one thief steals until the deque is empty;
// every item must be taken by exactly one of them. A persistent thief thread spins between
// rounds, so both threads really run at the same time: the thief says it is ready, then each
// side waits a short while before it goes. The thief's wait adapts, longer after a round the
// thief won and shorter after one the owner won, so that the two keep arriving at about the
// same moment in any build (sanitizers change the timing a lot), with a random jitter on top.
inline RaceResult race_rounds(std::size_t items, std::uint64_t rounds,
                              std::chrono::milliseconds budget) {
    constexpr std::size_t kMaxItems = 4;
    using Deque = ws::lesson04::ChaseLevDeque<std::uint64_t>;
    call_each_operation_once(/*grow=*/false);
    Deque deque(8);
    std::array<std::atomic<std::uint32_t>, kMaxItems> taken{};
    std::atomic<std::uint64_t> round_started{0};
    std::atomic<std::uint64_t> thief_ready{0};
    std::atomic<std::uint64_t> thief_delay{0};  // set by the owner between rounds
    std::atomic<std::uint64_t> round_finished{0};
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> thief_took{0};
    std::atomic<std::uint64_t> unknown{0};
    const auto give_up = Clock::now() + budget + std::chrono::seconds(10);

    // Items of round r are r * kMaxItems + i + 1 (never 0: a zeroed slot is not an item).
    auto record = [&](std::uint64_t round, std::uint64_t value) {
        const std::uint64_t first = round * kMaxItems + 1;
        if (value < first || value >= first + items) {
            unknown.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        taken[value - first].fetch_add(1, std::memory_order_relaxed);
    };

    // A short busy wait that the compiler cannot remove: about a nanosecond a step here.
    auto delay = [](std::uint64_t steps) {
        for (; steps > 0; --steps)
            std::atomic_signal_fence(std::memory_order_seq_cst);
    };
    std::thread thief([&, seed = ws::testing::test_seed()] {
        std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15u);
        for (std::uint64_t r = 1;; ++r) {
            if (!spin_until(
                    [&] {
                        return stop.load(std::memory_order_acquire) ||
                               round_started.load(std::memory_order_acquire) >= r;
                    },
                    give_up) ||
                stop.load(std::memory_order_acquire)) {
                return;
            }
            thief_ready.store(r, std::memory_order_release);
            delay(thief_delay.load(std::memory_order_relaxed) + rng() % 64);
            for (;;) {
                auto s = deque.steal();
                if (s.is_success()) {
                    record(r, s.value());
                    thief_took.fetch_add(1, std::memory_order_relaxed);
                } else if (s.is_empty()) {
                    break;
                }
            }
            round_finished.store(r, std::memory_order_release);
        }
    });

    RaceResult result;
    result.rounds = ws::testing::stress(rounds, budget, [&](auto& rng, std::uint64_t) {
        const std::uint64_t r = round_started.load(std::memory_order_relaxed) + 1;
        for (auto& t : taken)
            t.store(0, std::memory_order_relaxed);
        for (std::size_t i = 0; i < items; ++i)
            deque.push(r * kMaxItems + i + 1);
        round_started.store(r, std::memory_order_release);  // go, thief
        if (!spin_until([&] { return thief_ready.load(std::memory_order_acquire) >= r; },
                        give_up)) {
            result.thief_stuck = true;
            FAIL() << "the thief did not start round " << r << " in time";
        }
        delay(rng() % 64);
        std::uint64_t owner_took = 0;
        while (auto item = deque.pop()) {
            record(r, *item);
            ++owner_took;
        }
        result.owner_took += owner_took;
        // The owner found the deque empty; wait until the thief did too.
        if (!spin_until([&] { return round_finished.load(std::memory_order_acquire) >= r; },
                        give_up)) {
            result.thief_stuck = true;
            FAIL() << "the thief did not finish round " << r << " in time";
        }
        // Steer the race towards a tie: make the thief wait longer if it got everything.
        const std::uint64_t d = thief_delay.load(std::memory_order_relaxed);
        thief_delay.store(
            owner_took == 0 ? std::min<std::uint64_t>(d + 8, 1 << 16) : (d >= 8 ? d - 8 : 0),
            std::memory_order_relaxed);
        std::ostringstream bad;
        for (std::size_t i = 0; i < items; ++i) {
            const auto n = taken[i].load(std::memory_order_relaxed);
            if (n != 1) bad << " item " << i << " of " << items << " taken " << n << " times;";
        }
        if (!bad.str().empty()) {
            if (result.bad_rounds++ == 0)
                result.first_bad = "round " + std::to_string(r) + ":" + bad.str();
        }
    });
    stop.store(true, std::memory_order_release);
    thief.join();
    result.thief_took = thief_took.load();
    if (const auto u = unknown.load(); u != 0 && result.first_bad.empty())
        result.first_bad = std::to_string(u) + " values that were never pushed";
    if (unknown.load() != 0 && result.bad_rounds == 0) result.bad_rounds = 1;
    return result;
}

}  // namespace lesson04_testing
