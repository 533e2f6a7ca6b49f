// Lesson 06, exercise 2: reclaiming blocks once no reader can touch them. Under
// AddressSanitizer these tests also catch a block freed too early (use-after-free) or never.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/harness.hpp>
#include <ws/testing/stress.hpp>

#include "exercises.hpp"
#include "injector.hpp"

using namespace std::chrono_literals;
using ws::lesson06::Injector;

TEST(Lesson06Ex2, BlocksAreFreedOnceEveryItemWasRead) {
    Injector<int> q;
    for (int round = 0; round < 2'000; ++round) {
        for (int i = 0; i < 50; ++i)
            q.push(i);
        for (int i = 0; i < 50; ++i)
            ASSERT_TRUE(q.steal().is_success());
    }
    // 100,000 items went through about 1,600 blocks; only the current one (and perhaps the
    // next) may still be alive.
    EXPECT_LE(q.live_blocks(), 2u)
        << q.live_blocks() << " blocks are still allocated: used-up blocks are never freed";
}

TEST(Lesson06Ex2, BlocksAreFreedUnderConcurrentUse) {
    // Two producers and three consumers race through many blocks; afterwards at most the
    // current block is alive. Under ASan a block freed while a reader still used it is a
    // heap-use-after-free report.
    constexpr std::size_t kProducers = 2, kPerProducer = 100'000, kConsumers = 3;
    constexpr std::size_t kTotal = kProducers * kPerProducer;
    Injector<std::uint32_t> q;
    ws::testing::ExactlyOnce seen(kTotal);
    std::atomic<std::size_t> taken{0};
    std::vector<std::thread> threads;
    for (std::size_t p = 0; p < kProducers; ++p) {
        threads.emplace_back([&, p] {
            for (std::size_t i = 0; i < kPerProducer; ++i)
                q.push(static_cast<std::uint32_t>(p * kPerProducer + i));
        });
    }
    for (std::size_t c = 0; c < kConsumers; ++c) {
        threads.emplace_back([&] {
            const auto deadline = std::chrono::steady_clock::now() + 20s * ws::testing::slowdown();
            while (taken.load(std::memory_order_relaxed) < kTotal &&
                   std::chrono::steady_clock::now() < deadline) {
                auto s = q.steal();
                if (s.is_success()) {
                    seen.mark(s.value());
                    taken.fetch_add(1, std::memory_order_relaxed);
                }
            }
        });
    }
    for (auto& t : threads)
        t.join();
    ASSERT_TRUE(seen.verify());
    EXPECT_LE(q.live_blocks(), 2u) << "used-up blocks are never freed";
}

TEST(Lesson06Ex2, ManyShortLivedInjectorsStress) {
    // Seeded: random counts of pushes and steals per round, from two threads, then the
    // destructor frees what is left (ASan checks both that nothing leaks and nothing is freed
    // twice).
    const auto rounds = ws::testing::stress(400, 10s, [](std::mt19937_64& rng, std::uint64_t) {
        const std::size_t n = rng() % (4 * Injector<int>::kBlockSize);
        const std::size_t k = n == 0 ? 0 : rng() % (n + 1);
        Injector<int> q;
        std::atomic<std::size_t> got{0};
        std::thread consumer([&] {
            std::size_t tries = 0;
            while (got.load(std::memory_order_relaxed) < k && ++tries < 50'000'000) {
                if (q.steal().is_success()) got.fetch_add(1, std::memory_order_relaxed);
            }
        });
        for (std::size_t i = 0; i < n; ++i)
            q.push(static_cast<int>(i));
        consumer.join();
        ASSERT_EQ(got.load(), k);
        EXPECT_EQ(q.size(), n - k);
    });
    EXPECT_GT(rounds, 0u);
}
