// Lesson 06, exercise 3: steal_batch_and_pop moves a bounded batch of the oldest items into a
// worker's deque and returns one more.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/harness.hpp>

#include "chase_lev_deque.hpp"
#include "exercises.hpp"
#include "injector.hpp"

using namespace std::chrono_literals;
using ws::lesson06::ChaseLevDeque;
using ws::lesson06::Injector;

namespace {
constexpr std::uint64_t kSlotsPerBlock = Injector<int>::kBlockSize;
constexpr std::uint64_t kMaxBatch = Injector<int>::kMaxBatch;

// Everything in the deque, oldest first (steal takes from the old end).
std::vector<int> drain_oldest_first(ChaseLevDeque<int>& d) {
    std::vector<int> out;
    for (;;) {
        auto s = d.steal();
        if (s.is_empty()) return out;
        if (s.is_success()) out.push_back(s.value());
    }
}

// Steals what is left in the injector: it must be next, next + 1, ..., end - 1, in that order.
void expect_rest_in_order(Injector<int>& q, int next, int end) {
    for (;;) {
        auto r = q.steal();
        if (r.is_empty()) break;
        ASSERT_TRUE(r.is_success());
        EXPECT_EQ(r.value(), next++);
    }
    EXPECT_EQ(next, end);
}
}  // namespace

TEST(Lesson06Ex3, ABatchReturnsTheOldestAndMovesTheNextOldest) {
    Injector<int> q;
    ChaseLevDeque<int> dest;
    for (int i = 0; i < 40; ++i)
        q.push(i);
    auto s = q.steal_batch_and_pop(dest);
    ASSERT_TRUE(s.is_success());
    EXPECT_EQ(s.value(), 0) << "the batch must start with the oldest item";
    const auto moved = drain_oldest_first(dest);
    ASSERT_GE(moved.size(), 2u) << "steal_batch_and_pop moved " << moved.size()
                                << " items into the deque: it takes one at a time";
    EXPECT_LE(moved.size(), kMaxBatch);
    for (std::size_t i = 0; i < moved.size(); ++i)
        EXPECT_EQ(moved[i], static_cast<int>(i + 1)) << "the batch must be the oldest items";
    // The rest is still in the injector, in order.
    expect_rest_in_order(q, static_cast<int>(moved.size()) + 1, 40);
}

