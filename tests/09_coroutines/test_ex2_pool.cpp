// Lesson 09, exercise 2: coroutines on the pool — spawn (detached), co_await schedule(pool),
// and sync_wait from outside.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <thread>

#include <ws/testing/exactly_once.hpp>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson09_test::current_thread;
using lesson09_test::million;
using lesson09_test::run;
using ws::lesson09::schedule;
using ws::lesson09::spawn;
using ws::lesson09::sync_wait;
using ws::lesson09::Task;
using ws::lesson09::ThreadPool;

namespace {

Task<void> record_thread(std::thread::id& where) {
    where = current_thread();
    co_return;
}

Task<void> mark(ws::testing::ExactlyOnce& seen, std::size_t i) {
    seen.mark(i);
    co_return;
}

Task<void> throws_after_a_hop(ThreadPool& pool) {
    co_await schedule(pool);
    throw std::runtime_error("thrown by a spawned coroutine");
}

Task<void> move_then_throw(ThreadPool& to) {
    co_await schedule(to);
    throw std::runtime_error("thrown on the second pool");
}

Task<int> hop_then_answer(ThreadPool& pool, std::thread::id& before, std::thread::id& after) {
    before = current_thread();
    co_await schedule(pool);
    after = current_thread();
    co_return 42;
}

Task<int> fails() {
    throw std::invalid_argument("sync_wait must rethrow this");
    co_return 0;
}

}  // namespace

TEST(Lesson09Ex2, ASpawnedCoroutineRunsOnAWorker) {
    ThreadPool pool(2);
    std::thread::id where;
    spawn(pool, record_thread(where));
    pool.wait_idle();
    EXPECT_NE(where, std::thread::id()) << "the spawned coroutine never ran (wait_idle returned)";
    EXPECT_NE(where, current_thread()) << "spawn must run the coroutine on the pool";
}

TEST(Lesson09Ex2, ManySpawnedCoroutinesRunExactlyOnce) {
    const std::size_t n = million();
    ThreadPool pool(2);
    ws::testing::ExactlyOnce seen(n);
    for (std::size_t i = 0; i < n; ++i)
        spawn(pool, mark(seen, i));
    pool.wait_idle();
    EXPECT_TRUE(seen.verify());
}

TEST(Lesson09Ex2, CoroutinesSpawnedFromCoroutinesRunExactlyOnce) {
    const std::size_t n = million() / 10;
    ThreadPool pool(2);
    ws::testing::ExactlyOnce seen(n);
    auto spawner = [](ThreadPool& p, ws::testing::ExactlyOnce& s, std::size_t count) -> Task<void> {
        for (std::size_t i = 0; i < count; ++i)
            spawn(p, mark(s, i));
        co_return;
    };
    spawn(pool, spawner(pool, seen, n));
    pool.wait_idle();
    EXPECT_TRUE(seen.verify());
}

TEST(Lesson09Ex2, WaitIdleRethrowsWhatASpawnedCoroutineThrew) {
    ThreadPool pool(2);
    spawn(pool, throws_after_a_hop(pool));
    try {
        pool.wait_idle();
        ADD_FAILURE() << "wait_idle must rethrow the spawned coroutine's exception";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "thrown by a spawned coroutine");
    }
    EXPECT_NO_THROW(pool.wait_idle()) << "an exception is rethrown once";
}

// The exception goes to the pool that ran the step that threw: the one whose wait_idle waited
// for it (solution page, "On the pool").
TEST(Lesson09Ex2, ADetachedCoroutineThatMovedThrowsIntoThePoolOfItsLastStep) {
    ThreadPool first(1), second(1);
    spawn(first, move_then_throw(second));
    EXPECT_NO_THROW(first.wait_idle());
    EXPECT_THROW(second.wait_idle(), std::runtime_error);
    EXPECT_NO_THROW(first.wait_idle());
}

TEST(Lesson09Ex2, ScheduleMovesTheCoroutineOntoThePool) {
    ThreadPool pool(2);
    std::thread::id before, after;
    EXPECT_EQ(run(pool, hop_then_answer(pool, before, after)), 42);
    EXPECT_NE(after, current_thread());
    EXPECT_NE(after, std::thread::id());
}

TEST(Lesson09Ex2, ScheduleFromAStartedCoroutineContinuesOnAWorker) {
    ThreadPool pool(1);
    std::thread::id before, after;
    Task<int> task = hop_then_answer(pool, before, after);
    task.handle().resume();  // runs on this thread up to the co_await schedule(pool)
    EXPECT_EQ(before, current_thread());
    pool.wait_idle();  // the resume job is a task of the pool
    ASSERT_TRUE(task.handle().done()) << "after co_await schedule(pool) a worker must resume it";
    EXPECT_NE(after, current_thread());
    EXPECT_EQ(task.handle().promise().result(), 42);
}

TEST(Lesson09Ex2, SyncWaitReturnsTheValue) {
    ThreadPool pool(2);
    std::thread::id where;
    run(pool, record_thread(where));
    EXPECT_NE(where, current_thread()) << "sync_wait runs the task on the pool";
    EXPECT_NE(where, std::thread::id());
}

TEST(Lesson09Ex2, SyncWaitRethrowsTheTasksException) {
    ThreadPool pool(2);
    EXPECT_THROW(sync_wait(pool, fails()), std::invalid_argument);
    EXPECT_NO_THROW(pool.wait_idle()) << "sync_wait's exception is its caller's, not the pool's";
}

TEST(Lesson09Ex2, SyncWaitOnAWorkerOfThePoolIsALogicError) {
    ThreadPool pool(1);
    std::atomic<bool> logic_error{false};
    pool.spawn([&] {
        try {
            sync_wait(pool, fails());
        } catch (const std::logic_error& e) {
            logic_error = std::string(e.what()).find("worker") != std::string::npos;
        }
    });
    pool.wait_idle();
    EXPECT_TRUE(logic_error.load())
        << "a worker blocked in sync_wait may be the only one that could run the task";
}

TEST(Lesson09Ex2, SyncWaitFromSeveralThreadsAtOnce) {
    ThreadPool pool(2);
    std::atomic<int> total{0};
    auto one = [&] {
        for (int i = 0; i < 200; ++i) {
            std::thread::id before, after;
            total += run(pool, hop_then_answer(pool, before, after));
        }
    };
    std::thread a(one), b(one);
    one();
    a.join();
    b.join();
    EXPECT_EQ(total.load(), 3 * 200 * 42);
}
