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
