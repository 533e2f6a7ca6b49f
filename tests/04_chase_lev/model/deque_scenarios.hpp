// Lesson 04's explorer scenarios: small owner/thief races that ws::model::explore() runs under
// every schedule within its bounds and under the C++ memory model (see <ws/model/explore.hpp>),
// with the deque's atomics instrumented. The invariant is always the same: every item pushed
// is taken exactly once, by the owner's pop or by a thief's steal, and nothing else is taken.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include <ws/model/explore.hpp>
#include <ws/testing/harness.hpp>

#include "chase_lev_deque.hpp"

namespace lesson04_model {

using Deque = ws::lesson04::ChaseLevDeque<std::uint64_t>;

// Items are 1..n; 0 is what an empty slot holds (T{}), so taking a 0 means taking nothing.
class Taken {
  public:
    static constexpr int kMaxItems = 8;

    void take(std::uint64_t item) {
        ws::model::check(item >= 1 && item <= kMaxItems,
                         "took " + std::to_string(item) + ", which was never pushed");
        if (item >= 1 && item <= kMaxItems) ++count_[item - 1];
    }
    // Steals up to `attempts` times (a retry counts as an attempt).
    void steal(Deque& deque, int attempts) {
        for (int i = 0; i < attempts; ++i) {
            auto s = deque.steal();
            if (s.is_success()) take(s.value());
            if (s.is_empty()) return;
        }
    }
    void pop(Deque& deque, int times) {
        for (int i = 0; i < times; ++i) {
            if (std::optional<std::uint64_t> item = deque.pop()) take(*item);
        }
    }
    // After the thieves have been joined: the owner takes what is left, then every item
    // 1..pushed must have been taken exactly once.
    void drain_and_check(Deque& deque, int pushed) {
        while (std::optional<std::uint64_t> item = deque.pop())
            take(*item);
        for (int i = 0; i < pushed; ++i) {
            ws::model::check(count_[i] == 1, "item " + std::to_string(i + 1) + " was taken " +
                                                 std::to_string(count_[i]) + " times");
        }
    }

  private:
    std::array<int, kMaxItems> count_{};
};

// The bounds of <ws/model/explore.hpp> (2 preemptions, 2 stale reads, 1 read of a later store),
// with fewer random executions under a sanitizer. The depth-first part is deterministic and
// runs whole in every build (the reference solution needs a few hundred to a few thousand
// executions per scenario; the cap only keeps an unusual deque within the watchdog's time).
inline ws::model::Options options() {
    ws::testing::set_explorer_deadline();  // every test calls this first
    ws::model::Options o;
    o.max_dfs_executions = 20'000;
    o.random_executions = 300 / static_cast<std::uint64_t>(ws::testing::slowdown());
    return o;
}

// On a failure the report shows the failing execution step by step, and how to replay it.
inline void expect_no_failure(const ws::model::Report& report) {
    EXPECT_FALSE(report.failed) << report;
}

}  // namespace lesson04_model
