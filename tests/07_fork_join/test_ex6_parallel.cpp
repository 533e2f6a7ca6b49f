// Lesson 07, exercise 6: parallel_for and parallel_reduce by recursive splitting.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>

#include <ws/testing/exactly_once.hpp>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson07_test::on_worker;
using ws::lesson07::parallel_for;
using ws::lesson07::parallel_reduce;
using ws::lesson07::ThreadPool;

namespace {
void check_parallel_for(std::size_t grain) {
    constexpr std::size_t kN = 1'000'000;
    ThreadPool pool(2);
    ws::testing::ExactlyOnce seen(kN);
    std::atomic<std::size_t> too_big{0};
    parallel_for(pool, 0, kN, grain, [&](std::size_t begin, std::size_t end) {
        if (end - begin > grain || begin >= end) too_big.fetch_add(1);
        for (std::size_t i = begin; i < end; ++i)
            seen.mark(i);
    });
    EXPECT_TRUE(seen.verify()) << "grain " << grain;
    EXPECT_EQ(too_big.load(), 0u) << "chunks must hold between 1 and `grain` indices";
}
}  // namespace

TEST(Lesson07Ex6, ParallelForHitsEachOfAMillionIndicesOnceWithGrain1) {
    check_parallel_for(1);
}

TEST(Lesson07Ex6, ParallelForHitsEachOfAMillionIndicesOnceWithGrain1000) {
    check_parallel_for(1000);
}

namespace {
// In a child process: parallel_for, then parallel_reduce, over [SIZE_MAX - 10,000, SIZE_MAX),
// indices that are legal but near the top of std::size_t. Exit code 0: each index once, in
// chunks of 1 to 7, and the right sum; 1: a chunk outside the range reached parallel_for's body,
// 3: parallel_reduce's map (the child stops at once: a split that leaves the range may recurse
// without end, and would only end by overflowing the stack); 2 and 4: an index missed or seen
// twice.
[[noreturn]] void parallel_for_and_reduce_at_the_top_of_size_t() {
    constexpr std::size_t kN = 10'000, kGrain = 7;
    constexpr std::size_t kEnd = std::numeric_limits<std::size_t>::max();
    constexpr std::size_t kBegin = kEnd - kN;
    const auto outside = [](std::size_t begin, std::size_t end) {
        return begin < kBegin || end < begin || end - begin > kGrain;
    };
    ThreadPool pool(2);
    ws::testing::ExactlyOnce seen(kN);
    parallel_for(pool, kBegin, kEnd, kGrain, [&](std::size_t begin, std::size_t end) {
        if (outside(begin, end)) std::_Exit(1);
        for (std::size_t i = begin; i < end; ++i)
            seen.mark(i - kBegin);
    });
    if (!seen.verify()) std::_Exit(2);
    const std::size_t sum = parallel_reduce(
        pool, kBegin, kEnd, kGrain, std::size_t{0},
        [&](std::size_t begin, std::size_t end) {
            if (outside(begin, end)) std::_Exit(3);
            std::size_t s = 0;
            for (std::size_t i = begin; i < end; ++i)
                s += i - kBegin;
            return s;
        },
        [](std::size_t x, std::size_t y) { return x + y; });
    std::_Exit(sum == kN * (kN - 1) / 2 ? 0 : 4);
}
}  // namespace

TEST(Lesson07Ex6, ParallelForAndReduceAtTheTopOfTheIndexRange) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // the parent runs threads of its own
    EXPECT_EXIT(parallel_for_and_reduce_at_the_top_of_size_t(), ::testing::ExitedWithCode(0), "")
        << "parallel_for or parallel_reduce over the last 10,000 indices of std::size_t gave a "
           "chunk outside [begin, end) to the body or map (exit code 1 or 3), missed an index "
           "(2 or 4) or crashed: the middle of a range must be computed in a way that cannot "
           "overflow";
}

TEST(Lesson07Ex6, ParallelForOnAnEmptyRangeCallsNothing) {
    ThreadPool pool(2);
    int calls = 0;
    parallel_for(pool, 5, 5, 10, [&](std::size_t, std::size_t) { ++calls; });
    EXPECT_EQ(calls, 0);
}

TEST(Lesson07Ex6, ParallelForFromInsideATaskOnOneWorker) {
    ThreadPool pool(1);
    ws::testing::ExactlyOnce seen(10'000);
    on_worker(pool, [&] {
        parallel_for(pool, 0, 10'000, 7, [&](std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i)
                seen.mark(i);
        });
    });
    EXPECT_TRUE(seen.verify());
}

TEST(Lesson07Ex6, ParallelReduceSumsCorrectly) {
    ThreadPool pool(2);
    constexpr std::uint64_t kN = 1'000'000;
    for (std::size_t grain : {1, 1000, 2'000'000}) {
        const std::uint64_t sum = parallel_reduce(
            pool, 0, kN, grain, std::uint64_t{0},
            [](std::size_t b, std::size_t e) {
                std::uint64_t s = 0;
                for (std::size_t i = b; i < e; ++i)
                    s += i;
                return s;
            },
            [](std::uint64_t x, std::uint64_t y) { return x + y; });
        EXPECT_EQ(sum, kN * (kN - 1) / 2) << "grain " << grain;
    }
}

TEST(Lesson07Ex6, ParallelReduceKeepsTheOrderOfANonCommutativeReduce) {
    // Concatenation is associative but not commutative: left must stay left.
    ThreadPool pool(2);
    const std::string digits = parallel_reduce(
        pool, 0, 1000, 3, std::string(),
        [](std::size_t b, std::size_t e) {
            std::string s;
            for (std::size_t i = b; i < e; ++i)
                s += static_cast<char>('0' + i % 10);
            return s;
        },
        [](std::string x, const std::string& y) { return x + y; });
    std::string expected;
    for (int i = 0; i < 1000; ++i)
        expected += static_cast<char>('0' + i % 10);
    EXPECT_EQ(digits, expected);
}

TEST(Lesson07Ex6, ParallelReduceOfAnEmptyRangeIsTheIdentity) {
    ThreadPool pool(2);
    const int r = parallel_reduce(
        pool, 3, 3, 1, 42, [](std::size_t, std::size_t) { return 1; },
        [](int x, int y) { return x + y; });
    EXPECT_EQ(r, 42);
}

TEST(Lesson07Ex6, ParallelReduceWorksForATypeWithoutDefaultConstructor) {
    struct Sum {
        explicit Sum(std::uint64_t v) : value(v) {}
        std::uint64_t value;
    };
    ThreadPool pool(2);
    const Sum s = parallel_reduce(
        pool, 0, 10'000, 10, Sum(0),
        [](std::size_t b, std::size_t e) {
            std::uint64_t v = 0;
            for (std::size_t i = b; i < e; ++i)
                v += i;
            return Sum(v);
        },
        [](Sum x, Sum y) { return Sum(x.value + y.value); });
    EXPECT_EQ(s.value, 10'000u * 9'999u / 2);
}
