// Lesson 05, exercise 3: fewer wake-ups — wake only when nobody is searching, and let the last
// searcher that finds work wake another. These tests read the counts right after each call:
// a wake is decided (a sleeper claimed) before notify_one or end_search returns.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

#include <ws/testing/harness.hpp>
#include <ws/testing/wait.hpp>

#include "exercises.hpp"
#include "parker.hpp"
#include "parking_helpers.hpp"

using namespace std::chrono_literals;
using lesson05_test::IdleWorker;
using lesson05_test::wait_for_sleepers;
using ws::lesson05::Parker;
using ws::testing::slowdown;
using ws::testing::wait_until;

TEST(Lesson05Ex3, SearchersAreCountedAndParkingStopsTheSearch) {
    Parker p(2);
    p.begin_search();
    EXPECT_EQ(p.searching(), 1u) << "begin_search must count a searcher";
    std::atomic<bool> work{false};
    IdleWorker w(p, work);  // begins a search, then parks
    ASSERT_TRUE(wait_for_sleepers(p, 1));
    EXPECT_EQ(p.searching(), 1u) << "a worker that parks is no longer searching";
    work = true;
    p.end_search([&] { return work.load(); });  // the last searcher, and work is left: wake
    EXPECT_TRUE(wait_until([&] { return w.returned(); }, 1s * slowdown()));
}

TEST(Lesson05Ex3, ANotifyWhileSomeoneSearchesWakesNobody) {
    Parker p(2);
    std::atomic<bool> work{false};
    IdleWorker w(p, work);
    ASSERT_TRUE(wait_for_sleepers(p, 1));
    p.begin_search();  // this thread is a searcher now
    work = true;
    p.notify_one();
    EXPECT_EQ(p.sleepers(), 1u)
        << "notify_one woke a sleeper although a searcher will find the task";
    p.end_search([&] { return work.load(); });  // found it, and more is left: wake another
    EXPECT_EQ(p.sleepers(), 0u) << "the last searcher to find work must wake a sleeper";
    EXPECT_TRUE(wait_until([&] { return w.returned(); }, 1s * slowdown()));
}

TEST(Lesson05Ex3, ASearcherThatIsNotTheLastWakesNobody) {
    Parker p(3);
    std::atomic<bool> work{false};
    IdleWorker w(p, work);
    ASSERT_TRUE(wait_for_sleepers(p, 1));
    p.begin_search();
    p.begin_search();  // two searchers (this thread plays both)
    work = true;
    p.end_search([&] { return work.load(); });
    EXPECT_EQ(p.sleepers(), 1u) << "another searcher is still looking: nobody needs waking";
    p.end_search([&] { return work.load(); });
    EXPECT_EQ(p.sleepers(), 0u) << "the last searcher to find work must wake a sleeper";
    EXPECT_TRUE(wait_until([&] { return w.returned(); }, 1s * slowdown()));
}

TEST(Lesson05Ex3, AWokenWorkerCountsAsASearcher) {
    Parker p(2);
    std::atomic<bool> work{false};
    IdleWorker w(p, work);
    ASSERT_TRUE(wait_for_sleepers(p, 1));
    EXPECT_EQ(p.searching(), 0u);
    work = true;
    p.notify_one();
    EXPECT_EQ(p.searching(), 1u)
        << "the waker must count the woken worker as searching at once, or the next spawn "
           "wakes another";
    p.notify_one();  // a second spawn right away: the woken worker will find both
    EXPECT_EQ(p.searching(), 1u);
    EXPECT_TRUE(wait_until([&] { return w.returned(); }, 1s * slowdown()));
}

TEST(Lesson05Ex3, TheLastSearcherWakesNobodyWhenNoWorkIsLeft) {
    Parker p(2);
    std::atomic<bool> work{false};
    IdleWorker w(p, work);
    ASSERT_TRUE(wait_for_sleepers(p, 1));
    p.begin_search();
    p.end_search([] { return false; });  // found the only task: nothing left to share
    EXPECT_EQ(p.sleepers(), 1u) << "a wake-up for no work: the sleeper would only park again";
    EXPECT_EQ(p.searching(), 0u);
    work = true;
    p.notify_one();  // the next spawn finds nobody searching and wakes the sleeper itself
    EXPECT_TRUE(wait_until([&] { return w.returned(); }, 1s * slowdown()));
}

TEST(Lesson05Ex3, ACancelledParkLeavesTheWorkerSearching) {
    // park() returns as a searcher either way: its announcement moved the worker from searching
    // to sleeping, so cancelling must move it back, or the count is one searcher short (a spawn
    // then wakes a sleeper for a task this worker is about to find, and this worker's end_search
    // takes away a searcher nobody added).
    Parker p(2);
    p.begin_search();
    ASSERT_FALSE(p.park([] { return true; })) << "the recheck found work: park() must not sleep";
    EXPECT_EQ(p.sleepers(), 0u);
    EXPECT_EQ(p.searching(), 1u)
        << "a cancelled park must leave the worker counted as searching again";
    p.end_search([] { return false; });
    EXPECT_EQ(p.searching(), 0u);
    EXPECT_EQ(p.sleepers(), 0u);
    EXPECT_FALSE(p.stopping()) << "the counts went below zero into the stop bit";
}
