// Lesson 09, exercise 4: the waker. An Event's waiters are suspended coroutines; set() puts
// each back on the pool exactly once, and a set() that comes between a waiter's check and its
// suspension is not lost.
#include <gtest/gtest.h>

#include <algorithm>
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
    // Up to 20,000 rounds in chunks of 1,000, for at most 8 s (times slowdown()): every round
    // waits for the pool to be idle again, so beside busy processes a round costs milliseconds
    // of wake-ups, not microseconds, and a fixed count would run into the watchdog.
    ThreadPool pool(2);
    const std::size_t max_rounds = 20'000 / static_cast<std::size_t>(ws::testing::slowdown());
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::seconds(8) * ws::testing::slowdown();
    std::size_t done = 0;
    while (done < max_rounds && (done == 0 || std::chrono::steady_clock::now() < until)) {
        const std::size_t chunk = std::min<std::size_t>(1'000, max_rounds - done);
        ws::testing::ExactlyOnce seen(chunk);
        std::vector<std::unique_ptr<Event>> events;
        for (std::size_t i = 0; i < chunk; ++i) {
            events.push_back(std::make_unique<Event>(pool));
            std::atomic<bool> started{false};
            spawn(pool, wait_then_mark(*events.back(), started, seen, i));
            if (i % 2 == 0) eventually(started);  // half the time, set right after the check
            events.back()->set();
            pool.wait_idle();
        }
        ASSERT_TRUE(seen.verify()) << "in rounds " << done << " to " << done + chunk - 1;
        done += chunk;
    }
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

// The waker's lifetime tests: a one-worker pool, its worker pinned to one CPU, and set() called
// from a SCHED_IDLE thread on that CPU, so the worker it wakes runs the woken coroutine to its
// end before the setter goes on. A set() that then reads freed memory shows under
// AddressSanitizer (the asan preset); other builds read stale memory and pass.
class SteeredWorker {
  public:
    SteeredWorker() : before_(ws::testing::thread_ids()), pool_(1) {
        workers_ = ws::testing::new_threads(before_);
        cpu_ = ws::testing::a_cpu_of_this_thread();
        if (workers_.size() != 1) return;
        ws::testing::pin_to_cpu(workers_[0], cpu_);
        ws::testing::request_short_slice(workers_[0]);
    }
    ThreadPool& pool() { return pool_; }
    bool has_one_worker() const { return workers_.size() == 1; }

    // Once the worker has parked (every waiter suspended), calls event.set() as described.
    void set_from_an_idle_thread(Event& event) {
        using namespace std::chrono_literals;
        ASSERT_TRUE(ws::testing::wait_until_asleep(workers_, 10s * ws::testing::slowdown()))
            << "the worker did not park";
        std::thread setter([&] {
            const auto me = ws::testing::current_thread_id();
            ws::testing::pin_to_cpu(me, cpu_);
            ws::testing::make_idle_priority(me);  // the setter ends with this attempt
            event.set();
        });
        setter.join();
    }

  private:
    std::vector<ws::testing::ThreadId> before_;
    ThreadPool pool_;
    std::vector<ws::testing::ThreadId> workers_;
    int cpu_ = -1;
};

// set() wakes a waiter; the woken coroutine runs to its end on the worker and its frame — which
// holds the waiter — is freed. A set() that reads the waiter (its next, its handle) after waking
// it reads freed memory.
TEST(Lesson09Ex4, TheWakerDoesNotTouchAWaiterItHasWoken) {
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc, sched_setscheduler)";
    SteeredWorker steered;
    ASSERT_TRUE(steered.has_one_worker());
    for (int attempt = 0; attempt < 3; ++attempt) {
        Event event(steered.pool());
        std::atomic<int> resumed{0};
        for (int i = 0; i < 4; ++i)
            spawn(steered.pool(), wait_then_count(event, resumed));
        steered.pool().wait_idle();  // all four suspended on the event
        steered.set_from_an_idle_thread(event);
        steered.pool().wait_idle();
        EXPECT_EQ(resumed.load(), 4);
    }
}

namespace {

// The first waiter set() wakes (the newest: the list is a stack) owns the event and frees it.
Task<void> wait_then_free(Event* event, std::atomic<int>& resumed) {
    co_await *event;
    delete event;
    resumed.fetch_add(1);
}

}  // namespace

// The event itself may die while set() runs: a woken waiter may own it, and free it as soon as
// it is resumed. A set() that reads any member (its pool) after waking the first waiter reads
// freed memory.
TEST(Lesson09Ex4, TheWakerDoesNotTouchTheEventAfterWakingAWaiter) {
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc, sched_setscheduler)";
    SteeredWorker steered;
    ASSERT_TRUE(steered.has_one_worker());
    for (int attempt = 0; attempt < 3; ++attempt) {
        Event* event = new Event(steered.pool());
        std::atomic<int> resumed{0};
        for (int i = 0; i < 3; ++i)
            spawn(steered.pool(), wait_then_count(*event, resumed));
        steered.pool().wait_idle();
        spawn(steered.pool(), wait_then_free(event, resumed));  // the newest waiter: woken first
        steered.pool().wait_idle();                             // all four suspended on the event
        steered.set_from_an_idle_thread(*event);
        steered.pool().wait_idle();
        EXPECT_EQ(resumed.load(), 4);
    }
}
