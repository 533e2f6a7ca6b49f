// Lesson 04, exercise 2, under the interleaving explorer: the last item, which one CAS must
// give to exactly one of the racers, whatever the schedule.
#include <gtest/gtest.h>

#include <ws/model/explore.hpp>

#include "../exercises.hpp"
#include "deque_scenarios.hpp"

using lesson04_model::Deque;
using lesson04_model::Taken;

TEST(Lesson04Ex2, ExplorerOwnerAndThiefRaceForTheLastItem) {
    lesson04_model::expect_no_failure(ws::model::explore(lesson04_model::options(), [] {
        Deque deque(2);
        Taken taken;
        deque.push(1);
        {
            ws::model::Thread thief([&] { taken.steal(deque, 1); });
            taken.pop(deque, 1);
        }
        taken.drain_and_check(deque, 1);
    }));
}

TEST(Lesson04Ex2, ExplorerTwoThievesRaceForTheLastItem) {
    lesson04_model::expect_no_failure(ws::model::explore(lesson04_model::options(), [] {
        Deque deque(2);
        Taken taken;
        deque.push(1);
        {
            ws::model::Thread a([&] { taken.steal(deque, 1); });
            ws::model::Thread b([&] { taken.steal(deque, 1); });
        }
        taken.drain_and_check(deque, 1);
    }));
}

// Two items, two thieves stealing once each and nobody popping: a thief can find the deque
// empty only after both items are gone, and it took one of them itself. So a thief that loses
// its CAS to the other must say retry(), not empty(): item 2 is still there. A caller trusts
// empty() to move on to another victim (and, from lesson 05 on, to go to sleep).
TEST(Lesson04Ex2, ExplorerAThiefThatLosesTheRaceSaysRetryNotEmpty) {
    lesson04_model::expect_no_failure(ws::model::explore(lesson04_model::options(), [] {
        Deque deque(4);
        Taken taken;
        deque.push(1);
        deque.push(2);
        auto steal_once = [&] {
            ws::Steal<std::uint64_t> s = deque.steal();
            ws::model::check(!s.is_empty(),
                             "a thief found the deque empty while item 2 was still in it: a "
                             "thief that loses its CAS must return retry()");
            if (s.is_success()) taken.take(s.value());
        };
        {
            ws::model::Thread a(steal_once);
            ws::model::Thread b(steal_once);
        }
        taken.drain_and_check(deque, 2);
    }));
}
