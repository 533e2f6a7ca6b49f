// Lesson 09, exercise 2, when memory runs out: every place where the pool may refuse a resume
// job (its spawn throws std::bad_alloc when it needs a fresh block of nodes) loses nothing,
// leaks nothing (ASan's LeakSanitizer) and resumes nothing twice.
//
// Deterministic: a test makes the N-th next allocation *of one thread* fail
// (<ws/testing/failing_new.hpp>, which needs ld --wrap: the root CMakeLists.txt sets it for
// this lesson's test programs). A fresh pool has no nodes cached for any thread, so the first
// spawn from a thread allocates a block: that is the allocation the tests make fail, and each
// checks that it did fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <iterator>
#include <new>
#include <thread>

#include <ws/testing/failing_new.hpp>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson09_test::current_thread;
using lesson09_test::Tracked;
using ws::lesson09::Event;
using ws::lesson09::spawn;
using ws::lesson09::sync_wait;
using ws::lesson09::Task;
using ws::lesson09::ThreadPool;
using ws::testing::disarm_allocation_failures;
using ws::testing::fail_allocation_after;
using ws::testing::failed_allocations;

namespace {

// Thrown without allocating (no message string to copy): the runtime takes an exception's own
// memory with malloc, not operator new.
struct Boom {};

Task<void> wait_then_count(Event& event, std::atomic<int>& resumed, std::thread::id& where) {
    co_await event;
    where = current_thread();
    resumed.fetch_add(1);
}

Task<void> count_run(Tracked, std::atomic<int>& ran) {
    ran.fetch_add(1);
    co_return;
}

Task<int> answer(Tracked) {
    co_return 42;
}

// Arms its own thread (a worker), then throws: from here to wait_idle, nothing on the
// exception's way may allocate.
Task<void> throw_with_no_memory_left(Tracked) {
    fail_allocation_after(0);
    throw Boom{};
    co_return;
}

}  // namespace

TEST(Lesson09Ex2, AWakerResumesInlineWhenThePoolCannotTakeTheJob) {
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    ThreadPool pool(1);
    Event event(pool);
    std::atomic<int> resumed{0};
    std::thread::id where;
    Task<void> waiter = wait_then_count(event, resumed, where);
    waiter.handle().resume();  // runs up to co_await event, and suspends there (it is not set)
    ASSERT_FALSE(waiter.handle().done());
    const std::uint64_t failed_before = failed_allocations();
    fail_allocation_after(0);  // resume_on's spawn needs a first block of nodes for this thread
    event.set();
    disarm_allocation_failures();
    ASSERT_EQ(failed_allocations() - failed_before, 1U)
        << "the pool's spawn did not allocate, so this test did not test the fallback";
    EXPECT_EQ(resumed.load(), 1) << "the waiter was lost when the pool refused its resume job";
    EXPECT_EQ(where, current_thread()) << "wake must resume it here when the pool cannot";
    EXPECT_TRUE(waiter.handle().done());
    pool.wait_idle();  // returns: the refused job was taken back from the pool's count
    EXPECT_EQ(resumed.load(), 1) << "resumed twice";
}

// The inline fallback makes the waker's order exact: set() resumes the first waiter it wakes on
// its own thread, where that coroutine runs to its end and frees its frame, which holds the
// waiter, before wake returns. A set() that reads the waiter (its next) after waking it reads
// freed memory in every run, which AddressSanitizer (the asan preset) reports; other builds read
// stale memory and pass.
TEST(Lesson09Ex2, TheWakerDoesNotTouchAWaiterItResumedInline) {
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    ThreadPool pool(1);
    Event event(pool);
    std::atomic<int> resumed{0};
    std::thread::id where[2];
    // Spawned from another thread, so that this thread's first spawn, which needs a block of
    // nodes, is the resume job of set()'s first wake. Detached: a frame frees itself at its end.
    std::thread([&] {
        for (std::thread::id& w : where)
            spawn(pool, wait_then_count(event, resumed, w));
    }).join();
    pool.wait_idle();  // both suspended on the event
    ASSERT_EQ(resumed.load(), 0);
    const std::uint64_t failed_before = failed_allocations();
    fail_allocation_after(0);
    event.set();
    disarm_allocation_failures();
    ASSERT_EQ(failed_allocations() - failed_before, 1U)
        << "the pool's spawn did not allocate, so this test did not test the fallback";
    pool.wait_idle();
    EXPECT_EQ(resumed.load(), 2) << "a waiter was lost";
    EXPECT_EQ(std::count(std::begin(where), std::end(where), current_thread()), 1)
        << "the first waiter woken must be resumed here, the other on the worker";
}

TEST(Lesson09Ex2, SpawnFreesTheTaskWhenThePoolCannotTakeIt) {
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    ThreadPool pool(1);
    std::atomic<int> live{0}, ran{0};
    Task<void> task = count_run(Tracked(live), ran);
    const std::uint64_t failed_before = failed_allocations();
    fail_allocation_after(1);  // the detached frame is allocated; the pool's first block is not
    EXPECT_THROW(spawn(pool, std::move(task)), std::bad_alloc);
    disarm_allocation_failures();
    ASSERT_EQ(failed_allocations() - failed_before, 1U);
    EXPECT_EQ(live.load(), 0) << "the refused task's frame (or the detached one) was not freed";
    pool.wait_idle();  // returns: nothing of the refused spawn is counted
    EXPECT_EQ(ran.load(), 0) << "a spawn that threw must not run the task";
    spawn(pool, count_run(Tracked(live), ran));  // the pool still works
    pool.wait_idle();
    EXPECT_EQ(ran.load(), 1);
    EXPECT_EQ(live.load(), 0);
}

TEST(Lesson09Ex2, SyncWaitFreesTheTaskWhenThePoolCannotTakeIt) {
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    ThreadPool pool(1);
    std::atomic<int> live{0};
    Task<int> task = answer(Tracked(live));
    const std::uint64_t failed_before = failed_allocations();
    fail_allocation_after(1);  // sync_wait's frame is allocated; the pool's first block is not
    EXPECT_THROW(sync_wait(pool, std::move(task)), std::bad_alloc);
    disarm_allocation_failures();
    ASSERT_EQ(failed_allocations() - failed_before, 1U);
    EXPECT_EQ(live.load(), 0);
    pool.wait_idle();
    EXPECT_EQ(sync_wait(pool, answer(Tracked(live))), 42);  // the pool still works
    EXPECT_EQ(live.load(), 0);
}

TEST(Lesson09Ex2, ADetachedExceptionReachesThePoolWithoutAllocating) {
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    ThreadPool pool(1);  // one worker: the coroutine and the check below run on the same thread
    std::atomic<int> live{0};
    spawn(pool, throw_with_no_memory_left(Tracked(live)));
    // Had the exception's way allocated, the worker's armed allocation would have thrown
    // std::bad_alloc out of the detached frame: std::terminate.
    EXPECT_THROW(pool.wait_idle(), Boom);
    EXPECT_EQ(live.load(), 0) << "the detached frame (and its task) were not freed";
    std::atomic<bool> still_armed{false};
    pool.spawn([&still_armed] { still_armed = disarm_allocation_failures(); });
    pool.wait_idle();
    EXPECT_TRUE(still_armed.load()) << "something allocated on the worker on the exception's way";
}
