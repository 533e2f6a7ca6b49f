// Lesson 09, exercise 5, when memory runs out: a channel and when_all wake with wake(), which
// resumes the coroutine on the waker's own thread when the pool refuses the resume job. The
// waiter taken off the channel's queue, and the child started by when_all, must not be lost.
//
// Deterministic, as in test_ex2_out_of_memory.cpp: a coroutine in the first job a fresh pool's
// only worker runs makes that worker's next spawn fail (its cache of task nodes is still empty,
// so the spawn needs a block), and checks that it did fail.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <tuple>

#include <ws/testing/failing_new.hpp>
#include <ws/testing/harness.hpp>
#include <ws/testing/within.hpp>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson09_test::current_thread;
using ws::lesson09::Channel;
using ws::lesson09::spawn;
using ws::lesson09::sync_wait;
using ws::lesson09::Task;
using ws::lesson09::ThreadPool;
using ws::lesson09::when_all;
using ws::testing::disarm_allocation_failures;
using ws::testing::fail_allocation_after;
using ws::testing::failed_allocations;

namespace {

Task<void> receive_one(Channel<int>& channel, std::atomic<int>& got, std::thread::id& where) {
    const int value = co_await channel.receive();
    where = current_thread();
    got.fetch_add(value);
}

// The send finds the receiver waiting, takes it off the queue, and wakes it: the spawn of its
// resume job is this worker's first, and fails.
Task<void> send_with_no_memory_left(Channel<int>& channel, std::thread::id& sender) {
    sender = current_thread();
    fail_allocation_after(0);
    co_await channel.send(7);
    disarm_allocation_failures();
}

// Woken inline by the sender's wake (the pool refused the resume job), the receiver uses the
// same channel again at once: its mutex must be free by then.
Task<void> receive_then_send_back(Channel<int>& channel, std::atomic<int>& got) {
    const int value = co_await channel.receive();
    co_await channel.send(value + 1);  // room in the buffer: goes on without suspending
    got = value;
}

Task<std::thread::id> where_am_i() {
    co_return current_thread();
}

// when_all allocates its two children's frames, then wakes the first child: that spawn is this
// worker's first, and fails.
Task<int> when_all_with_no_memory_left(ThreadPool& pool, std::thread::id& parent) {
    parent = current_thread();
    Task<std::tuple<std::thread::id, std::thread::id>> both =
        when_all(pool, where_am_i(), where_am_i());
    fail_allocation_after(2);
    const auto [first, second] = co_await std::move(both);
    disarm_allocation_failures();
    co_return (first == parent ? 1 : 0) + (second == parent ? 1 : 0);
}

Task<int> a_number(int value) {
    co_return value;
}

void refuse_every_allocation_from_now_on(void*) noexcept {
    ws::testing::refuse_allocations(true);
}

// As when_all_with_no_memory_left, but after the first failure every allocation of this worker
// fails, so each child that when_all wakes runs inline; and once both children are done this
// coroutine ends, destroying when_all's frame (which holds the awaiter when_all runs in), all
// on this thread before the wake that ran the last child returns.
Task<int> when_all_then_end_with_no_memory_left(ThreadPool& pool) {
    int sum = 0;
    {
        Task<std::tuple<int, int>> both = when_all(pool, a_number(1), a_number(2));
        ws::testing::before_each_allocation_failure(&refuse_every_allocation_from_now_on, nullptr);
        fail_allocation_after(2);  // the children's frames; then the first spawn fails
        const auto [first, second] = co_await std::move(both);
        disarm_allocation_failures();
        ws::testing::before_each_allocation_failure(nullptr, nullptr);
        sum = first + second;
    }  // when_all's frame is destroyed here
    co_return sum;
}

}  // namespace

TEST(Lesson09Ex5, AChannelWakesItsReceiverInlineWhenThePoolCannotTakeTheJob) {
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    ThreadPool pool(1);
    Channel<int> channel(pool, 1);
    std::atomic<int> got{0};
    std::thread::id receiver, sender;
    Task<void> waiter = receive_one(channel, got, receiver);
    waiter.handle().resume();  // here, up to co_await receive(): the channel is empty
    ASSERT_FALSE(waiter.handle().done());
    const std::uint64_t failed_before = failed_allocations();
    spawn(pool, send_with_no_memory_left(channel, sender));
    pool.wait_idle();
    ASSERT_EQ(failed_allocations() - failed_before, 1U)
        << "the worker's spawn did not allocate, so this test did not test the fallback";
    EXPECT_EQ(got.load(), 7) << "the receiver taken off the queue was lost";
    EXPECT_EQ(receiver, sender)
        << "wake must resume it on the sender's thread when the pool cannot";
    EXPECT_TRUE(waiter.handle().done());
}

TEST(Lesson09Ex5, WhenAllRunsAChildInlineWhenThePoolCannotTakeIt) {
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    ThreadPool pool(1);
    std::thread::id parent;
    const std::uint64_t failed_before = failed_allocations();
    const int children_on_the_parents_thread =
        sync_wait(pool, when_all_with_no_memory_left(pool, parent));
    ASSERT_EQ(failed_allocations() - failed_before, 1U)
        << "the worker's spawn did not allocate, so this test did not test the fallback";
    EXPECT_EQ(children_on_the_parents_thread, 2)
        << "both children run on the parent's worker: the refused one inline, the last by "
           "symmetric transfer";
    pool.wait_idle();
}

// Under AddressSanitizer: a when_all that, after waking its last child, reads its awaiter again
// (a loop's bound, say) reads the freed frame of when_all, and the sanitizer reports it.
TEST(Lesson09Ex5, WhenAllDoesNotTouchItsAwaiterAfterTheLastChildResumedTheParent) {
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    ThreadPool pool(1);
    const std::uint64_t failed_before = failed_allocations();
    EXPECT_EQ(sync_wait(pool, when_all_then_end_with_no_memory_left(pool)), 3);
    ASSERT_GE(failed_allocations() - failed_before, 1U)
        << "the worker's spawn did not allocate, so this test did not test the fallback";
    pool.wait_idle();
}

TEST(Lesson09Ex5, AReceiverWokenInlineCanUseTheChannelAtOnce) {
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    struct Setup {
        ThreadPool pool{1};
        Channel<int> channel{pool, 1};
        std::atomic<int> got{0};
        std::thread::id sender;
        Task<void> receiver;  // last: destroyed first
    };
    auto setup = std::make_unique<Setup>();
    setup->receiver = receive_then_send_back(setup->channel, setup->got);
    setup->receiver.handle().resume();  // here, up to co_await receive(): the channel is empty
    ASSERT_FALSE(setup->receiver.handle().done());
    const std::uint64_t failed_before = failed_allocations();
    spawn(setup->pool, send_with_no_memory_left(setup->channel, setup->sender));
    ws::testing::DetachedCall idle([&pool = setup->pool] { pool.wait_idle(); });
    if (!idle.wait_for(std::chrono::seconds(2) * ws::testing::slowdown())) {
        (void)setup.release();  // its worker is stuck inside the channel: leak everything
        FAIL() << "the receiver, resumed on the sender's thread because the pool refused its "
                  "job, could not use the channel again: a waker must not hold the channel's "
                  "mutex while it wakes anyone";
    }
    ASSERT_EQ(failed_allocations() - failed_before, 1U)
        << "the worker's spawn did not allocate, so this test did not test the fallback";
    EXPECT_EQ(setup->got.load(), 7);
    EXPECT_TRUE(setup->receiver.handle().done());
}
