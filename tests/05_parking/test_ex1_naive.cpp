// Lesson 05, exercise 1: the naive parker — a condition variable, notified on every spawn —
// alone, then in the pool (Config::naive_parking).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <ws/testing/harness.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>

#include "exercises.hpp"
#include "naive_parker.hpp"
#include "parking_helpers.hpp"

using namespace std::chrono_literals;
using ws::lesson05::NaiveParker;
using ws::testing::slowdown;
using ws::testing::wait_until;

TEST(Lesson05Ex1, NaiveParkReturnsAtOnceWhenThereIsWork) {
    NaiveParker p(1);
    EXPECT_FALSE(p.park([] { return true; }));
    EXPECT_EQ(p.parks(), 0u);
}

TEST(Lesson05Ex1, NaiveParkSleepsUntilNotified) {
    NaiveParker p(1);
    std::atomic<bool> returned{false};
    std::thread t([&] {
        while (!p.park([] { return false; })) {
        }
        returned = true;
    });
    ASSERT_TRUE(wait_until([&] { return p.parks() == 1; }, 5s * slowdown()));
    std::this_thread::sleep_for(50ms);
    // A spurious wake-up is allowed, but not a steady stream of them.
    EXPECT_LE(p.wakeups(), 1u) << "park() keeps returning: does it wait on the condition?";
    p.notify_all();
    EXPECT_TRUE(wait_until([&] { return returned.load(); }, 1s * slowdown()));
    t.join();
}

TEST(Lesson05Ex1, NaiveNotifyAllWakesEveryParkedThread) {
    // Three threads parked, then notify_all: all three must return, within 1 s together. Each
    // counts in parks() under the mutex before it waits, so once notify_all has the mutex all
    // three are waiting. On the heap: a thread that sleeps through notify_all cannot be woken
    // any more, so it and what it uses are left behind (leaked) rather than joined.
    auto p = std::make_unique<NaiveParker>(3);
    auto returned = std::make_unique<std::atomic<int>>(0);
    auto threads = std::make_unique<std::vector<std::thread>>();
    for (int i = 0; i < 3; ++i) {
        threads->emplace_back([&parker = *p, &count = *returned] {
            (void)parker.park([] { return false; });
            count.fetch_add(1);
        });
    }
    ASSERT_TRUE(wait_until([&] { return p->parks() == 3; }, 5s * slowdown()));
    p->notify_all();
    const bool all = wait_until([&] { return returned->load() == 3; }, 1s * slowdown());
    EXPECT_TRUE(all) << 3 - returned->load()
                     << " of the 3 parked threads slept through notify_all: does it wake every "
                        "waiter?";
    if (all) {
        for (std::thread& t : *threads)
            t.join();
    } else {
        (void)threads.release();
        (void)p.release();
        (void)returned.release();
    }
}

TEST(Lesson05Ex1, ANotifyDuringTheRecheckIsNotLost) {
    // The lost wake-up between a sleeper's recheck and its wait, forced: the recheck (this
    // test's) has read "no work" and holds until the spawner has published and notified, or is
    // confirmed blocked on the parker's mutex. With the recheck and the notify both under that
    // mutex, the notify has to wait until the sleeper is inside cv_.wait, and wakes it.
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    NaiveParker p(1);
    std::atomic<bool> work{false}, in_recheck{false}, notified{false}, returned{false};
    std::atomic<ws::testing::ThreadId> spawner_tid{0};
    std::thread sleeper([&] {
        p.park([&] {
            const bool seen = work.load();
            in_recheck = true;
            // Until the spawner has notified, or is held up by the mutex we hold (bounded).
            wait_until(
                [&] {
                    const auto tid = spawner_tid.load();
                    return notified.load() || (tid != 0 && ws::testing::blocked_on_futex(tid));
                },
                2s * slowdown());
            return seen;
        });
        returned = true;
    });
    std::thread spawner([&] {
        spawner_tid = ws::testing::current_thread_id();
        wait_until([&] { return in_recheck.load(); }, 5s * slowdown());
        work = true;  // publish, then notify: the spawner's side
        p.notify_one();
        notified = true;
    });
    spawner.join();
    const bool woke = wait_until([&] { return returned.load(); }, 1s * slowdown());
    EXPECT_TRUE(woke) << "a notify that came while the sleeper was between its recheck and its "
                         "wait was lost: do park() (recheck and wait) and notify_one() (an empty "
                         "critical section before the notify) both hold the mutex?";
    if (!woke) p.notify_all();  // let it go, so the test can end
    sleeper.join();
}

TEST(Lesson05Ex1, NaivePoolRunsEveryTaskExactlyOnce) {
    ws::testing::parking::check_exactly_once<lesson05_test::Pool>(
        lesson05_test::pool_config(2, true));
}

TEST(Lesson05Ex1, AnIdleNaivePoolUsesUnderTwoPercentOfACore) {
    ws::testing::parking::check_idle_cpu<lesson05_test::Pool>(lesson05_test::pool_config(2, true));
}

TEST(Lesson05Ex1, NaivePoolWakesForEveryOutsideSpawn) {
    ws::testing::parking::check_wake_rounds<lesson05_test::Pool>(
        lesson05_test::pool_config(2, true), 2'000);
}

TEST(Lesson05Ex1, NaivePoolRunsTwoLongTasksAtTheSameTime) {
    ws::testing::parking::check_two_long_tasks<lesson05_test::Pool>(
        lesson05_test::pool_config(2, true));
}

TEST(Lesson05Ex1, DestroyingAParkedNaivePoolIsPrompt) {
    ws::testing::parking::check_prompt_destruction<lesson05_test::Pool>(
        lesson05_test::pool_config(2, true), 100ms);
}
