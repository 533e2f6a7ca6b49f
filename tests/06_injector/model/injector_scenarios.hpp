// Lesson 06's explorer scenarios: producers and consumers of the injector, run by
// ws::model::explore() under every schedule within its bounds and under the C++ memory model,
// with the injector's atomics instrumented (<ws/model/explore.hpp>). The invariant: every item
// pushed is taken exactly once, nothing else is taken, and no thread touches a block after it
// was freed (the explorer reports that as a use after free, and a free that does not happen
// after every access to the block as a race on reclamation).
//
// What the explorer cannot see: plain memory. Items of type std::uint64_t are plain memory, so
// a consumer that reads its slot before the producer wrote it, or without the release/acquire
// pair on `written`, goes unseen in those scenarios; the scenarios with Tracked items below make
// the item itself an atomic of the model, whose construction the explorer tracks.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include <ws/model/explore.hpp>
#include <ws/testing/harness.hpp>

#include "injector.hpp"

namespace lesson06_model {

using Queue = ws::lesson06::Injector<std::uint64_t>;
inline constexpr std::uint64_t kBlock = Queue::kBlockSize;

// Items are numbered from 1; item n is what the n-th push pushed.
class Taken {
  public:
    static constexpr std::uint64_t kMaxItems = 2 * kBlock;

    void take(std::uint64_t item) {
        ws::model::check(item >= 1 && item <= kMaxItems,
                         "took " + std::to_string(item) + ", which was never pushed");
        if (item >= 1 && item <= kMaxItems) ++count_[item - 1];
    }
    // Steals up to `attempts` times (a retry counts as an attempt), stopping at empty.
    void steal(Queue& q, int attempts) {
        for (int i = 0; i < attempts; ++i) {
            auto s = q.steal();
            if (s.is_success()) take(s.value());
            if (s.is_empty()) return;
        }
    }
    // After the threads have been joined: takes what is left, then every item 1..pushed must
    // have been taken exactly once, and only the block the queue is in may still be allocated.
    void drain_and_check(Queue& q, std::uint64_t pushed) {
        for (auto s = q.steal(); !s.is_empty(); s = q.steal()) {
            if (s.is_success()) take(s.value());
        }
        for (std::uint64_t i = 0; i < pushed; ++i) {
            ws::model::check(count_[i] == 1, "item " + std::to_string(i + 1) + " was taken " +
                                                 std::to_string(count_[i]) + " times");
        }
        ws::model::check(q.live_blocks() == 1, std::to_string(q.live_blocks()) +
                                                   " blocks are allocated once all items are "
                                                   "taken: used-up blocks are not freed");
    }

  private:
    std::array<int, kMaxItems> count_{};
};

// An item the explorer can see: its value is a model atomic, constructed in the slot by the
// producer's push (a plain write, to the explorer) and read by the consumer's move. A consumer
// that reads a slot nobody constructed an item in yet is reported as the use of an atomic that
// was not created; one that reads it without happening after its construction (no
// release/acquire pair on `written`) as a data race on initialisation.
struct Tracked {
    explicit Tracked(std::uint64_t v) noexcept : value(v) {}
    // relaxed: a plain copy; whether this read may happen at all is what the explorer checks.
    Tracked(Tracked&& other) noexcept : value(other.value.load(std::memory_order_relaxed)) {}
    Tracked& operator=(Tracked&&) = delete;
    std::uint64_t get() const noexcept { return value.load(std::memory_order_relaxed); }

    ws::atomic<std::uint64_t> value;
};
using TrackedQueue = ws::lesson06::Injector<Tracked>;

// Fills the queue up to just before the end of its first block, single-threaded (nothing to
// explore there): pushes `kBlock - room` items and takes them all again, so that the next
// `room` pushes fill the first block and the one after that starts the second.
inline void use_up_all_but(Queue& q, Taken& taken, std::uint64_t room) {
    for (std::uint64_t i = 1; i <= kBlock - room; ++i)
        q.push(i);
    taken.steal(q, static_cast<int>(kBlock - room));
}

// The bounds of <ws/model/explore.hpp>; the reference solution needs 1,000 to 6,000
// depth-first executions per scenario to cover them (a few seconds). Under a sanitizer far
// fewer: each execution then costs several times more (ThreadSanitizer slows down the 62-item
// setup and every thread start), and what a sanitizer adds here is only a check of the
// explorer's own threads. The same executions in the same order every run, only fewer.
inline ws::model::Options options() {
    ws::testing::set_explorer_deadline();  // every test calls this first
    ws::model::Options o;
    const auto slowdown = static_cast<std::uint64_t>(ws::testing::slowdown());
    o.max_dfs_executions = 12'000 / (slowdown * slowdown);
    o.random_executions = 200 / slowdown;
    return o;
}

// On a failure the report shows the failing execution step by step, and how to replay it.
inline void expect_no_failure(const ws::model::Report& report) {
    EXPECT_FALSE(report.failed) << report;
}

}  // namespace lesson06_model
