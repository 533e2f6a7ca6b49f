// Lesson 09, exercise 4, under the interleaving explorer: the Event's state word. A waiter
// checks, then tries to add itself, while a setter sets: whatever the schedule, either the
// waiter sees "set" and does not suspend, or the setter gets the waiter back to wake. A check
// and an enqueue that are two steps lose the waiter when set() falls between them.
#include <gtest/gtest.h>

#include <cstdint>

#include <ws/model/explore.hpp>
#include <ws/testing/harness.hpp>

#include "../exercises.hpp"
#include "wait_list.hpp"

using ws::lesson09::WaitList;

namespace {

ws::model::Options options() {
    ws::testing::set_explorer_deadline();  // every test calls this first
    ws::model::Options o;
    o.max_dfs_executions = 20'000;
    o.random_executions = 300 / static_cast<std::uint64_t>(ws::testing::slowdown());
    return o;
}

// The waiters live in static storage: the state word holds their addresses, and the explorer
// needs the same values in every execution of a scenario (a waiter on the scenario's stack may
// get another address each time, and the explorer then reports the scenario nondeterministic).
WaitList::Waiter g_waiter_a, g_waiter_b;

bool holds(WaitList::Waiter* list, const WaitList::Waiter* waiter) {
    for (; list != nullptr; list = list->next)
        if (list == waiter) return true;
    return false;
}

}  // namespace

TEST(Lesson09Ex4, ExplorerASetDuringTheWaitersCheckIsNeverLost) {
    const auto report = ws::model::explore(options(), [] {
        WaitList list;
        WaitList::Waiter& waiter = g_waiter_a;
        bool suspended = false;
        WaitList::Waiter* woken = nullptr;
        {
            ws::model::Thread setter([&] { woken = list.set(); });
            if (!list.is_set()) suspended = list.try_add(&waiter);
        }
        ws::model::check(!suspended || holds(woken, &waiter),
                         "the waiter suspended but set() did not hand it back: a lost wake-up");
        ws::model::check(suspended || !holds(woken, &waiter),
                         "the waiter did not suspend, yet set() hands it back to be woken");
    });
    EXPECT_FALSE(report.failed) << report;
}

TEST(Lesson09Ex4, ExplorerTwoWaitersAndASetterEachWaiterOnce) {
    const auto report = ws::model::explore(options(), [] {
        WaitList list;
        WaitList::Waiter& a = g_waiter_a;
        WaitList::Waiter& b = g_waiter_b;
        bool a_suspended = false, b_suspended = false;
        WaitList::Waiter* woken = nullptr;
        {
            ws::model::Thread waiter_b([&] { b_suspended = list.try_add(&b); });
            ws::model::Thread setter([&] { woken = list.set(); });
            a_suspended = list.try_add(&a);
        }
        ws::model::check(a_suspended == holds(woken, &a), "waiter a lost or woken in vain");
        ws::model::check(b_suspended == holds(woken, &b), "waiter b lost or woken in vain");
        ws::model::check(list.set() == nullptr, "a second set() hands waiters out again");
    });
    EXPECT_FALSE(report.failed) << report;
}

// The orders: what the setter wrote before set() reaches a waiter that sees "set" (is_set, or
// try_add refusing), and what the waiter wrote before try_add reaches the setter that takes it
// back. Relaxed accesses on either side make these checks fail; the two tests above pass.
TEST(Lesson09Ex4, ExplorerSetAndTryAddPublishWhatCameBefore) {
    const auto report = ws::model::explore(options(), [] {
        WaitList list;
        ws::atomic<int> before_set{0}, before_add{0};
        WaitList::Waiter* woken = nullptr;
        bool setter_saw_it = true;
        {
            ws::model::Thread setter([&] {
                before_set.store(1, std::memory_order_relaxed);
                woken = list.set();
                if (woken != nullptr)
                    setter_saw_it = before_add.load(std::memory_order_relaxed) == 1;
            });
            before_add.store(1, std::memory_order_relaxed);
            const bool set_seen = list.is_set() || !list.try_add(&g_waiter_a);
            if (set_seen)
                ws::model::check(before_set.load(std::memory_order_relaxed) == 1,
                                 "the waiter saw set() but not what the setter wrote before it");
        }
        ws::model::check(setter_saw_it,
                         "set() took the waiter back but not what the waiter wrote before try_add");
    });
    EXPECT_FALSE(report.failed) << report;
}
