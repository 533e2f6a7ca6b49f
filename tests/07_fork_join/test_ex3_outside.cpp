// Lesson 07, exercise 3: fork-join called from outside the pool hands the work to the pool
// and blocks the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

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

TEST(Lesson07Ex3, RunFromOutsideRethrowsWhatTheWorkThrew) {
    ThreadPool pool(2);
    std::string caught;
    try {
        ws::lesson07::detail::run_from_outside(pool, [] { throw std::runtime_error("f failed"); });
    } catch (const std::runtime_error& e) {
        caught = e.what();
    }
    EXPECT_EQ(caught, "f failed") << "what f threw on the worker must be rethrown to the caller";
    EXPECT_NO_THROW(pool.wait_idle()) << "f's exception is the caller's, not the pool's";
}

TEST(Lesson07Ex3, RunFromOutsideWaitsForItsOwnWorkOnly) {
    // Another task holds one worker until the test lets it go, and f runs on the other: the
    // caller waits for f (and what f forks), not for the whole pool to fall idle.
    std::atomic<bool> holding{false}, release{false}, held_to_the_end{false};
    ThreadPool pool(2);     // after the flags: its destructor waits for the holding task
    struct ReleaseAtExit {  // also when run_from_outside throws
        std::atomic<bool>& release;
        ~ReleaseAtExit() { release = true; }
    } release_at_exit{release};
    pool.spawn([&] {
        holding = true;
        held_to_the_end = !lesson07_test::spin_until(release, std::chrono::seconds(2));
    });
    ASSERT_TRUE(lesson07_test::spin_until(holding)) << "the holding task never started";
    bool ran = false;
    ws::lesson07::detail::run_from_outside(pool, [&] { ran = true; });
    const bool returned_while_held = !held_to_the_end.load();
    release = true;
    pool.wait_idle();
    EXPECT_TRUE(ran);
    EXPECT_TRUE(returned_while_held)
        << "run_from_outside returned only after an unrelated task had finished (it gave up "
           "after 2 s): the caller must wait for its own work, not for the pool to be idle";
}

TEST(Lesson07Ex3, TheCallerWakesWhenTheWorkIsDone) {
    // The caller asleep, the worker pinned to its CPU with SCHED_IDLE: when the worker wakes the
    // caller, the caller runs at once, before the worker goes on. If the work is not marked done
    // by then, the caller finds it unfinished and sleeps again, with nobody left to wake it. Up
    // to 5 attempts (the scheduler does not always switch at once on a busy machine).
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc, sched_setscheduler)";
    using namespace std::chrono_literals;
    using ws::testing::slowdown;
    const auto before = ws::testing::thread_ids();
    auto pool = std::make_unique<ThreadPool>(1);
    const auto workers = ws::testing::new_threads(before);
    ASSERT_EQ(workers.size(), 1u);
    const int cpu = ws::testing::a_cpu_of_this_thread();
    ws::testing::pin_to_cpu(workers[0], cpu);
    ws::testing::make_idle_priority(workers[0]);  // the pool's worker ends with the pool
    for (int attempt = 1; attempt <= 5; ++attempt) {
        auto release = std::make_shared<std::atomic<bool>>(false);
        auto caller_tid = std::make_shared<std::atomic<ws::testing::ThreadId>>(0);
        ws::testing::DetachedCall caller([&pool = *pool, cpu, release, caller_tid] {
            const auto me = ws::testing::current_thread_id();
            ws::testing::pin_to_cpu(me, cpu);
            ws::testing::request_short_slice(me);
            *caller_tid = me;
            ws::lesson07::detail::run_from_outside(pool, [release] {
                ws::testing::wait_until([&] { return release->load(); }, 10s * slowdown());
            });
        });
        ASSERT_TRUE(ws::testing::wait_until([&] { return caller_tid->load() != 0; }, 5s));
        ASSERT_TRUE(ws::testing::wait_until_all({caller_tid->load()}, ws::testing::blocked_on_futex,
                                                10s * slowdown()))
            << "the caller of run_from_outside did not go to sleep while the work ran";
        *release = true;  // the work ends now, on the worker
        if (!caller.wait_for(2s * slowdown())) {
            (void)pool.release();  // the caller sleeps for ever and uses the pool: leak it
            FAIL() << "the caller of run_from_outside slept on after its work was done (attempt "
                   << attempt << "): mark the work done first, then wake the caller";
        }
        if (const auto error = caller.error()) std::rethrow_exception(error);
    }
}
