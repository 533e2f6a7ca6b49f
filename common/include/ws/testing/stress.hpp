// A seeded stress loop: runs `body(rng, round)` for at most `rounds` rounds and at most
// `budget` of wall time (whichever ends first), so stress tests are bounded under slow
// sanitizers too. The seed comes from test_seed() and is printed if the test fails.
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
        if ((round & 15) == 0 && std::chrono::steady_clock::now() > deadline) break;
        body(rng, round);
        if (::testing::Test::HasFatalFailure()) break;
    }
    return round;
}

}  // namespace ws::testing
