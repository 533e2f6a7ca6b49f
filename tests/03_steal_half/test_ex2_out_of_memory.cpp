// Lesson 03, exercise 2: a steal that runs out of memory loses no task and throws nothing.
// <ws/testing/failing_new.hpp> makes the calling thread's N-th next allocation throw
// std::bad_alloc, so each test puts the failure exactly where it wants it: the batch's vector
// (step 1), or the thief's queue growing for the batch (step 2).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include <ws/testing/failing_new.hpp>

#include "exercises.hpp"
#include "out_of_memory_helpers.hpp"
#include "worker_queue.hpp"

using namespace lesson03_oom;
using ws::lesson03::WorkerQueue;

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
        EXPECT_EQ(drain_oldest_first(victim, record), ids(0, 200))
            << "the batch goes back to the front of the victim, in its order";
        EXPECT_EQ(drain_oldest_first(thief, record), ids(1000, 2))
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
        EXPECT_EQ(drain_oldest_first(victim, record), ids(0, 50));
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
        std::vector<int> expected = ids(1000, 2);
        for (int i : ids(0, 100))
            expected.push_back(i);
        EXPECT_EQ(drain_oldest_first(thief, record), expected);
        EXPECT_EQ(drain_oldest_first(victim, record), ids(100, 100));
    }
    EXPECT_EQ(record.destroyed_unrun, 0);
}
