// Lesson 04, exercise 4, under the interleaving explorer: growth while a thief steals. The
// thief may still hold the old buffer; it must find its item there (and the old buffer must
// still exist: freeing it is reported as a use after free).
#include <gtest/gtest.h>

#include <ws/model/explore.hpp>

#include "../exercises.hpp"
#include "deque_scenarios.hpp"

using lesson04_model::Deque;
using lesson04_model::Taken;

TEST(Lesson04Ex4, ExplorerGrowthWhileAThiefSteals) {
    lesson04_model::expect_no_failure(ws::model::explore(lesson04_model::options(), [] {
        Deque deque(2);
        Taken taken;
        deque.push(1);
        deque.push(2);
        {
            ws::model::Thread thief([&] { taken.steal(deque, 2); });
            deque.push(3);  // full: grows to 4
            taken.pop(deque, 1);
        }
        taken.drain_and_check(deque, 3);
    }));
}