TEST(Lesson06Ex3, BatchesAreBoundedAndDrainEverythingAcrossBlocks) {
    // A batch that runs past its block waits for slots nobody writes: fail in seconds, not in the
    // watchdog's default 30 (the test itself takes a millisecond).
    ws::testing::set_deadline(5s * ws::testing::slowdown());
    Injector<int> q;
    ChaseLevDeque<int> dest;
    const int n = static_cast<int>(10 * kSlotsPerBlock + 7);
    for (int i = 0; i < n; ++i)
        q.push(i);
    std::vector<int> got;
    std::size_t batches = 0, largest = 0;
    for (;;) {
        auto s = q.steal_batch_and_pop(dest);
        if (s.is_empty()) break;
        ASSERT_TRUE(s.is_success());
        ++batches;
        got.push_back(s.value());
        const auto moved = drain_oldest_first(dest);
        largest = std::max(largest, moved.size());
        got.insert(got.end(), moved.begin(), moved.end());
    }
    ASSERT_EQ(got.size(), static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
        ASSERT_EQ(got[static_cast<std::size_t>(i)], i) << "batches must come oldest first";
    EXPECT_LE(largest, kMaxBatch) << "a batch moved more than kMaxBatch items";
    EXPECT_LT(batches, static_cast<std::size_t>(n) / 2) << "batches of one item";
    EXPECT_TRUE(q.is_empty());
    // Every block a batch finished was freed: a batch of n slots releases n reads.
    EXPECT_LE(q.live_blocks(), 2u)
        << q.live_blocks() << " blocks are still allocated after 10 blocks went through in "
        << "batches: does a batch release one read per slot it took, and does the release that "
           "completes a block free it?";
}

TEST(Lesson06Ex3, ABatchAtABlocksLastSlotTakesThatSlotOnly) {
    // The head at a block's last slot and the tail just inside the next block, for the first 40
    // blocks: a batch may take that one slot only (the next block's items lie beyond a phantom
    // position), and the batch after it goes on in the next block. Positions advance by
    // kSlotsPerBlock + 1 per block, so a block-boundary test that divides a position by
    // kSlotsPerBlock instead goes wrong only from the second block on, and only while the tail
    // is close behind. A batch that runs past its block waits for slots nobody writes: fail in
    // a second, not in the watchdog's default 30 (the test itself takes well under a
    // millisecond).
    ws::testing::set_deadline(1s * ws::testing::slowdown());
    Injector<int> q;
    ChaseLevDeque<int> dest;
    constexpr int kBlockItems = static_cast<int>(kSlotsPerBlock);
    int pushed = 0, taken = 0;
    for (int block = 0; block < 40; ++block) {
        const int last = block * kBlockItems + kBlockItems - 1;  // the item in its last slot
        while (pushed < last + 6)                                // five items into the next block
            q.push(pushed++);
        while (taken < last) {  // one at a time, up to the last slot
            auto s = q.steal();
            ASSERT_TRUE(s.is_success());
            ASSERT_EQ(s.value(), taken++);
        }
        auto at_end = q.steal_batch_and_pop(dest);
        ASSERT_TRUE(at_end.is_success());
        ASSERT_EQ(at_end.value(), taken++) << "block " << block;
        ASSERT_EQ(dest.size(), 0u) << "a batch at block " << block << "'s last slot moved "
                                   << dest.size() << " more: a batch never leaves its block";
        auto next = q.steal_batch_and_pop(dest);  // five items, all in the next block
        ASSERT_TRUE(next.is_success());
        ASSERT_EQ(next.value(), taken++);
        const auto moved = drain_oldest_first(dest);
        ASSERT_FALSE(moved.empty()) << "a batch of five queued items moved none into the deque";
        for (int v : moved)
            ASSERT_EQ(v, taken++) << "the batch must be the oldest items, in order";
    }
}

TEST(Lesson06Ex3, OneItemIsReturnedNotMoved) {
    Injector<int> q;
    ChaseLevDeque<int> dest;
    q.push(7);
    auto s = q.steal_batch_and_pop(dest);
    ASSERT_TRUE(s.is_success());
    EXPECT_EQ(s.value(), 7);
    EXPECT_EQ(dest.size(), 0u);
    EXPECT_TRUE(q.steal_batch_and_pop(dest).is_empty());
}

// A batch must fit the room its deque has: growing the deque allocates, and a std::bad_alloc
// after the claiming CAS would lose every claimed item (no other consumer can reach them).
TEST(Lesson06Ex3, ABatchFitsTheDequeWithoutGrowingIt) {
    Injector<int> q;
    ChaseLevDeque<int> dest(4);
    dest.push(-1);  // room for 3 more
    for (int i = 0; i < 40; ++i)
        q.push(i);
    auto s = q.steal_batch_and_pop(dest);
    ASSERT_TRUE(s.is_success());
    EXPECT_EQ(s.value(), 0) << "the batch must start with the oldest item";
    EXPECT_EQ(dest.capacity(), 4u)
        << "steal_batch_and_pop grew the deque: take no more than it holds without growing";
    auto held = drain_oldest_first(dest);
    ASSERT_FALSE(held.empty());
    EXPECT_EQ(held.front(), -1) << "the item the deque held before was lost";
    held.erase(held.begin());
    EXPECT_LE(held.size(), 3u);
    // Nothing lost or reordered: the batch, then the injector's rest.
    int expect = 1;
    for (int v : held)
        EXPECT_EQ(v, expect++);
    expect_rest_in_order(q, expect, 40);
}

TEST(Lesson06Ex3, AFullDequeStillGetsTheOldestItem) {
    Injector<int> q;
    ChaseLevDeque<int> dest(4);
    for (int i = 0; i < 4; ++i)
        dest.push(-1 - i);  // full
    for (int i = 0; i < 10; ++i)
        q.push(i);
    auto s = q.steal_batch_and_pop(dest);
    ASSERT_TRUE(s.is_success());
    EXPECT_EQ(s.value(), 0);
    EXPECT_EQ(dest.capacity(), 4u) << "steal_batch_and_pop grew a full deque";
    EXPECT_EQ(dest.size(), 4u) << "a full deque can take no batch: only the returned item";
    auto r = q.steal();
    ASSERT_TRUE(r.is_success());
    EXPECT_EQ(r.value(), 1) << "the next oldest item must still be in the injector: a full deque "
                               "takes no batch";
}

TEST(Lesson06Ex3, ConcurrentBatchesTakeEveryItemExactlyOnce) {
    // Three producers; two workers take batches into their own deques and run them from
    // there, while a thief steals from both deques.
    constexpr std::size_t kProducers = 3, kPerProducer = 60'000, kWorkers = 2;
    constexpr std::size_t kTotal = kProducers * kPerProducer;
    Injector<std::uint32_t> q;
    std::vector<std::unique_ptr<ChaseLevDeque<std::uint32_t>>> deques;
    for (std::size_t w = 0; w < kWorkers; ++w)
        deques.push_back(std::make_unique<ChaseLevDeque<std::uint32_t>>(8));
    ws::testing::ExactlyOnce seen(kTotal);
    std::atomic<std::size_t> taken{0};
    const auto deadline = std::chrono::steady_clock::now() + 20s * ws::testing::slowdown();
    auto note = [&](std::uint32_t item) {
        seen.mark(item);
        taken.fetch_add(1, std::memory_order_relaxed);
    };
    auto running = [&] {
        return taken.load(std::memory_order_relaxed) < kTotal &&
               std::chrono::steady_clock::now() < deadline;
    };
    std::vector<std::thread> threads;
    for (std::size_t p = 0; p < kProducers; ++p) {
        threads.emplace_back([&, p] {
            for (std::size_t i = 0; i < kPerProducer; ++i)
                q.push(static_cast<std::uint32_t>(p * kPerProducer + i));
        });
    }
    for (std::size_t w = 0; w < kWorkers; ++w) {
        threads.emplace_back([&, w] {
            auto& mine = *deques[w];
            while (running()) {
                if (auto item = mine.pop()) {
                    note(*item);
                    continue;
                }
                auto s = q.steal_batch_and_pop(mine);
                if (s.is_success()) note(s.value());
            }
        });
    }
    threads.emplace_back([&] {
        while (running()) {
            for (auto& d : deques) {
                auto s = d->steal();
                if (s.is_success()) note(s.value());
            }
        }
    });
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(taken.load(), kTotal);
    EXPECT_TRUE(seen.verify());
}
