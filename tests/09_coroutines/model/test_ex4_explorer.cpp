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
    ws::model::Options o;
    o.max_dfs_executions = 20'000;
    o.random_executions = 300 / static_cast<std::uint64_t>(ws::testing::slowdown());
    return o;
}

bool holds(WaitList::Waiter* list, const WaitList::Waiter* waiter) {
    for (; list != nullptr; list = list->next)
        if (list == waiter) return true;
    return false;
}

}  // namespace

TEST(Lesson09Ex4, ExplorerASetDuringTheWaitersCheckIsNeverLost) {
    const auto report = ws::model::explore(options(), [] {
        WaitList list;
        WaitList::Waiter waiter;
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
        WaitList::Waiter a, b;
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
