// The explorer itself: use after free and races on reclamation, replay, determinism,
// spin-waits and livelocks, exceptions, and ws::atomic outside explore().
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>

#include <ws/atomic.hpp>
#include <ws/model/explore.hpp>

#include "model_testing.hpp"

using namespace model_testing;
using ws::model::check;
using ws::model::explore;
using ws::model::Report;
using ws::model::Thread;

namespace {

// A reference-counted box: each of two threads drops one reference; whoever drops the last one
// deletes it. The other thread may still read the box's value just before its own drop.
Report refcount(std::memory_order drop) {
    struct Box {
        ws::atomic<int> refs{2};
        ws::atomic<int> value{7};
    };
    return explore(options(), [=] {
        auto* box = new Box;
        auto use_then_drop = [box, drop] {
            (void)box->value.load(relaxed);
            if (box->refs.fetch_sub(1, drop) == 1) delete box;
        };
        Thread other(use_then_drop);
        use_then_drop();
    });
}

}  // namespace

TEST(Explorer, FindsAUseAfterFree) {
    const Report r = explore(options(), [] {
        auto* flag = new ws::atomic<bool>(false);
        Thread reader([flag] { (void)flag->load(acquire); });
        delete flag;  // the reader may not have read it yet
    });
    ASSERT_TRUE(r.failed) << r;
    EXPECT_NE(r.failure.find("use after free"), std::string::npos) << r;
    EXPECT_NE(r.trace.find("destroys a0"), std::string::npos) << r;
}

// With a relaxed decrement, the deleting thread does not synchronise with the other thread's
// read of the box: the delete races with it, although it always runs after it.
TEST(Explorer, FindsARaceOnReclamation) {
    const Report r = refcount(relaxed);
    ASSERT_TRUE(r.failed) << r;
    EXPECT_NE(r.failure.find("race on reclamation"), std::string::npos) << r;
}

TEST(Explorer, AcqRelReferenceCountingReclaimsSafely) {
    const Report r = refcount(acq_rel);
    EXPECT_FALSE(r.failed) << r;
    EXPECT_TRUE(r.dfs_complete) << r;
}

// The trace and the schedule string of a failure; the string replays exactly that execution.
TEST(Explorer, ReplayRunsTheFailingExecutionAgain) {
    auto scenario = [] {
        ws::atomic<int> x{0}, y{0};
        int r1 = -1, r2 = -1;
        {
            Thread a([&] {
                x.store(1, relaxed);
                r1 = y.load(relaxed);
            });
            y.store(1, relaxed);
            r2 = x.load(relaxed);
        }
        check(r1 == 1 || r2 == 1, "both zero");
    };
    const Report found = explore(options(), scenario);
    ASSERT_TRUE(found.failed) << found;
    EXPECT_NE(found.trace.find("store relaxed"), std::string::npos) << found;
    EXPECT_NE(found.trace.find("stale"), std::string::npos) << found;
    ASSERT_FALSE(found.schedule.empty());

    auto again = options();
    again.replay = found.schedule;
    const Report replayed = explore(again, scenario);
    ASSERT_TRUE(replayed.failed) << replayed;
    EXPECT_EQ(replayed.executions, 1u);
    EXPECT_EQ(replayed.failure, found.failure);
    EXPECT_EQ(replayed.schedule, found.schedule);
}

TEST(Explorer, AReplayThatDoesNotFitTheScenarioSaysSo) {
    auto o = options();
    o.replay = "r7,t5";
    const Report r = explore(o, [] {
        ws::atomic<int> x{0};
        Thread a([&] { x.store(1, relaxed); });
        (void)x.load(relaxed);
    });
    ASSERT_TRUE(r.failed) << r;
    EXPECT_NE(r.failure.find("does not fit"), std::string::npos) << r;
}

// Same scenario, same options: same executions, same failure, same schedule.
TEST(Explorer, IsDeterministic) {
    auto scenario = [] {
        ws::atomic<int> x{0}, y{0};
        int r1 = -1, r2 = -1, r3 = -1, r4 = -1;
        {
            Thread wx([&] { x.store(1, release); });
            Thread wy([&] { y.store(1, release); });
            Thread ra([&] {
                r1 = x.load(acquire);
                r2 = y.load(acquire);
            });
            r3 = y.load(acquire);
            r4 = x.load(acquire);
        }
        check(!(r1 == 1 && r2 == 0 && r3 == 1 && r4 == 0), "IRIW");
    };
    const Report first = explore(options(), scenario);
    const Report second = explore(options(), scenario);
    ASSERT_TRUE(first.failed);
    EXPECT_EQ(first.executions, second.executions);
    EXPECT_EQ(first.schedule, second.schedule);
    EXPECT_EQ(first.trace, second.trace);
}

// A spin-wait for another thread's store ends: a thread that reads what it read before, having
// written nothing since, yields until some thread writes.
TEST(Explorer, SpinWaitsEnd) {
    const Report r = explore(options(), [] {
        ws::atomic<bool> ready{false};
        ws::atomic<int> data{0};
        int seen = -1;
        {
            Thread waiter([&] {
                while (!ready.load(acquire)) {
                }
                seen = data.load(relaxed);
            });
            data.store(5, relaxed);
            ready.store(true, release);
        }
        check(seen == 5, "the waiter saw stale data");
    });
    EXPECT_FALSE(r.failed) << r;
    EXPECT_TRUE(r.dfs_complete) << r;
}

TEST(Explorer, ReportsALivelock) {
    const Report r = explore(options(), [] {
        ws::atomic<bool> never{false};
        while (!never.load(acquire)) {
        }
    });
    ASSERT_TRUE(r.failed) << r;
    EXPECT_NE(r.failure.find("livelock"), std::string::npos) << r;
}

TEST(Explorer, AnExceptionOutOfAThreadFailsTheExecution) {
    const Report r = explore(options(), [] {
        Thread a([] { throw std::runtime_error("lesson 99, exercise 1: not yet"); });
    });
    ASSERT_TRUE(r.failed) << r;
    EXPECT_NE(r.failure.find("lesson 99, exercise 1"), std::string::npos) << r;
}

// Outside explore(), the instrumented atomic is a plain std::atomic.
TEST(Explorer, OutsideExploreItIsAStdAtomic) {
    ws::atomic<int> counter{0};
    std::thread a([&] {
        for (int i = 0; i < 1000; ++i)
            counter.fetch_add(1, relaxed);
    });
    for (int i = 0; i < 1000; ++i)
        counter.fetch_add(1, relaxed);
    a.join();
    EXPECT_EQ(counter.load(), 2000);
    int expected = 2000;
    EXPECT_TRUE(counter.compare_exchange_strong(expected, 1));
    EXPECT_EQ(counter.exchange(3), 1);
}
