// Lesson 07, exercise 1: try_run_one, the step a waiting worker takes instead of blocking.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

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

TEST(Lesson07Ex1, AJobThatTryRunOneRanCountsOnceInStats) {
    // One worker: it runs the outer task from its loop and the child through try_run_one, and
    // nothing else runs. executed() counts every job a worker ran, however it found it.
    ThreadPool pool(1);
    bool result = false;
    on_worker(pool, [&] {
        pool.spawn([] {});
        result = pool.try_run_one();
    });
    ASSERT_TRUE(result) << "the child was in this worker's own deque";
    EXPECT_EQ(pool.stats().executed(), 2u)
        << "the outer task and the child that try_run_one ran: count the job once, as the "
           "worker loop does (run it through run_job)";
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
    // Both workers are held by the test: the owner fills its own deque and then waits, running
    // nothing, until the helper is done; the helper occupies the other worker. So nothing but
    // the helper's try_run_one can run the owner's tasks, and only by stealing them.
    constexpr int kTasks = 100;
    ThreadPool pool(2);
    std::atomic<int> ran{0};
    std::atomic<bool> helper_started{false}, spawned{false}, helper_done{false};
    bool owner_saw_helper = false;
    int helped = 0;  // the jobs the helper's try_run_one ran
    // The owner: once the helper holds the other worker, it fills its own deque and waits.
    pool.spawn([&] {
        owner_saw_helper = spin_until(helper_started);
        if (owner_saw_helper) {
            for (int i = 0; i < kTasks; ++i)
                pool.spawn([&] { ran.fetch_add(1, std::memory_order_relaxed); });
        }
        spawned = true;
        // Unbounded: the helper always ends, and says so, within its deadline.
        while (owner_saw_helper && !helper_done.load(std::memory_order_acquire))
            std::this_thread::yield();
    });
    // The helper: runs the owner's tasks through try_run_one, within a deadline.
    pool.spawn([&] {
        helper_started = true;
        struct Done {
            std::atomic<bool>& flag;
            ~Done() { flag.store(true, std::memory_order_release); }  // also when it throws
        } done{helper_done};
        if (!spin_until(spawned)) return;
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::seconds(5) * ws::testing::slowdown();
        while (ran.load() < kTasks && std::chrono::steady_clock::now() < deadline) {
            if (pool.try_run_one()) {
                ++helped;
            } else {
                std::this_thread::yield();
            }
        }
    });
    pool.wait_idle();
    ASSERT_TRUE(owner_saw_helper) << "the two tasks never ran at the same time";
    EXPECT_EQ(helped, kTasks) << "with both workers held, only the helper's try_run_one could run "
                                 "the owner's tasks: does it steal when its own deque and the "
                                 "injector are empty?";
    EXPECT_EQ(ran.load(), kTasks);
    EXPECT_GT(pool.stats().steals, 0u) << "the helper could only get the owner's tasks by stealing";
}
