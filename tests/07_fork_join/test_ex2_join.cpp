// Lesson 07, exercise 2: join with helping, called from inside a task.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include <ws/testing/wait.hpp>

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

TEST(Lesson07Ex2, BIsInTheDequeBeforeARuns) {
    // The deterministic form of the test above: on one worker, a looks for work itself with
    // try_run_one, as an idle thief would, and finds b only if join pushed it before running a
    // (a join that pushes b afterwards runs right, but never in parallel).
    ThreadPool pool(1);
    bool a_found_a_job = false, b_ran_in_a = false, b_ran = false;
    on_worker(pool, [&] {
        join(
            pool,
            [&] {
                a_found_a_job = pool.try_run_one();
                b_ran_in_a = b_ran;
            },
            [&] { b_ran = true; });
    });
    EXPECT_TRUE(a_found_a_job && b_ran_in_a)
        << "while a ran, b was not in this worker's deque, where a thief could take it: push b "
           "before running a";
    EXPECT_TRUE(b_ran);
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

TEST(Lesson07Ex2, AJoinOnOneWorkerReturnsWithinASecond) {
    // On one worker nobody but the joiner can run b: a join that waits without helping (or
    // taking b back) waits for itself. Bounded here rather than by the watchdog.
    auto pool = std::make_unique<ThreadPool>(1);
    auto returned = std::make_shared<std::atomic<bool>>(false);
    pool->spawn([&pool = *pool, returned] {
        int a = 0, b = 0;
        join(
            pool, [&] { a = 1; }, [&] { b = 2; });
        *returned = a + b == 3;
    });
    if (!ws::testing::wait_until([&] { return returned->load(); },
                                 std::chrono::seconds(1) * ws::testing::slowdown())) {
        (void)pool.release();  // its worker waits for ever: leak it
        FAIL() << "join on the only worker did not return within 1 s: it must run b itself "
                  "(take it back, or help with try_run_one), not wait for someone else to";
    }
    pool->wait_idle();
}

TEST(Lesson07Ex2, ATaskThatASpawnedStillRunsAndBRunsOnce) {
    // a spawns a task onto this worker's deque, above b, and nobody else can take either (one
    // worker): the newest job is not b. join must leave that task queued and run it (helping),
    // then b. A take_back that takes whatever it pops drops the task and leaves b's job in the
    // deque to run again later; b sees the task not yet run and parks this worker for good
    // (join's frame must outlive b's job), and the test reports it within 2 s.
    auto pool = std::make_unique<ThreadPool>(1);
    struct State {
        std::atomic<bool> spawned_ran{false};
        std::atomic<int> b_runs{0};
        std::atomic<int> verdict{0};  // 1: join returned with both done; 2: b ran first
    };
    auto state = std::make_shared<State>();
    pool->spawn([&pool = *pool, state] {
        join(
            pool, [&] { pool.spawn([state] { state->spawned_ran = true; }); },
            [&] {
                state->b_runs.fetch_add(1);
                if (!state->spawned_ran.load()) {
                    state->verdict = 2;
                    for (;;)  // keep join's frame (and b's job in it) alive: never return
                        std::this_thread::sleep_for(std::chrono::hours(1));
                }
            });
        state->verdict = 1;
    });
    ASSERT_TRUE(ws::testing::wait_until([&] { return state->verdict.load() != 0; },
                                        std::chrono::seconds(2) * ws::testing::slowdown()))
        << "join did not return";
    if (state->verdict.load() == 2) {
        (void)pool.release();  // its worker is parked in b for good: leak it
        FAIL() << "join ran b while the task that a spawned was still unrun: take_back took a job "
                  "that was not b (it must check, and push anything else back)";
    }
    pool->wait_idle();
    EXPECT_TRUE(state->spawned_ran.load());
    EXPECT_EQ(state->b_runs.load(), 1) << "b ran more than once";
}
