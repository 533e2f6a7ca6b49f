// Lesson 04, exercise 1: the ring buffer, one thread at a time. None of these tests grows the
// deque (exercise 4) or runs two threads (exercise 2).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

#include <ws/testing/stress.hpp>

#include "chase_lev_deque.hpp"
#include "exercises.hpp"

using namespace std::chrono_literals;
using Deque = ws::lesson04::ChaseLevDeque<std::uint64_t>;

TEST(Lesson04Ex1, PopIsLastInFirstOut) {
    Deque d(8);
    for (std::uint64_t i = 1; i <= 5; ++i)
        d.push(i);
    EXPECT_EQ(d.size(), 5u);
    for (std::uint64_t i = 5; i >= 1; --i) {
        auto item = d.pop();
        ASSERT_TRUE(item.has_value()) << "pop found nothing, but " << i << " items were left";
        EXPECT_EQ(*item, i) << "pop must return the newest item";
    }
    EXPECT_FALSE(d.pop().has_value());
    EXPECT_EQ(d.size(), 0u);
}

TEST(Lesson04Ex1, StealIsFirstInFirstOut) {
    Deque d(8);
    for (std::uint64_t i = 1; i <= 5; ++i)
        d.push(i);
    for (std::uint64_t i = 1; i <= 5; ++i) {
        auto s = d.steal();
        ASSERT_TRUE(s.is_success()) << "steal found nothing, but " << 6 - i << " items were left";
        EXPECT_EQ(s.value(), i) << "steal must return the oldest item";
    }
    EXPECT_TRUE(d.steal().is_empty());
    EXPECT_EQ(d.size(), 0u);
}

TEST(Lesson04Ex1, PopAndStealOnAnEmptyDequeFindNothing) {
    Deque d(4);
    ASSERT_FALSE(d.pop().has_value()) << "a fresh deque is empty";
    ASSERT_EQ(d.size(), 0u) << "popping an empty deque must leave it empty (underflow?)";
    EXPECT_TRUE(d.steal().is_empty());
    EXPECT_FALSE(d.pop().has_value()) << "popping twice must not make up an item";
    d.push(42);
    auto item = d.pop();
    ASSERT_TRUE(item.has_value());
    EXPECT_EQ(*item, 42u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_FALSE(d.pop().has_value()) << "the deque was emptied";
        EXPECT_TRUE(d.steal().is_empty());
        EXPECT_EQ(d.size(), 0u);
    }
    d.push(7);
    EXPECT_EQ(d.size(), 1u) << "after empty pops, one push makes one item";
    auto s = d.steal();
    ASSERT_TRUE(s.is_success());
    EXPECT_EQ(s.value(), 7u);
}

TEST(Lesson04Ex1, BothEndsMeetOnTheLastItem) {
    Deque d(4);
    d.push(1);
    d.push(2);
    auto s = d.steal();
    ASSERT_TRUE(s.is_success());
    EXPECT_EQ(s.value(), 1u);
    auto p = d.pop();
    ASSERT_TRUE(p.has_value()) << "the last item belongs to whoever asks first";
    EXPECT_EQ(*p, 2u);
    EXPECT_FALSE(d.pop().has_value());
    EXPECT_TRUE(d.steal().is_empty());
}

TEST(Lesson04Ex1, IndicesWrapAroundTheRingWithoutGrowing) {
    // Capacity 4, but 10,000 items pass through: the slots are reused, index & (capacity - 1).
    Deque d(4);
    ASSERT_EQ(d.capacity(), 4u);
    std::uint64_t next = 1, expect_steal = 1;
    for (int round = 0; round < 2500; ++round) {
        for (int i = 0; i < 4; ++i)
            d.push(next++);
        // Take two from the top (oldest) and two from the bottom (newest).
        for (int i = 0; i < 2; ++i) {
            auto s = d.steal();
            ASSERT_TRUE(s.is_success());
            EXPECT_EQ(s.value(), expect_steal++);
        }
        auto newest = d.pop();
        ASSERT_TRUE(newest.has_value());
        EXPECT_EQ(*newest, next - 1);
        auto second = d.pop();
        ASSERT_TRUE(second.has_value());
        EXPECT_EQ(*second, next - 2);
        expect_steal += 2;
        ASSERT_EQ(d.size(), 0u);
    }
    EXPECT_EQ(d.capacity(), 4u) << "the deque never held more than 4 items: it must not grow";
}

TEST(Lesson04Ex1, CapacityIsAPowerOfTwoAtLeastTheOneAskedFor) {
    Deque d(5);
    EXPECT_EQ(d.capacity(), 8u);
    for (std::uint64_t i = 0; i < 8; ++i)
        d.push(i);  // fills it exactly: no growth needed yet
    EXPECT_EQ(d.capacity(), 8u);
    EXPECT_EQ(d.size(), 8u);
    for (std::uint64_t i = 0; i < 8; ++i)
        EXPECT_EQ(d.steal().value(), i);
}

TEST(Lesson04Ex1, ModelTestWithinCapacity) {
    // Random push / pop / steal against std::deque, never more items than the capacity.
    constexpr std::size_t kCapacity = 16;
    Deque d(kCapacity);
    std::deque<std::uint64_t> model;
    std::uint64_t next = 1;
    ws::testing::stress(200'000, 10s, [&](auto& rng, std::uint64_t op) {
        switch (rng() % 3) {
            case 0:
                if (model.size() < kCapacity) {
                    d.push(next);
                    model.push_back(next++);
                }
                break;
            case 1: {
                auto item = d.pop();
                if (model.empty()) {
                    ASSERT_FALSE(item.has_value()) << "op " << op << ": pop on an empty deque";
                } else {
                    ASSERT_TRUE(item.has_value()) << "op " << op << ": pop found nothing";
                    ASSERT_EQ(*item, model.back()) << "op " << op;
                    model.pop_back();
                }
                break;
            }
            default: {
                auto s = d.steal();
                ASSERT_FALSE(s.is_retry()) << "op " << op << ": with one thread, steal never loses";
                if (model.empty()) {
                    ASSERT_TRUE(s.is_empty()) << "op " << op << ": steal on an empty deque";
                } else {
                    ASSERT_TRUE(s.is_success()) << "op " << op << ": steal found nothing";
                    ASSERT_EQ(s.value(), model.front()) << "op " << op;
                    model.pop_front();
                }
            }
        }
        ASSERT_EQ(d.size(), model.size()) << "op " << op;
    });
    EXPECT_EQ(d.capacity(), kCapacity);
}
