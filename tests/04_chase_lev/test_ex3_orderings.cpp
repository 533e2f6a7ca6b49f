// Lesson 04, exercise 3: the memory orderings.
//
// An ordering bug rarely shows on x86 (its hardware keeps most orders anyway), and
// ThreadSanitizer does not see reorderings between atomics. What TSan does see is a missing
// release/acquire pair in front of ordinary memory: the first test hands over plain structs
// through the deque, exactly as the pool hands over Tasks, so under --tsan a missing release in
// push or a missing acquire in steal is reported as a data race on the struct. The second test
// is the store-buffering race in pop; on x86 it catches a missing seq_cst only now and then.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/harness.hpp>

#include "chase_lev_deque.hpp"
#include "deque_testing.hpp"
#include "exercises.hpp"

using namespace std::chrono_literals;
using lesson04_testing::Clock;
using ws::testing::slowdown;

namespace {

// Written by the owner before push, read by whoever takes it: plain memory, like a Task.
struct Payload {
    std::uint64_t id = 0;
    std::uint64_t check = 0;  // id * 3 + 1, written separately
    std::vector<std::uint64_t> more;
};

}  // namespace

TEST(Lesson04Ex3, WhoeverTakesAnItemSeesWhatTheOwnerWroteBeforePushingIt) {
    lesson04_testing::call_each_operation_once(/*grow=*/false);
    constexpr int kThieves = 2;
    const std::uint64_t n = 100'000 / static_cast<std::uint64_t>(slowdown());
    ws::lesson04::ChaseLevDeque<Payload*> d(static_cast<std::size_t>(n));
    ws::testing::ExactlyOnce seen(n);
    std::atomic<std::uint64_t> corrupt{0};
    std::atomic<bool> owner_done{false};
    const auto deadline = Clock::now() + 20s * slowdown();
    auto consume = [&](Payload* p) {
        // Plain reads: they race with the owner's plain writes unless push/steal synchronise.
        if (p->check != p->id * 3 + 1 || p->more.size() != 3 || p->more[2] != p->id)
            corrupt.fetch_add(1, std::memory_order_relaxed);
        seen.mark(p->id);
        delete p;
    };
    std::vector<std::thread> thieves;
    for (int k = 0; k < kThieves; ++k) {
        thieves.emplace_back([&] {
            lesson04_testing::steal_until_done(
                d, [&] { return owner_done.load(std::memory_order_acquire); }, deadline,
                [&](auto v) { consume(v); });
        });
    }
    for (std::uint64_t i = 0; i < n; ++i) {
        auto* p = new Payload;
        p->id = i;
        p->check = i * 3 + 1;
        p->more = {i, i, i};
        d.push(p);
        if (i % 4 == 3) {  // the owner takes some back too
            if (auto mine = d.pop()) consume(*mine);
        }
    }
    owner_done.store(true, std::memory_order_release);
    while (auto mine = d.pop())
        consume(*mine);
    for (auto& t : thieves)
        t.join();
    EXPECT_EQ(corrupt.load(), 0u) << "a taker saw a half-written item: push must publish with "
                                     "release, steal must load bottom with acquire or stronger";
    EXPECT_TRUE(seen.verify());
}

TEST(Lesson04Ex3, OwnerAndThiefNeverBothTakeOneOfTwoItems) {
    // Two items per round: the owner pops (taking the newer without a CAS, since it sees two)
    // while the thief steals twice. If pop's store of bottom can be reordered after its load of
    // top (anything weaker than seq_cst on both), the owner can miss the thief's first steal and
    // the thief can miss the owner's reservation: both take the newer item.
    const std::uint64_t rounds = 300'000 / static_cast<std::uint64_t>(slowdown());
    for (std::size_t items : {2, 3}) {
        auto r = lesson04_testing::race_rounds(items, rounds, 10s * slowdown());
        if (HasFatalFailure()) return;
        EXPECT_EQ(r.bad_rounds, 0u) << items << " items a round: " << r.bad_rounds << " of "
                                    << r.rounds << " rounds went wrong; first: " << r.first_bad;
        EXPECT_GT(r.rounds, 1000u) << "too few rounds ran to mean anything";
    }
}
