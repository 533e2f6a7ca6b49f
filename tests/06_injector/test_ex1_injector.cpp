// Lesson 06, exercise 1: the injector's push and steal — an unbounded MPMC FIFO.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/harness.hpp>

#include "exercises.hpp"
#include "injector.hpp"

using ws::lesson06::Injector;

namespace {

constexpr std::size_t kBlock = Injector<int>::kBlockSize;

// Steals until success or empty (retry cannot happen single-threaded, but do not rely on it).
template <typename T>
ws::Steal<T> steal_one(Injector<T>& q) {
    for (;;) {
        auto s = q.steal();
        if (!s.is_retry()) return s;
    }
}

}  // namespace

TEST(Lesson06Ex1, AFreshInjectorIsEmpty) {
    Injector<int> q;
    EXPECT_TRUE(q.is_empty());
    EXPECT_EQ(q.size(), 0u);
    EXPECT_TRUE(q.steal().is_empty());
}

TEST(Lesson06Ex1, CountsAroundTheBlockSizeComeOutInOrder) {
    // One thread: push n, then steal n, oldest first; then it is empty. The counts sit around
    // the block boundaries, where the tail and the head move to the next block.
    for (std::size_t n : {std::size_t{1}, kBlock - 1, kBlock, kBlock + 1, 2 * kBlock - 1,
                          2 * kBlock, 2 * kBlock + 1, 5 * kBlock + 3}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        Injector<int> q;
        for (std::size_t i = 0; i < n; ++i)
            q.push(static_cast<int>(i));
        EXPECT_EQ(q.size(), n);
        EXPECT_FALSE(q.is_empty());
        for (std::size_t i = 0; i < n; ++i) {
            auto s = steal_one(q);
            ASSERT_TRUE(s.is_success()) << "item " << i << " of " << n << " is missing";
            ASSERT_EQ(s.value(), static_cast<int>(i)) << "not FIFO";
        }
        EXPECT_TRUE(q.steal().is_empty());
        EXPECT_TRUE(q.is_empty());
        EXPECT_EQ(q.size(), 0u);
    }
}

TEST(Lesson06Ex1, InterleavedPushAndStealAcrossManyBlocks) {
    // The head follows the tail closely through many blocks (both ends cross boundaries while
    // the queue holds 0, 1 or 2 items).
    Injector<int> q;
    int next_out = 0;
    for (int i = 0; i < 20 * static_cast<int>(kBlock); ++i) {
        q.push(i);
        if (i % 3 != 0) {
            auto s = steal_one(q);
            ASSERT_TRUE(s.is_success());
            ASSERT_EQ(s.value(), next_out++);
        }
    }
    while (next_out < 20 * static_cast<int>(kBlock)) {
        auto s = steal_one(q);
        ASSERT_TRUE(s.is_success());
        ASSERT_EQ(s.value(), next_out++);
    }
    EXPECT_TRUE(q.steal().is_empty());
}

TEST(Lesson06Ex1, MoveOnlyItemsAndLeftoversAreDestroyed) {
    auto alive = std::make_shared<int>(0);
    struct Counted {
        std::shared_ptr<int> alive;
        explicit Counted(std::shared_ptr<int> a) : alive(std::move(a)) { ++*alive; }
        Counted(Counted&& o) noexcept : alive(o.alive) { ++*alive; }
        Counted(const Counted&) = delete;
        ~Counted() { --*alive; }
    };
    {
        Injector<std::unique_ptr<Counted>> q;
        for (std::size_t i = 0; i < 3 * kBlock; ++i)
            q.push(std::make_unique<Counted>(alive));
        for (std::size_t i = 0; i < kBlock + 5; ++i)
            ASSERT_TRUE(steal_one(q).is_success());
        EXPECT_EQ(*alive, static_cast<int>(2 * kBlock - 5));
    }
    EXPECT_EQ(*alive, 0) << "the destructor must destroy the items still inside";
}

TEST(Lesson06Ex1, FourProducersFourConsumersEachItemOnceInProducerOrder) {
    constexpr std::size_t kProducers = 4, kPerProducer = 50'000, kConsumers = 4;
    constexpr std::size_t kTotal = kProducers * kPerProducer;
    Injector<std::uint64_t> q;
    ws::testing::ExactlyOnce seen(kTotal);
    std::atomic<std::size_t> taken{0};
    std::atomic<int> order_violations{0};
    std::atomic<bool> go{false};

    std::vector<std::thread> threads;
    for (std::size_t p = 0; p < kProducers; ++p) {
        threads.emplace_back([&, p] {
            while (!go.load())
                std::this_thread::yield();
            for (std::size_t i = 0; i < kPerProducer; ++i)
                q.push(p * kPerProducer + i);
        });
    }
    for (std::size_t c = 0; c < kConsumers; ++c) {
        threads.emplace_back([&] {
            // FIFO: one consumer sees each producer's items in the order they were pushed.
            std::vector<std::int64_t> last(kProducers, -1);
            const auto deadline = std::chrono::steady_clock::now() +
                                  std::chrono::seconds(20) * ws::testing::slowdown();
            while (!go.load())
                std::this_thread::yield();
            while (taken.load(std::memory_order_relaxed) < kTotal) {
                auto s = q.steal();
                if (!s.is_success()) {
                    if (std::chrono::steady_clock::now() > deadline) return;
                    continue;
                }
                const std::uint64_t item = s.value();
                seen.mark(item);
                const std::size_t producer = item / kPerProducer;
                const auto seq = static_cast<std::int64_t>(item % kPerProducer);
                if (producer < kProducers) {
                    if (seq <= last[producer]) order_violations.fetch_add(1);
                    last[producer] = seq;
                }
                taken.fetch_add(1, std::memory_order_relaxed);
            }
        });
    }
    go = true;
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(taken.load(), kTotal) << "consumers gave up: items were lost";
    EXPECT_TRUE(seen.verify());
    EXPECT_EQ(order_violations.load(), 0)
        << "a consumer saw a producer's items out of order: the injector is not FIFO";
    EXPECT_TRUE(q.is_empty());
}
