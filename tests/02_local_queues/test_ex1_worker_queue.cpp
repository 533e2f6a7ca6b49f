// Lesson 02, exercise 1: the worker's queue, without a pool. The owner works at the back
// (newest first), thieves at the front (oldest first).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/harness.hpp>
#include <ws/testing/wait.hpp>

#include "exercises.hpp"
#include "worker_queue.hpp"

using ws::Task;
using ws::lesson02::WorkerQueue;

namespace {

// Pushes tasks that append 0, 1, ..., n-1 to `log` when run.
void push_numbered(WorkerQueue& q, std::vector<int>& log, int n) {
    for (int i = 0; i < n; ++i)
        q.push([&log, i] { log.push_back(i); });
}

// Runs the task if there is one; returns whether there was.
bool run(std::optional<Task> task) {
    if (!task) return false;
    (*task)();
    return true;
}

}  // namespace

TEST(Lesson02Ex1, TheOwnerPopsNewestFirst) {
    WorkerQueue q;
    std::vector<int> log;
    push_numbered(q, log, 5);
    EXPECT_EQ(q.size(), 5u);
    while (run(q.pop())) {
    }
    EXPECT_EQ(log, (std::vector<int>{4, 3, 2, 1, 0})) << "pop must take from the back (LIFO)";
    EXPECT_EQ(q.size(), 0u);
}

TEST(Lesson02Ex1, AThiefStealsOldestFirst) {
    WorkerQueue q;
    std::vector<int> log;
    push_numbered(q, log, 5);
    while (run(q.steal())) {
    }
    EXPECT_EQ(log, (std::vector<int>{0, 1, 2, 3, 4})) << "steal must take from the front (FIFO)";
    EXPECT_EQ(q.size(), 0u);
}

TEST(Lesson02Ex1, OwnerAndThiefMeetInTheMiddle) {
    WorkerQueue q;
    std::vector<int> log;
    push_numbered(q, log, 4);
    EXPECT_TRUE(run(q.steal()));
    EXPECT_TRUE(run(q.pop()));
    EXPECT_TRUE(run(q.steal()));
    EXPECT_TRUE(run(q.pop()));
    EXPECT_FALSE(run(q.pop()));
    EXPECT_FALSE(run(q.steal()));
    EXPECT_EQ(log, (std::vector<int>{0, 3, 1, 2}));
}

// A thief steals, and after it the owner pops, one at a time. The flag that tells the owner when
// to pop is relaxed on purpose: it orders nothing, so nothing but the queue's own lock orders
// the thief's change of the deque before the owner's look at it. Without that lock, pop reads
// the deque's ends with no happens-before from the thief's write of them: a data race, which
// ThreadSanitizer (the tsan preset) reports in every run, though the two never overlap in time.
// A plain build sees nothing wrong here.
TEST(Lesson02Ex1, AnOwnersPopAfterAThiefsStealIsOrderedByTheLock) {
    WorkerQueue q;
    std::vector<int> log;
    push_numbered(q, log, 2);
    bool thief_ran = false;  // read after the join
    std::atomic<bool> stolen{false};
    std::thread thief([&] {
        thief_ran = run(q.steal());
        stolen.store(true, std::memory_order_relaxed);
    });
    const bool in_time =
        ws::testing::wait_until([&] { return stolen.load(std::memory_order_relaxed); },
                                std::chrono::seconds(5) * ws::testing::slowdown());
    std::optional<Task> newest = q.pop();  // run after the join: the thief's task wrote to log
    thief.join();
    ASSERT_TRUE(in_time) << "the thief did not steal within 5 s";
    EXPECT_TRUE(thief_ran);
    EXPECT_TRUE(run(std::move(newest))) << "pop found nothing, though one task was left";
    EXPECT_FALSE(run(q.pop()));
    EXPECT_EQ(log, (std::vector<int>{0, 1})) << "the thief takes the oldest, the owner the newest";
}

TEST(Lesson02Ex1, AnEmptyQueueGivesNothing) {
    WorkerQueue q;
    EXPECT_FALSE(q.pop().has_value());
    EXPECT_FALSE(q.steal().has_value());
    EXPECT_EQ(q.size(), 0u);
}

TEST(Lesson02Ex1, OwnerAndTwoThievesAtOnceTakeEveryTaskExactlyOnce) {
    constexpr std::size_t kTasks = 100'000;
    ws::testing::ExactlyOnce seen(kTasks);
    WorkerQueue q;
    std::atomic<bool> owner_done{false};
    auto thief = [&] {
        for (;;) {
            const bool done = owner_done.load(std::memory_order_acquire);
            if (!run(q.steal()) && done) return;
        }
    };
    std::thread t1(thief), t2(thief);
    for (std::size_t i = 0; i < kTasks; ++i) {
        q.push([&seen, i] { seen.mark(i); });
        if (i % 3 == 0) run(q.pop());
    }
    while (run(q.pop())) {
    }
    owner_done.store(true, std::memory_order_release);
    t1.join();
    t2.join();
    EXPECT_TRUE(seen.verify());
    EXPECT_EQ(q.size(), 0u);
}
