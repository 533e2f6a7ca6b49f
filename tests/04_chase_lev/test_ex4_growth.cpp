// Lesson 04, exercise 4: growth. A full deque doubles; old buffers are retired, not freed,
// until the deque is destroyed.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/harness.hpp>
#include <ws/testing/sanitizer.hpp>
#include <ws/testing/stress.hpp>

#include "chase_lev_deque.hpp"
#include "deque_testing.hpp"
#include "exercises.hpp"

using namespace std::chrono_literals;
using Deque = ws::lesson04::ChaseLevDeque<std::uint64_t>;
using lesson04_testing::Clock;
using lesson04_testing::spin_until;
using ws::testing::slowdown;

// Live heap bytes of the whole process, from the allocator that is in use: the sanitizers'
// own when built with one, glibc's otherwise. (Replacing operator new would clash with the
// sanitizer runtimes, which define it themselves.)
#if defined(WS_SANITIZER_ALLOCATOR)
#include <sanitizer/allocator_interface.h>
#else
#include <malloc.h>
#endif

namespace {
std::int64_t live_heap_bytes() {
#if defined(WS_SANITIZER_ALLOCATOR)
    return static_cast<std::int64_t>(__sanitizer_get_current_allocated_bytes());
#else
    const struct mallinfo2 info = mallinfo2();
    return static_cast<std::int64_t>(info.uordblks + info.hblkhd);  // heap + mmap'ed blocks
#endif
}
}  // namespace

TEST(Lesson04Ex4, GrowsByDoublingAndKeepsEveryItemInOrder) {
    Deque d(2);
    for (std::uint64_t i = 1; i <= 100; ++i)
        d.push(i);
    EXPECT_EQ(d.capacity(), 128u) << "2 doubled until 100 items fit: 128";
    EXPECT_EQ(d.size(), 100u);
    for (std::uint64_t i = 1; i <= 50; ++i) {
        auto s = d.steal();
        ASSERT_TRUE(s.is_success());
        EXPECT_EQ(s.value(), i) << "steal order after growth";
    }
    for (std::uint64_t i = 100; i > 50; --i) {
        auto item = d.pop();
        ASSERT_TRUE(item.has_value());
        EXPECT_EQ(*item, i) << "pop order after growth";
    }
    EXPECT_FALSE(d.pop().has_value());
}

TEST(Lesson04Ex4, GrowsWhenTheLiveRangeWrapsAroundTheRing) {
    // top and bottom are far from 0 and the live range straddles the end of the ring, so the
    // copy must go index by index (index & mask differs between the two sizes).
    Deque d(4);
    for (std::uint64_t i = 0; i < 7; ++i) {
        d.push(i);
        ASSERT_EQ(d.steal().value(), i);
    }
    for (std::uint64_t i = 100; i < 104; ++i)
        d.push(i);  // full: indices 7..10, slots 3, 0, 1, 2
    d.push(104);    // grows
    EXPECT_EQ(d.capacity(), 8u);
    for (std::uint64_t i = 100; i <= 104; ++i)
        EXPECT_EQ(d.steal().value(), i);
}

TEST(Lesson04Ex4, ModelTestAgainstStdDequeFromCapacityTwo) {
    // 1,000,000 random operations, starting from capacity 2, against std::deque. Pushes are a
    // little more likely than takes, so the deque grows again and again.
    Deque d(2);
    std::deque<std::uint64_t> model;
    std::uint64_t next = 1;
    const std::uint64_t ops = 1'000'000 / static_cast<std::uint64_t>(slowdown());
    const auto ran = ws::testing::stress(ops, 20s * slowdown(), [&](auto& rng, std::uint64_t op) {
        const auto dice = rng() % 100;
        if (dice < 40) {
            d.push(next);
            model.push_back(next++);
        } else if (dice < 70) {
            auto item = d.pop();
            if (model.empty()) {
                ASSERT_FALSE(item.has_value()) << "op " << op << ": pop on an empty deque";
            } else {
                ASSERT_TRUE(item.has_value()) << "op " << op << ": pop found nothing";
                ASSERT_EQ(*item, model.back()) << "op " << op;
                model.pop_back();
            }
        } else if (dice < 99) {
            auto s = d.steal();
            ASSERT_FALSE(s.is_retry()) << "op " << op << ": with one thread, steal never loses";
            if (model.empty()) {
                ASSERT_TRUE(s.is_empty()) << "op " << op << ": steal on an empty deque";
            } else {
                ASSERT_TRUE(s.is_success()) << "op " << op << ": steal found nothing";
                ASSERT_EQ(s.value(), model.front()) << "op " << op;
                model.pop_front();
            }
        } else {
            for (int i = 0; i < 64; ++i) {  // now and then a burst: growth from a wrapped range
                d.push(next);
                model.push_back(next++);
            }
        }
        ASSERT_EQ(d.size(), model.size()) << "op " << op;
        ASSERT_GE(d.capacity(), model.size()) << "op " << op;
    });
    EXPECT_GT(d.capacity(), 2u) << "the model test should have made the deque grow";
    EXPECT_GT(ran, ops / 10);
}

