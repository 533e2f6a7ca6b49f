// Lesson 04, exercise 4: growth. A full deque doubles; old buffers are retired, not freed,
// until the deque is destroyed.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <new>
#include <optional>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/harness.hpp>
#include <ws/testing/stress.hpp>

#include "chase_lev_deque.hpp"
#include "deque_testing.hpp"
#include "exercises.hpp"

using namespace std::chrono_literals;
using Deque = ws::lesson04::ChaseLevDeque<std::uint64_t>;
using lesson04_testing::Clock;
using lesson04_testing::spin_until;
using ws::testing::slowdown;

// Live heap bytes allocated by the current thread while counting is on: operator new and
// delete are replaced for this test binary (they stay plain malloc/free underneath, which the
// sanitizers still watch).
namespace {
thread_local bool tl_counting = false;
thread_local std::int64_t tl_live_bytes = 0;
thread_local std::int64_t tl_allocations = 0;

void* counted_alloc(std::size_t size) {
    // Room in front for the size, keeping max_align_t alignment.
    constexpr std::size_t kHeader = alignof(std::max_align_t);
    void* raw = std::malloc(size + kHeader);
    if (raw == nullptr) throw std::bad_alloc{};
    *static_cast<std::size_t*>(raw) = size;
    if (tl_counting) {
        tl_live_bytes += static_cast<std::int64_t>(size);
        ++tl_allocations;
    }
    return static_cast<char*>(raw) + kHeader;
}

void counted_free(void* p) noexcept {
    if (p == nullptr) return;
    constexpr std::size_t kHeader = alignof(std::max_align_t);
    void* raw = static_cast<char*>(p) - kHeader;
    if (tl_counting) tl_live_bytes -= static_cast<std::int64_t>(*static_cast<std::size_t*>(raw));
    std::free(raw);
}
}  // namespace

void* operator new(std::size_t size) {
    return counted_alloc(size);
}
void* operator new[](std::size_t size) {
    return counted_alloc(size);
}
void operator delete(void* p) noexcept {
    counted_free(p);
}
void operator delete[](void* p) noexcept {
    counted_free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    counted_free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    counted_free(p);
}

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
    constexpr int kThieves = 2;
    const std::uint64_t n = 300'000 / static_cast<std::uint64_t>(slowdown());
    Deque d(2);
    ws::testing::ExactlyOnce seen(n);
    std::atomic<bool> owner_done{false};
    const auto deadline = Clock::now() + 20s * slowdown();
    std::vector<std::thread> thieves;
    for (int k = 0; k < kThieves; ++k) {
        thieves.emplace_back([&] {
            for (;;) {
                auto s = d.steal();
                if (s.is_success()) {
                    seen.mark(s.value());
                } else if (s.is_empty() && (owner_done.load(std::memory_order_acquire) ||
                                            Clock::now() > deadline)) {
                    return;
                }
            }
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
    // Rounds of: a fresh deque of capacity 2; the owner pushes 1..n as fast as it can (growing
    // it about log2(n) times) while two thieves steal. Each thief sees an increasing sequence,
    // and every item is taken exactly once. Thieves that loaded an old buffer just before a
    // growth read from it: it must still be alive.
    constexpr int kThieves = 2;
    const std::uint64_t n = 50'000 / static_cast<std::uint64_t>(slowdown());
    ws::testing::stress(20, 20s * slowdown(), [&](auto&, std::uint64_t round) {
        Deque d(2);
        ws::testing::ExactlyOnce seen(n + 1);
        std::atomic<bool> owner_done{false};
        std::atomic<int> ready{0};
        std::atomic<std::uint64_t> out_of_order{0};
        const auto deadline = Clock::now() + 10s * slowdown();
        std::vector<std::thread> thieves;
        for (int k = 0; k < kThieves; ++k) {
            thieves.emplace_back([&] {
                std::uint64_t last = 0;
                ready.fetch_add(1);
                for (;;) {
                    auto s = d.steal();
                    if (s.is_success()) {
                        if (s.value() <= last) out_of_order.fetch_add(1);
                        last = s.value();
                        seen.mark(s.value());
                    } else if (s.is_empty() && (owner_done.load(std::memory_order_acquire) ||
                                                Clock::now() > deadline)) {
                        return;
                    }
                }
            });
        }
        spin_until([&] { return ready.load() == kThieves; }, deadline);
        for (std::uint64_t i = 1; i <= n; ++i)
            d.push(i);
        owner_done.store(true, std::memory_order_release);
        while (auto item = d.pop())
            seen.mark(*item);
        for (auto& t : thieves)
            t.join();
        seen.mark(0);
        ASSERT_EQ(out_of_order.load(), 0u) << "round " << round
                                           << ": a thief's steals went "
                                              "backwards";
        ASSERT_TRUE(seen.verify()) << "round " << round;
    });
}

TEST(Lesson04Ex4, NothingLeakedAtDestruction) {
    // Every buffer, the live one and each retired one, is freed by the destructor.
    tl_live_bytes = 0;
    tl_allocations = 0;
    tl_counting = true;
    std::int64_t peak = 0;
    std::size_t capacity = 0;
    {
        Deque d(2);
        for (std::uint64_t i = 0; i < 10'000; ++i)
            d.push(i);  // 13 growths: 2 -> 16384
        for (std::uint64_t i = 0; i < 5'000; ++i)
            (void)d.pop();
        capacity = d.capacity();
        peak = tl_live_bytes;
    }
    tl_counting = false;
    EXPECT_EQ(capacity, 16384u);
    EXPECT_GE(tl_allocations, 14) << "one buffer per growth, plus the first";
    EXPECT_EQ(tl_live_bytes, 0) << "of " << peak << " bytes the deque allocated, " << tl_live_bytes
                                << " were not freed by its destructor";
    // The retire bound: all buffers together take less than twice the live one (plus the
    // vector that lists them).
    const auto live_buffer =
        static_cast<std::int64_t>(capacity * sizeof(std::atomic<std::uint64_t>));
    EXPECT_LT(peak, 2 * live_buffer + 4096) << "retired buffers hold more than the bound";
}
