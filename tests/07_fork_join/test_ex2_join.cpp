// Lesson 07, exercise 2: join with helping, called from inside a task.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson07_test::fib;
using lesson07_test::on_worker;
using lesson07_test::spin_until;
using ws::lesson07::join;
using ws::lesson07::ThreadPool;

TEST(Lesson07Ex2, JoinRunsBothHalves) {
    ThreadPool pool(2);
    bool a = false, b = false;
    on_worker(pool, [&] {
        join(
            pool, [&] { a = true; }, [&] { b = true; });
    });
    EXPECT_TRUE(a);
    EXPECT_TRUE(b);
}

TEST(Lesson07Ex2, FibOf27ThroughJoinOnOneWorker) {
    // One worker: every join must pop its own b and run it. A join that blocked would wait
    // for itself forever.
    ThreadPool pool(1);
    std::uint64_t result = 0;
    on_worker(pool, [&] { result = fib(pool, 27); });
    EXPECT_EQ(result, 196'418u);
}

TEST(Lesson07Ex2, FibOf27ThroughJoinOnTwoWorkers) {
    ThreadPool pool(2);
    std::uint64_t result = 0;
    on_worker(pool, [&] { result = fib(pool, 27); });
    EXPECT_EQ(result, 196'418u);
    const ws::PoolStats s = pool.stats();
    EXPECT_GT(s.steals, 0u) << "the idle worker should have stolen some b halves";
    EXPECT_GT(s.executed_per_worker.at(0), 0u);
    EXPECT_GT(s.executed_per_worker.at(1), 0u);
}

TEST(Lesson07Ex2, JoinLetsAnotherWorkerRunBWhileARuns) {
    // a waits until b has started, and b until a has: only possible when b is stolen and
    // runs in parallel with a (a join that ran a and b one after the other fails here).
    ThreadPool pool(2);
    std::atomic<bool> a_started{false}, b_started{false};
    bool a_saw_b = false, b_saw_a = false;
    on_worker(pool, [&] {
        join(
            pool,
            [&] {
                a_started = true;
                a_saw_b = spin_until(b_started);
            },
            [&] {
                b_started = true;
                b_saw_a = spin_until(a_started);
            });
    });
    EXPECT_TRUE(a_saw_b) << "b never started while a was running: is b in the deque, where "
                            "the other worker can steal it, before a runs?";
    EXPECT_TRUE(b_saw_a);
}

TEST(Lesson07Ex2, AChainOfTenThousandNestedJoins) {
    for (std::size_t workers : {1, 2}) {
        ThreadPool pool(workers);
        std::atomic<int> leaves{0};
        std::function<void(int)> chain = [&](int depth) {
            if (depth == 0) return;
            join(
                pool, [&] { chain(depth - 1); },
                [&] { leaves.fetch_add(1, std::memory_order_relaxed); });
        };
        on_worker(pool, [&] { chain(10'000); });
        EXPECT_EQ(leaves.load(), 10'000) << "with " << workers << " worker(s)";
    }
}

TEST(Lesson07Ex2, ManyJoinsInParallelFromManyTasks) {
    ThreadPool pool(2);
    std::atomic<std::uint64_t> total{0};
    for (int i = 0; i < 8; ++i)
        pool.spawn([&] { total.fetch_add(fib(pool, 18)); });
    pool.wait_idle();
    EXPECT_EQ(total.load(), 8u * 2584u);
}