TEST(Lesson04Ex4, ExactlyOnceUnderMixedOperationsWithManyGrowths) {
    // The owner pushes in bursts and pops now and then, starting from capacity 2, while two
    // thieves steal: every item is taken exactly once, across many growths.
    lesson04_testing::call_each_operation_once(/*grow=*/true);
    constexpr int kThieves = 2;
    const std::uint64_t n = 300'000 / static_cast<std::uint64_t>(slowdown());
    Deque d(2);
    ws::testing::ExactlyOnce seen(n);
    std::atomic<bool> owner_done{false};
    const auto deadline = Clock::now() + 20s * slowdown();
    std::vector<std::thread> thieves;
    for (int k = 0; k < kThieves; ++k) {
        thieves.emplace_back([&] {
            lesson04_testing::steal_until_done(
                d, [&] { return owner_done.load(std::memory_order_acquire); }, deadline,
                [&](auto v) { seen.mark(v); });
        });
    }
    std::uint64_t next = 0;
    ws::testing::stress(n, 20s * slowdown(), [&](auto& rng, std::uint64_t) {
        if (next == n) return;
        const auto burst = 1 + rng() % 256;
        for (std::uint64_t i = 0; i < burst && next < n; ++i)
            d.push(next++);
        for (auto pops = rng() % (burst / 2 + 1); pops > 0; --pops) {
            if (auto item = d.pop()) seen.mark(*item);
        }
    });
    owner_done.store(true, std::memory_order_release);
    while (auto item = d.pop())
        seen.mark(*item);
    for (auto& t : thieves)
        t.join();
    ASSERT_EQ(next, n) << "the owner ran out of time before pushing everything";
    EXPECT_GT(d.capacity(), 2u) << "the deque never grew";
    EXPECT_TRUE(seen.verify());
}

