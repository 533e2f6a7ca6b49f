// Lesson 03, exercise 2: a steal that runs out of memory loses no task and throws nothing.
// <ws/testing/failing_new.hpp> makes the calling thread's N-th next allocation throw
// std::bad_alloc, so each test puts the failure exactly where it wants it: the batch's vector
// (step 1), or the thief's queue growing for the batch (step 2).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include <ws/testing/failing_new.hpp>

#include "exercises.hpp"
#include "worker_queue.hpp"

using ws::Task;
using ws::lesson03::WorkerQueue;

namespace {

// What the tasks of a test did: the ids they ran with, and how many were destroyed without ever
// running (a task lost on the way).
struct Record {
    std::vector<int> ran;
    int destroyed_unrun = 0;
};

// A task that logs its id when it runs and counts itself lost if it is destroyed unrun. Small
// and nothrow-movable, so a Task keeps it inline: making one allocates nothing.
class Logged {
  public:
    Logged(Record& record, int id) : record_(&record), id_(id) {}
    Logged(Logged&& other) noexcept
        : record_(std::exchange(other.record_, nullptr)), id_(other.id_) {}
    Logged& operator=(Logged&&) = delete;
    ~Logged() {
        if (record_ != nullptr) ++record_->destroyed_unrun;
    }
    void operator()() { std::exchange(record_, nullptr)->ran.push_back(id_); }

  private:
    Record* record_;
    int id_;
};

void push_numbered(WorkerQueue& q, Record& record, int first, int n) {
    for (int i = first; i < first + n; ++i)
        q.push(Logged(record, i));
}

std::vector<int> numbers(int first, int n) {
    std::vector<int> v;
    for (int i = first; i < first + n; ++i)
        v.push_back(i);
    return v;
}

// Runs the queue's tasks oldest first; returns the ids they logged.
std::vector<int> drain_oldest_first(WorkerQueue& q, Record& record) {
    record.ran.clear();
    while (std::optional<Task> task = q.steal_one())
        (*task)();
    return record.ran;
}

// victim.steal_half_into(thief) with this thread's allocations failing after `successes` more;
// whether an exception left it goes into `escaped`.
std::size_t steal_with_failure_after(WorkerQueue& victim, WorkerQueue& thief,
                                     std::int64_t successes, bool& escaped) {
    {
        // Unarmed first, between two empty queues: an unfinished exercise says so here (its
        // NotImplemented), instead of failing below for lack of memory.
        WorkerQueue a, b;
        (void)a.steal_half_into(b);
    }
    struct Disarm {  // also when another exception leaves
        ~Disarm() { ws::testing::disarm_allocation_failures(); }
    } disarm;
    escaped = false;
    ws::testing::fail_allocation_after(successes);
    try {
        return victim.steal_half_into(thief);
    } catch (const std::bad_alloc&) {
        escaped = true;
        return 0;
    }
}

}  // namespace

TEST(Lesson03Ex2, AStealWhoseThiefHasNoRoomForTheBatchPutsItBackAndLosesNothing) {
    // 200 tasks: the batch of 100 needs new blocks in the thief's queue whatever its block size.
    // The first allocation (the batch's vector) succeeds, the next one, the thief's queue
    // growing, fails: the thief cannot take the batch, which must go back where it was.
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    Record record;
    {
        WorkerQueue victim, thief;
        push_numbered(victim, record, 0, 200);
        push_numbered(thief, record, 1000, 2);
        const std::uint64_t failed_before = ws::testing::failed_allocations();
        bool escaped = false;
        const std::size_t moved = steal_with_failure_after(victim, thief, 1, escaped);
        ASSERT_EQ(ws::testing::failed_allocations(), failed_before + 1)
            << "the allocation that was to fail did not happen: the test proves nothing";
        EXPECT_FALSE(escaped) << "std::bad_alloc left steal_half_into: in the pool it leaves "
                                 "the worker's loop too, and std::terminate ends the program";
        EXPECT_EQ(record.destroyed_unrun, 0)
            << "tasks of the batch were destroyed without running: lost, while the pool still "
               "counts them, so wait_idle would wait for them forever";
        EXPECT_EQ(moved, 0u) << "the thief had no room for the batch, so nothing was stolen";
        EXPECT_EQ(drain_oldest_first(victim, record), numbers(0, 200))
            << "the batch goes back to the front of the victim, in its order";
        EXPECT_EQ(drain_oldest_first(thief, record), numbers(1000, 2))
            << "the thief's queue is as it was";
    }
    EXPECT_EQ(record.destroyed_unrun, 0);
}

TEST(Lesson03Ex2, AStealWithNoMemoryForItsBatchTakesNothingAndThrowsNothing) {
    // The very first allocation, the batch's vector (step 1), fails.
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    Record record;
    {
        WorkerQueue victim, thief;
        push_numbered(victim, record, 0, 50);
        const std::uint64_t failed_before = ws::testing::failed_allocations();
        bool escaped = false;
        const std::size_t moved = steal_with_failure_after(victim, thief, 0, escaped);
        ASSERT_EQ(ws::testing::failed_allocations(), failed_before + 1)
            << "the allocation that was to fail did not happen: the test proves nothing";
        EXPECT_FALSE(escaped) << "std::bad_alloc left steal_half_into: in the pool it leaves "
                                 "the worker's loop too, and std::terminate ends the program";
        EXPECT_EQ(moved, 0u);
        EXPECT_EQ(drain_oldest_first(victim, record), numbers(0, 50));
        EXPECT_EQ(thief.size(), 0u);
    }
    EXPECT_EQ(record.destroyed_unrun, 0);
}

TEST(Lesson03Ex2, AfterAnOutOfMemoryStealTheNextStealMovesTheBatch) {
    // Memory is back: the same two queues steal as usual, the batch at the back of the thief.
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    Record record;
    {
        WorkerQueue victim, thief;
        push_numbered(victim, record, 0, 200);
        push_numbered(thief, record, 1000, 2);
        bool escaped = false;
        (void)steal_with_failure_after(victim, thief, 1, escaped);
        EXPECT_FALSE(escaped);
        EXPECT_EQ(victim.steal_half_into(thief), 100u);
        std::vector<int> expected = numbers(1000, 2);
        for (int i : numbers(0, 100))
            expected.push_back(i);
        EXPECT_EQ(drain_oldest_first(thief, record), expected);
        EXPECT_EQ(drain_oldest_first(victim, record), numbers(100, 100));
    }
    EXPECT_EQ(record.destroyed_unrun, 0);
}
