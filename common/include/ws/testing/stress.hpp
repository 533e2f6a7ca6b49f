// A seeded stress loop: runs `body(rng, round)` for at most `rounds` rounds, and starts no
// round after `budget` of wall time has passed (so it takes at most the budget plus one round,
// and runs at least one round), so stress tests are bounded under slow sanitizers too. The seed
// comes from test_seed() and is printed if the test fails.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

#include <gtest/gtest.h>

#include "ws/testing/harness.hpp"

namespace ws::testing {

template <typename Body>
std::uint64_t stress(std::uint64_t rounds, std::chrono::milliseconds budget, Body body) {
    std::mt19937_64 rng(test_seed());
    const auto deadline = std::chrono::steady_clock::now() + budget;
    std::uint64_t round = 0;
    for (; round < rounds; ++round) {
        // Every round: a round may take seconds (threads started, thousands of tasks, 6x slower
        // under TSan), and looking only every 16th round let such a test run 16 rounds past
        // its budget, up to its watchdog on a loaded machine. A clock read costs nanoseconds.
        if (round != 0 && std::chrono::steady_clock::now() > deadline) break;
        body(rng, round);
        if (::testing::Test::HasFatalFailure()) break;
    }
    return round;
}

}  // namespace ws::testing