TEST(Lesson04Ex4, GrowthWhileThievesSteal) {
    // Rounds of: a fresh deque of capacity 1, into which the owner pushes 1024 items as fast as
    // it can — growing it 10 times — while two thieves steal from it all along. A thief that
    // loaded the old buffer's address just before a growth reads its slot from the old buffer
    // afterwards: the old buffer must still be alive then (under --asan a freed one is
    // reported), and still hold the right item. Every item is taken exactly once, and each
    // thief's steals increase.
    lesson04_testing::call_each_operation_once(/*grow=*/true);
    constexpr int kThieves = 2;
    constexpr std::uint64_t kItems = 1024;
    // A freed old buffer is only read when a thief is held up (preempted, say) in the few
    // instructions between loading the buffer's address and reading its slot, while the owner
    // grows: rare per round, so this test runs many short rounds for a fixed time.
    const std::uint64_t rounds = 200'000;
    std::atomic<Deque*> current{nullptr};
    std::atomic<std::uint64_t> started{0}, ready{0}, closing{0}, finished{0};
    std::atomic<bool> stop{false};
    std::array<std::atomic<std::uint32_t>, kItems + 1> taken{};
    std::atomic<std::uint64_t> unknown{0}, out_of_order{0};
    const auto give_up = Clock::now() + 30s * slowdown();
    auto record = [&](std::uint64_t v) {
        if (v == 0 || v > kItems) {
            unknown.fetch_add(1, std::memory_order_relaxed);
        } else {
            taken[v].fetch_add(1, std::memory_order_relaxed);
        }
    };
    std::vector<std::thread> thieves;
    for (int k = 0; k < kThieves; ++k) {
        thieves.emplace_back([&] {
            for (std::uint64_t r = 1;; ++r) {
                if (!spin_until([&] { return stop.load() || started.load() >= r; }, give_up) ||
                    stop.load()) {
                    return;
                }
                Deque& d = *current.load(std::memory_order_acquire);
                ready.fetch_add(1, std::memory_order_acq_rel);  // stealing from now on
                std::uint64_t last = 0;
                lesson04_testing::steal_until_done(
                    d, [&] { return closing.load(std::memory_order_acquire) >= r; }, give_up,
                    [&](auto v) {
                        if (v <= last) out_of_order.fetch_add(1, std::memory_order_relaxed);
                        last = v;
                        record(v);
                    });
                finished.fetch_add(1, std::memory_order_acq_rel);
            }
        });
    }
    lesson04_testing::PreemptionNoise noise;
    const auto ran = ws::testing::stress(rounds, 3s * slowdown(), [&](auto&, std::uint64_t) {
        const std::uint64_t r = started.load() + 1;
        for (auto& t : taken)
            t.store(0, std::memory_order_relaxed);
        auto d = std::make_unique<Deque>(1);
        current.store(d.get(), std::memory_order_release);
        started.store(r, std::memory_order_release);
        // Push only once the thieves are stealing, so that the growths happen under their feet.
        ASSERT_TRUE(spin_until([&] { return ready.load() >= r * kThieves; }, give_up))
            << "round " << r << ": a thief did not start";
        for (std::uint64_t i = 1; i <= kItems; ++i)
            d->push(i);
        closing.store(r, std::memory_order_release);
        while (auto item = d->pop())
            record(*item);
        ASSERT_TRUE(spin_until([&] { return finished.load() >= r * kThieves; }, give_up))
            << "round " << r << ": a thief did not finish";
        std::uint64_t bad = 0;
        for (std::uint64_t i = 1; i <= kItems; ++i)
            bad += taken[i].load(std::memory_order_relaxed) != 1;
        ASSERT_EQ(bad, 0u) << "round " << r << ": " << bad << " of " << kItems
                           << " items were not taken exactly once";
        ASSERT_EQ(unknown.load(), 0u) << "round " << r << ": thieves got values never pushed";
        ASSERT_EQ(out_of_order.load(), 0u) << "round " << r << ": a thief's steals went backwards";
        EXPECT_GE(d->capacity(), 2u);
    });
    stop.store(true);
    for (auto& t : thieves)
        t.join();
    EXPECT_GT(ran, 100u) << "too few rounds ran to mean anything";
}

TEST(Lesson04Ex4, NothingLeakedAtDestruction) {
    // Every buffer, the live one and each retired one, is freed by the destructor. (This test
    // runs alone in its process under CTest; only this thread allocates while it measures.)
    auto fill_and_destroy = [](std::int64_t before, std::int64_t* peak, std::size_t* capacity) {
        Deque d(2);
        for (std::uint64_t i = 0; i < 10'000; ++i)
            d.push(i);  // 13 growths: 2 -> 16384
        for (std::uint64_t i = 0; i < 5'000; ++i)
            (void)d.pop();
        *capacity = d.capacity();
        *peak = live_heap_bytes() - before;
    };
    std::int64_t peak = 0;
    std::size_t capacity = 0;
    fill_and_destroy(live_heap_bytes(), &peak, &capacity);  // warm-up: the allocator settles
    const std::int64_t before = live_heap_bytes();
    fill_and_destroy(before, &peak, &capacity);
    const std::int64_t left = live_heap_bytes() - before;
    EXPECT_EQ(capacity, 16384u);
    EXPECT_LE(left, 0) << "of " << peak << " bytes the deque allocated, " << left
                       << " were not freed by its destructor: are the retired buffers freed?";
    // The retire bound: all buffers together take less than twice the live one (plus the
    // vector that lists them and the allocator's overhead).
    const auto live_buffer =
        static_cast<std::int64_t>(capacity * sizeof(std::atomic<std::uint64_t>));
    EXPECT_GE(peak, live_buffer);
    EXPECT_LT(peak, 2 * live_buffer + 16 * 1024) << "retired buffers hold more than the bound";
}
