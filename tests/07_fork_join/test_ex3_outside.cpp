// Lesson 07, exercise 3: fork-join called from outside the pool hands the work to the pool
// and blocks the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson07_test::fib;
using ws::lesson07::join;
using ws::lesson07::ThreadPool;

TEST(Lesson07Ex3, JoinFromOutsideThePool) {
    ThreadPool pool(2);
    EXPECT_EQ(fib(pool, 27), 196'418u);  // the first join is called from this thread
}

TEST(Lesson07Ex3, JoinFromOutsideRunsOnTheWorkersAndBlocksTheCaller) {
    ThreadPool pool(2);
    const auto caller = std::this_thread::get_id();
    std::atomic<bool> a_on_caller{false}, b_on_caller{false}, b_done{false};
    join(
        pool, [&] { a_on_caller = std::this_thread::get_id() == caller; },
        [&] {
            b_on_caller = std::this_thread::get_id() == caller;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            b_done = true;
        });
    EXPECT_TRUE(b_done.load()) << "join returned before b had finished";
    EXPECT_FALSE(a_on_caller.load()) << "from outside, the work runs on the pool's workers";
    EXPECT_FALSE(b_on_caller.load());
}

TEST(Lesson07Ex3, JoinFromAnotherPoolsWorkerCountsAsOutside) {
    ThreadPool outer(1), inner(2);
    std::uint64_t result = 0;
    outer.spawn([&] { result = fib(inner, 20); });
    outer.wait_idle();
    EXPECT_EQ(result, 6765u);
}

TEST(Lesson07Ex3, JoinsFromSeveralOutsideThreadsAtOnce) {
    ThreadPool pool(2);
    std::atomic<std::uint64_t> total{0};
    std::thread t1([&] { total += fib(pool, 20); });
    std::thread t2([&] { total += fib(pool, 20); });
    total += fib(pool, 20);
    t1.join();
    t2.join();
    EXPECT_EQ(total.load(), 3u * 6765u);
}

TEST(Lesson07Ex3, WaitIdleStillWorksAfterOutsideJoins) {
    ThreadPool pool(2);
    std::atomic<int> ran{0};
    join(
        pool, [&] { ran++; }, [&] { ran++; });
    for (int i = 0; i < 100; ++i)
        pool.spawn([&] { ran++; });
    pool.wait_idle();
    EXPECT_EQ(ran.load(), 102);
}
