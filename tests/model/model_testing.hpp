// Helpers for the explorer's own tests.
#pragma once

#include <atomic>
#include <cstdint>

#include <ws/model/explore.hpp>
#include <ws/testing/harness.hpp>

namespace model_testing {

inline constexpr auto relaxed = std::memory_order_relaxed;
inline constexpr auto acquire = std::memory_order_acquire;
inline constexpr auto release = std::memory_order_release;
inline constexpr auto acq_rel = std::memory_order_acq_rel;
inline constexpr auto seq_cst = std::memory_order_seq_cst;

// The default bounds; fewer random executions under a sanitizer (each one starts real threads,
// which ThreadSanitizer makes slow). The depth-first part stays whole: the litmus tests'
// "never" needs all of it.
inline ws::model::Options options() {
    ws::testing::set_explorer_deadline();  // every test calls this first
    ws::model::Options o;
    o.random_executions = 1'000 / static_cast<std::uint64_t>(ws::testing::slowdown());
    return o;
}

}  // namespace model_testing
