// Lesson 07, exercise 6: parallel_for and parallel_reduce by recursive splitting.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <thread>

#include <ws/testing/exactly_once.hpp>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson07_test::on_worker;
using lesson07_test::spin_until;
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

namespace {
// What an idle worker's first steal ran of a range that the other worker splits.
struct FirstStealOfARange {
    bool owner_waited = false;  // the owner reached its first chunk and waited there
    bool found_a_job = false;   // the thief's try_run_one ran something
    std::size_t indices = 0;    // the indices of the chunks run inside that call
};

constexpr std::size_t kStealN = 4096, kStealGrain = 16;

// Two workers: the thief, held by a task of the test, and the owner, which calls
// `split(pool, chunk)` (a parallel_for or a parallel_reduce over [0, kStealN) in chunks of
// kStealGrain that calls chunk(begin, end) for each) from inside a task. At its first chunk the
// owner waits while the thief calls try_run_one once, as an idle worker steals: what runs inside
// that call is the thief's first steal. Split by halving, that is the other half of the range,
// and it splits on the thief's worker (the owner, waiting, takes none of it back).
template <typename Split>
FirstStealOfARange first_steal_of_a_range(Split split) {
    std::atomic<bool> thief_started{false}, owner_waits{false}, thief_done{false};
    std::thread::id thief;  // written before thief_started, read after it
    FirstStealOfARange seen;
    ThreadPool pool(2);  // after what its tasks use: its destructor waits for them
    pool.spawn([&] {
        thief = std::this_thread::get_id();
        thief_started = true;
        if (spin_until(owner_waits)) seen.found_a_job = pool.try_run_one();
        thief_done = true;
    });
    if (!spin_until(thief_started)) return seen;
    // From outside, once the thief holds one worker: the other one runs it.
    pool.spawn([&] {
        struct ReleaseTheThief {  // when the owner is done, also if it threw before any chunk
            std::atomic<bool>& owner_waits;
            ~ReleaseTheThief() { owner_waits = true; }
        } release{owner_waits};
        split(pool, [&](std::size_t begin, std::size_t end) {
            if (std::this_thread::get_id() == thief) {
                if (!thief_done.load()) seen.indices += end - begin;  // inside try_run_one
            } else if (!seen.owner_waited) {
                seen.owner_waited = true;
                owner_waits = true;
                spin_until(thief_done);
            }
        });
    });
    pool.wait_idle();
    return seen;
}
}  // namespace

TEST(Lesson07Ex6, AThiefsFirstStealTakesHalfOfAParallelForAndOfAParallelReduce) {
    const auto check = [](const char* what, const FirstStealOfARange& seen) {
        ASSERT_TRUE(seen.owner_waited) << what << ": the owner never ran a chunk";
        EXPECT_TRUE(seen.found_a_job)
            << what
            << ": while the owner ran its first chunk, an idle worker found nothing to "
               "steal: is the rest of the range in the owner's deque (split by join)?";
        EXPECT_GE(seen.indices, kStealN / 2)
            << what << ": an idle worker's first steal ran " << seen.indices << " of " << kStealN
            << " indices: split the range in halves, so that a thief takes half of it at once "
               "(a loop of spawns hands it one chunk per steal)";
    };
    check("parallel_for", first_steal_of_a_range([](ThreadPool& pool, auto chunk) {
              parallel_for(pool, 0, kStealN, kStealGrain, chunk);
          }));
    std::size_t sum = 0;
    check("parallel_reduce", first_steal_of_a_range([&sum](ThreadPool& pool, auto chunk) {
              sum = parallel_reduce(
                  pool, 0, kStealN, kStealGrain, std::size_t{0},
                  [&](std::size_t begin, std::size_t end) {
                      chunk(begin, end);
                      return end - begin;
                  },
                  [](std::size_t x, std::size_t y) { return x + y; });
          }));
    EXPECT_EQ(sum, kStealN);
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
