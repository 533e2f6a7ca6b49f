// Lesson 09, exercise 4: the waker. An Event's waiters are suspended coroutines; set() puts
// each back on the pool exactly once, and a set() that comes between a waiter's check and its
// suspension is not lost.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/thread_state.hpp>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson09_test::eventually;
using ws::lesson09::Event;
using ws::lesson09::spawn;
using ws::lesson09::Task;
using ws::lesson09::ThreadPool;

namespace {

Task<void> sets(std::atomic<bool>& flag) {
    flag = true;
    co_return;
}

Task<void> wait_then_mark(Event& event, std::atomic<bool>& started, ws::testing::ExactlyOnce& seen,
                          std::size_t i) {
    started = true;
    co_await event;
    seen.mark(i);
}

Task<void> wait_then_count(Event& event, std::atomic<int>& resumed) {
    co_await event;
    resumed.fetch_add(1);
}

}  // namespace

// The race, forced: the waiter has checked (await_ready said "not set"), then set() runs, then
// the waiter tries to suspend. It must not: nobody would ever wake it.
TEST(Lesson09Ex4, ASetBetweenTheCheckAndTheSuspensionIsNotLost) {
    ThreadPool pool(1);
    Event event(pool);
    std::atomic<bool> resumed{false};
    Task<void> waiter = sets(resumed);
    Event::Awaiter awaiter = event.operator co_await();
    ASSERT_FALSE(awaiter.await_ready());
    event.set();
    EXPECT_FALSE(awaiter.await_suspend(waiter.handle()))
        << "await_suspend must see the set() that came after the check, and not suspend";
    pool.wait_idle();
    EXPECT_FALSE(resumed.load()) << "a waiter that did not suspend must not be resumed as well";
}

// The other order: suspended first, then set: set() must hand the waiter to the pool.
TEST(Lesson09Ex4, ASetAfterTheSuspensionResumesTheWaiterOnThePool) {
    ThreadPool pool(1);
    Event event(pool);
    std::atomic<bool> resumed{false};
    Task<void> waiter = sets(resumed);
    Event::Awaiter awaiter = event.operator co_await();
    ASSERT_FALSE(awaiter.await_ready());
    ASSERT_TRUE(awaiter.await_suspend(waiter.handle()));
    EXPECT_FALSE(resumed.load());
    event.set();
    pool.wait_idle();
    EXPECT_TRUE(resumed.load()) << "set() must resume the suspended waiter (as a task)";
    EXPECT_TRUE(waiter.handle().done());
}

TEST(Lesson09Ex4, AwaitingASetEventDoesNotSuspend) {
    ThreadPool pool(1);
    Event event(pool);
    event.set();
    EXPECT_TRUE(event.is_set());
    std::atomic<int> resumed{0};
    Task<void> task = wait_then_count(event, resumed);
    task.handle().resume();
    EXPECT_TRUE(task.handle().done()) << "co_await of a set event continues at once";
    EXPECT_EQ(resumed.load(), 1);
}

TEST(Lesson09Ex4, EveryWaiterIsResumedOnce) {
    ThreadPool pool(2);
    Event event(pool);
    constexpr int kWaiters = 1000;
    std::atomic<int> resumed{0};
    for (int i = 0; i < kWaiters; ++i)
        spawn(pool, wait_then_count(event, resumed));
    pool.wait_idle();  // every waiter has suspended: nothing is left to run
    EXPECT_EQ(resumed.load(), 0) << "nobody may pass an unset event";
    event.set();
    pool.wait_idle();  // resumed waiters are tasks: wait_idle waits for them
    EXPECT_EQ(resumed.load(), kWaiters);
    event.set();  // a second set does nothing
    pool.wait_idle();
    EXPECT_EQ(resumed.load(), kWaiters);
}

// A waiter and a setter race, many times: every waiter must come through. A lost wake-up shows
// as a missing mark (wait_idle does not wait for a coroutine that stays suspended).
TEST(Lesson09Ex4, WaitersRacingWithSetAreNeverLost) {
    ThreadPool pool(2);
    const std::size_t rounds = 20'000 / static_cast<std::size_t>(ws::testing::slowdown());
    ws::testing::ExactlyOnce seen(rounds);
    std::vector<std::unique_ptr<Event>> events;
    for (std::size_t i = 0; i < rounds; ++i) {
        events.push_back(std::make_unique<Event>(pool));
        std::atomic<bool> started{false};
        spawn(pool, wait_then_mark(*events.back(), started, seen, i));
        if (i % 2 == 0) eventually(started);  // half the time, set right after the check
        events.back()->set();
        pool.wait_idle();
    }
    EXPECT_TRUE(seen.verify());
}

TEST(Lesson09Ex4, SetFromAWorkerWakesTheWaiters) {
    ThreadPool pool(2);
    Event event(pool);
    std::atomic<int> resumed{0};
    for (int i = 0; i < 100; ++i)
        spawn(pool, wait_then_count(event, resumed));
    pool.spawn([&] { event.set(); });
    pool.wait_idle();
    EXPECT_EQ(resumed.load(), 100);
}

// set() wakes a waiter; the woken coroutine runs to its end on the worker and its frame — which
// holds the waiter — is freed. A set() that reads the waiter (its next, its handle) after waking
// it reads freed memory. Forced: the setter is SCHED_IDLE on the parked worker's CPU, so the
// worker it wakes runs the coroutine to its end before the setter goes on. The read shows under
// AddressSanitizer (the asan preset); other builds read stale memory and pass.
TEST(Lesson09Ex4, TheWakerDoesNotTouchAWaiterItHasWoken) {
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc, sched_setscheduler)";
    using namespace std::chrono_literals;
    const auto before = ws::testing::thread_ids();
    ThreadPool pool(1);
    const auto workers = ws::testing::new_threads(before);
    ASSERT_EQ(workers.size(), 1u);
    const int cpu = ws::testing::a_cpu_of_this_thread();
    ws::testing::pin_to_cpu(workers[0], cpu);
    ws::testing::request_short_slice(workers[0]);
    for (int attempt = 0; attempt < 3; ++attempt) {
        Event event(pool);
        std::atomic<int> resumed{0};
        for (int i = 0; i < 4; ++i)
            spawn(pool, wait_then_count(event, resumed));
        pool.wait_idle();  // all four suspended on the event
        ASSERT_TRUE(ws::testing::wait_until_asleep(workers, 10s * ws::testing::slowdown()))
            << "the worker did not park";
        std::thread setter([&] {
            const auto me = ws::testing::current_thread_id();
            ws::testing::pin_to_cpu(me, cpu);
            ws::testing::make_idle_priority(me);  // the setter ends with this attempt
            event.set();
        });
        setter.join();
        pool.wait_idle();
        EXPECT_EQ(resumed.load(), 4);
    }
}
