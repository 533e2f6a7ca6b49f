// Lesson 03, exercise 2: a steal whose thief has no room for the batch, and whose victim then has
// no room to take it back either, loses no task and throws nothing. The batch exists nowhere
// else, so steal_half_into must keep it and try again. <ws/testing/failing_new.hpp> fails the
// thief's queue growing for the batch; just before that failure throws, its
// before_each_allocation_failure hook arms the thread once more, so the next allocation, the
// victim's queue growing to take the batch back, fails too. After that memory is back.
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

namespace {

// before_each_allocation_failure's hook: at the first failure, arms this thread to fail the
// next allocation too; then nothing.
void fail_the_next_allocation_too(void* failures_seen) noexcept {
    if (++*static_cast<int*>(failures_seen) == 1) ws::testing::fail_allocation_after(0);
}

}  // namespace

TEST(Lesson03Ex2, AStealWhoseBatchCannotGoBackEitherKeepsItAndMovesItOnceMemoryIsBack) {
    // 200 tasks, a batch of 100: the thief's queue and the victim's both need new blocks for it,
    // whatever their block size (the victim has just let go of its front blocks). Allocations:
    // the batch's vector succeeds; the thief's queue growing fails; the victim's queue growing
    // to take the batch back fails; then everything succeeds. So the batch is out of the victim,
    // the thief has no room for it, and putting it back fails: it must neither be dropped (its
    // tasks destroyed unrun, while the pool still counts them) nor let std::bad_alloc out (which
    // ends the worker), but be tried again, and land whole, once, in one of the two queues: at
    // the back of the thief (the reference tries the thief first again), or back at the front
    // of the victim (nothing stolen).
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    Record record;
    const std::int64_t not_freed_before = ws::testing::allocations_not_freed_here();
    {
        WorkerQueue victim, thief;
        push_numbered(victim, record, 0, 200);
        push_numbered(thief, record, 1000, 2);
        const std::uint64_t failed_before = ws::testing::failed_allocations();
        int failures_seen = 0;
        ws::testing::before_each_allocation_failure(&fail_the_next_allocation_too, &failures_seen);
        struct Unhook {  // also when an exception leaves
            ~Unhook() { ws::testing::before_each_allocation_failure(nullptr); }
        } unhook;
        bool escaped = false;
        const std::size_t moved = steal_with_failure_after(victim, thief, 1, escaped);
        ASSERT_EQ(ws::testing::failed_allocations(), failed_before + 2)
            << "the two allocations that were to fail (the thief's queue growing, then the "
               "victim's to take the batch back) did not both happen: the test proves nothing";
        ASSERT_EQ(failures_seen, 2);
        EXPECT_FALSE(escaped) << "std::bad_alloc left steal_half_into when the batch could not "
                                 "go back: in the pool it leaves the worker's loop too, and "
                                 "std::terminate ends the program";
        EXPECT_EQ(record.destroyed_unrun, 0)
            << "tasks of the batch were destroyed without running when it could not go back to "
               "the victim: lost, while the pool still counts them, so wait_idle would wait for "
               "them forever. The batch exists nowhere else: try again";
        const std::vector<int> in_thief = drain_oldest_first(thief, record);
        const std::vector<int> in_victim = drain_oldest_first(victim, record);
        if (moved != 0) {
            EXPECT_EQ(moved, 100u) << "a steal moves the whole batch or none of it";
            std::vector<int> expected = ids(1000, 2);
            for (int i : ids(0, 100))
                expected.push_back(i);
            EXPECT_EQ(in_thief, expected)
                << "the thief holds its own tasks, then the batch, each task once, in its order";
            EXPECT_EQ(in_victim, ids(100, 100))
                << "the victim holds the newer half, each task once";
        } else {
            EXPECT_EQ(in_victim, ids(0, 200))
                << "nothing was stolen, so the batch is back at the front of the victim, each "
                   "task once, in its order";
            EXPECT_EQ(in_thief, ids(1000, 2)) << "the thief's queue is as it was";
        }
    }
    EXPECT_EQ(record.destroyed_unrun, 0);
    record.ran = std::vector<int>();  // the test's own log: frees its buffer
    // Only when all else held: a failed check's message allocates on this thread too.
    if (!HasFailure()) {
        EXPECT_EQ(ws::testing::allocations_not_freed_here(), not_freed_before)
            << "the queues and the steal freed less than they allocated on this thread: a leak";
    }
}
