// Lesson 06, exercise 2, under the interleaving explorer: reclaiming a block while other
// consumers may still be reading it.
#include <gtest/gtest.h>

#include <ws/model/explore.hpp>

#include "../exercises.hpp"
#include "injector_scenarios.hpp"

using lesson06_model::Queue;
using lesson06_model::Taken;

// The first block's last two items, taken by two consumers at once: whichever finishes last
// frees the block, and the other must be done with it by then (the free must happen after its
// read: reads_done's fetch_add is acq_rel). A producer meanwhile pushes into the next block.
TEST(Lesson06Ex2, ExplorerTwoConsumersFinishABlock) {
    lesson06_model::expect_no_failure(ws::model::explore(lesson06_model::options(), [] {
        Queue q;
        Taken taken;
        lesson06_model::use_up_all_but(q, taken, 2);
        const std::uint64_t first = lesson06_model::kBlock - 1;  // the next item's number
        q.push(first);
        q.push(first + 1);
        {
            ws::model::Thread a([&] { taken.steal(q, 1); });
            ws::model::Thread b([&] { taken.steal(q, 1); });
            q.push(first + 2);
        }
        taken.drain_and_check(q, first + 2);
    }));
}
