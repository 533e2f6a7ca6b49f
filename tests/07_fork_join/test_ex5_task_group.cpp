// Lesson 07, exercise 5: TaskGroup — run any number of tasks, wait (helping) for all of them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

#include "exercises.hpp"
#include "helpers.hpp"

using namespace std::chrono_literals;
using lesson07_test::on_worker;
using ws::lesson07::TaskGroup;
using ws::lesson07::ThreadPool;

TEST(Lesson07Ex5, RunAndWaitFromOutsideThePool) {
    ThreadPool pool(2);
    std::atomic<int> ran{0};
    TaskGroup group(pool);
    for (int i = 0; i < 10'000; ++i)
        group.run([&] { ran.fetch_add(1, std::memory_order_relaxed); });
    group.wait();
    EXPECT_EQ(ran.load(), 10'000);
}

TEST(Lesson07Ex5, WaitOnOneWorkerHelpsInsteadOfBlocking) {
    ThreadPool pool(1);
    std::atomic<int> ran{0};
    on_worker(pool, [&] {
        TaskGroup group(pool);
        for (int i = 0; i < 1000; ++i)
            group.run([&] { ran.fetch_add(1, std::memory_order_relaxed); });
        group.wait();  // the only worker is us: we must run them ourselves
        EXPECT_EQ(ran.load(), 1000) << "wait returned before every task of the group ran";
    });
    EXPECT_EQ(ran.load(), 1000);
}

namespace {
// A group of 4 tasks, each with a group of 4, each with a group of 4 leaves: 64 leaves.
void nested(ThreadPool& pool, int depth, std::atomic<int>& leaves) {
    if (depth == 0) {
        leaves.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    TaskGroup group(pool);
    for (int i = 0; i < 4; ++i)
        group.run([&pool, depth, &leaves] { nested(pool, depth - 1, leaves); });
    group.wait();
}
}  // namespace

TEST(Lesson07Ex5, TaskGroupsNestedThreeDeep) {
    for (std::size_t workers : {1, 2}) {
        ThreadPool pool(workers);
        std::atomic<int> leaves{0};
        nested(pool, 3, leaves);  // the outermost group waits from outside the pool
        EXPECT_EQ(leaves.load(), 64) << "with " << workers << " worker(s)";
        leaves = 0;
        on_worker(pool, [&] { nested(pool, 3, leaves); });
        EXPECT_EQ(leaves.load(), 64) << "from inside, with " << workers << " worker(s)";
    }
}

TEST(Lesson07Ex5, WaitRethrowsTheFirstExceptionAfterEveryTaskFinished) {
    ThreadPool pool(2);
    std::atomic<int> ran{0};
    TaskGroup group(pool);
    for (int i = 0; i < 100; ++i) {
        group.run([&ran, i] {
            if (i == 50) throw std::runtime_error("task 50 failed");
            ran.fetch_add(1);
        });
    }
    std::string caught;
    try {
        group.wait();
    } catch (const std::runtime_error& e) {
        caught = e.what();
    }
    EXPECT_EQ(caught, "task 50 failed");
    EXPECT_EQ(ran.load(), 99) << "every other task must have finished before the rethrow";
    EXPECT_NO_THROW(group.wait()) << "the exception was already reported";
    EXPECT_NO_THROW(pool.wait_idle()) << "a group's exception belongs to the group, not the pool";
}

TEST(Lesson07Ex5, WaitRethrowsTheExceptionThrownFirst) {
    // One worker, so the tasks run one at a time, in an order the test records: every one of
    // them throws, and wait() must rethrow the first one's exception.
    ThreadPool pool(1);
    TaskGroup group(pool);
    std::vector<int> threw;  // only the one worker touches it; wait() publishes it to us
    for (int i = 0; i < 10; ++i) {
        group.run([&threw, i] {
            threw.push_back(i);
            throw std::runtime_error(std::to_string(i));
        });
    }
    std::string caught;
    try {
        group.wait();
    } catch (const std::runtime_error& e) {
        caught = e.what();
    }
    ASSERT_EQ(threw.size(), 10u);
    EXPECT_EQ(caught, std::to_string(threw.front()))
        << "task " << threw.front() << " threw first and task " << threw.back()
        << " last: wait() must rethrow the first exception, and keep no later one";
}

TEST(Lesson07Ex5, AGroupIsReusableAfterWait) {
    ThreadPool pool(2);
    std::atomic<int> ran{0};
    TaskGroup group(pool);
    for (int round = 1; round <= 3; ++round) {
        for (int i = 0; i < 100; ++i)
            group.run([&] { ran++; });
        group.wait();
        EXPECT_EQ(ran.load(), round * 100);
    }
}

namespace {
// A capture that takes its time to die, and says when it has: a task's captures must be gone
// before wait() returns (their destructors may touch what the waiter owns).
class SlowToDie {
  public:
    explicit SlowToDie(std::atomic<int>& destroyed) : destroyed_(&destroyed) {}
    SlowToDie(SlowToDie&& other) noexcept : destroyed_(std::exchange(other.destroyed_, nullptr)) {}
    SlowToDie& operator=(SlowToDie&&) = delete;
    ~SlowToDie() {
        if (destroyed_ == nullptr) return;  // moved from
        std::this_thread::sleep_for(20ms);
        destroyed_->fetch_add(1);
    }

  private:
    std::atomic<int>* destroyed_;
};

// A closure whose move throws: run() must then throw, and the group must not count it.
struct ThrowsWhenMoved {
    ThrowsWhenMoved() = default;
    ThrowsWhenMoved(ThrowsWhenMoved&&) { throw std::runtime_error("cannot move this task"); }
    void operator()() const {}
};
}  // namespace

TEST(Lesson07Ex5, ATasksCapturesAreGoneWhenWaitReturns) {
    ThreadPool pool(2);
    std::atomic<int> destroyed{0};
    TaskGroup group(pool);
    group.run([probe = SlowToDie(destroyed)] {});
    group.wait();
    EXPECT_EQ(destroyed.load(), 1)
        << "wait() returned while the task's captures were still alive: destroy them before the "
           "task takes itself off pending_";
    on_worker(pool, [&] {
        TaskGroup inner(pool);
        inner.run([probe = SlowToDie(destroyed)] {});
        inner.wait();
        EXPECT_EQ(destroyed.load(), 2) << "the same, waiting on a worker";
    });
}

TEST(Lesson07Ex5, ARunThatThrowsIsNotCounted) {
    ThreadPool pool(2);
    TaskGroup group(pool);
    std::atomic<int> ran{0};
    group.run([&] { ran++; });
    EXPECT_THROW(group.run(ThrowsWhenMoved{}), std::runtime_error);
    group.wait();  // must return: the task that failed to spawn was never queued
    EXPECT_EQ(ran.load(), 1);
}

TEST(Lesson07Ex5, AGroupWhoseTaskThrowsStillFinishes) {
    // A task that throws has finished too: wait() must return (and rethrow), bounded here
    // rather than by the watchdog.
    auto pool = std::make_unique<ThreadPool>(2);
    auto group = std::make_unique<TaskGroup>(*pool);
    group->run([] { throw std::runtime_error("task failed"); });
    ws::testing::DetachedCall waiter([&group = *group] { group.wait(); });
    if (!waiter.wait_for(1s * ws::testing::slowdown())) {
        (void)group.release();  // wait() waits for ever, and the group's destructor would too
        (void)pool.release();
        FAIL() << "wait() did not return within 1 s after its only task threw: a task that "
                  "throws must be counted off pending_ too";
    }
    std::string caught;
    try {
        if (const auto error = waiter.error()) std::rethrow_exception(error);
    } catch (const std::runtime_error& e) {
        caught = e.what();
    }
    EXPECT_EQ(caught, "task failed");
}

TEST(Lesson07Ex5, AnOutsideWaiterWakesWhenTheLastTaskFinishes) {
    // The waiter, outside the pool, is asleep before the group's only task finishes: the task
    // that brings pending_ to zero must wake it.
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    using ws::testing::slowdown;
    auto pool = std::make_unique<ThreadPool>(2);
    auto group = std::make_unique<TaskGroup>(*pool);
    auto release = std::make_shared<std::atomic<bool>>(false);
    group->run(
        [release] { ws::testing::wait_until([&] { return release->load(); }, 10s * slowdown()); });
    auto waiter_tid = std::make_shared<std::atomic<ws::testing::ThreadId>>(0);
    ws::testing::DetachedCall waiter([&group = *group, waiter_tid] {
        *waiter_tid = ws::testing::current_thread_id();
        group.wait();
    });
    ASSERT_TRUE(ws::testing::wait_until([&] { return waiter_tid->load() != 0; }, 5s));
    ASSERT_TRUE(ws::testing::wait_until_all({waiter_tid->load()}, ws::testing::blocked_on_futex,
                                            10s * slowdown()))
        << "wait() outside the pool did not go to sleep while the group's task ran";
    *release = true;  // the task ends now, on a worker
    if (!waiter.wait_for(2s * slowdown())) {
        (void)group.release();  // wait() sleeps for ever, and the group's destructor would too
        (void)pool.release();
        FAIL() << "wait() outside the pool slept on after the group's last task had finished: "
                  "the task that finishes the group must wake an outside waiter";
    }
    if (const auto error = waiter.error()) std::rethrow_exception(error);
}
