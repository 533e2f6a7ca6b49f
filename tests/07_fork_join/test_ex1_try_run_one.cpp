// Lesson 07, exercise 1: try_run_one, the step a waiting worker takes instead of blocking.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson07_test::on_worker;
using lesson07_test::spin_until;
using ws::lesson07::ThreadPool;

TEST(Lesson07Ex1, TryRunOneFromOutsideThePoolIsALogicError) {
    ThreadPool pool(1);
    EXPECT_THROW(pool.try_run_one(), std::logic_error)
        << "only a worker of this pool has a deque to help from";
}

TEST(Lesson07Ex1, TryRunOneReturnsFalseWhenThereIsNothingToRun) {
    ThreadPool pool(1);
    bool result = true;
    on_worker(pool, [&] { result = pool.try_run_one(); });
    EXPECT_FALSE(result);
}

TEST(Lesson07Ex1, TryRunOneRunsATaskFromTheWorkersOwnDeque) {
    ThreadPool pool(1);  // one worker: nobody else can run the child
    std::atomic<bool> child_ran{false};
    bool result = false;
    on_worker(pool, [&] {
        pool.spawn([&] { child_ran = true; });
        result = pool.try_run_one();
    });
    EXPECT_TRUE(result) << "the child was in this worker's own deque";
    EXPECT_TRUE(child_ran.load()) << "try_run_one returned without running the child";
}

TEST(Lesson07Ex1, TryRunOneTakesATaskFromTheInjector) {
    ThreadPool pool(1);
    std::atomic<bool> queued{false}, ran{false};
    bool result = false;
    pool.spawn([&] {
        spin_until(queued);  // the task below is in the injector now
        result = pool.try_run_one();
    });
    pool.spawn([&] { ran = true; });  // from outside: to the injector
    queued = true;
    pool.wait_idle();
    EXPECT_TRUE(result);
    EXPECT_TRUE(ran.load());
}

TEST(Lesson07Ex1, AWorkerThatWaitsByHelpingNeverDeadlocksOnOneWorker) {
    ThreadPool pool(1);
    std::atomic<int> ran{0};
    on_worker(pool, [&] {
        for (int i = 0; i < 1000; ++i)
            pool.spawn([&] { ran.fetch_add(1, std::memory_order_relaxed); });
        while (ran.load() < 1000) {
            if (!pool.try_run_one()) break;  // on one worker, nothing else can run them
        }
    });
    EXPECT_EQ(ran.load(), 1000);
}

TEST(Lesson07Ex1, HelpingStealsFromAnotherWorker) {
    ThreadPool pool(2);
    std::atomic<int> ran{0};
    std::atomic<bool> spawned{false}, release{false};
    // Task A fills its own deque, then blocks until the helper below has run all of it.
    pool.spawn([&] {
        for (int i = 0; i < 100; ++i)
            pool.spawn([&] { ran.fetch_add(1, std::memory_order_relaxed); });
        spawned = true;
        spin_until(release);
    });
    ASSERT_TRUE(spin_until(spawned));
    pool.spawn([&] {  // runs on the other worker: A's worker is busy
        while (ran.load() < 100) {
            if (!pool.try_run_one()) std::this_thread::yield();
        }
        release = true;
    });
    pool.wait_idle();
    EXPECT_EQ(ran.load(), 100);
    EXPECT_GT(pool.stats().steals, 0u) << "the helper could only get A's tasks by stealing";
}
