// Lesson 06, exercise 1, under the interleaving explorer: producers and consumers racing for
// positions, within one block and across a block boundary.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <ws/model/explore.hpp>

#include "../exercises.hpp"
#include "injector_scenarios.hpp"

using lesson06_model::Queue;
using lesson06_model::Taken;

// Two producers and two consumers: a thread that pushes, one that steals, and the main thread,
// which pushes and then steals.
TEST(Lesson06Ex1, ExplorerTwoProducersTwoConsumers) {
    lesson06_model::expect_no_failure(ws::model::explore(lesson06_model::options(), [] {
        Queue q;
        Taken taken;
        {
            ws::model::Thread producer([&] { q.push(2); });
            ws::model::Thread consumer([&] { taken.steal(q, 1); });
            q.push(1);
            taken.steal(q, 1);
        }
        taken.drain_and_check(q, 2);
    }));
}

// One slot left in the first block: two producers race for it, and the loser must wait for the
// winner to move the tail to a new block. The main thread, one of the producers, then steals:
// if it takes the block's last item it moves the head to the new block, whose link the other
// producer may not have written yet.
TEST(Lesson06Ex1, ExplorerProducersCrossABlockBoundary) {
    lesson06_model::expect_no_failure(ws::model::explore(lesson06_model::options(), [] {
        Queue q;
        Taken taken;
        lesson06_model::use_up_all_but(q, taken, 1);
        const std::uint64_t first = lesson06_model::kBlock;  // the next item's number
        {
            ws::model::Thread producer([&] { q.push(first + 1); });
            q.push(first);
            taken.steal(q, 1);
        }
        taken.drain_and_check(q, first + 1);
    }));
}

// The first block's last item and the next block's first, both pushed: two consumers take
// them at once. Whoever claims the block's last slot moves the head to the next block; the
// other must not see the head's new position with the old block (head_.block is published
// before head_.index), or it claims slot 0 of the used-up block: an item taken twice, and a read
// of a block that may be freed. The stress tests pass that slip almost always: the window is
// two adjacent stores.
TEST(Lesson06Ex1, ExplorerTwoConsumersCrossABlockBoundary) {
    lesson06_model::expect_no_failure(ws::model::explore(lesson06_model::options(), [] {
        Queue q;
        Taken taken;
        lesson06_model::use_up_all_but(q, taken, 1);
        const std::uint64_t first = lesson06_model::kBlock;  // the next item's number
        q.push(first);
        q.push(first + 1);
        {
            ws::model::Thread consumer([&] { taken.steal(q, 2); });
            taken.steal(q, 2);
        }
        taken.drain_and_check(q, first + 1);
    }));
}

// A consumer that claims a position its producer has claimed but not yet written: it must wait
// for the slot's `written` flag, and that flag must carry the item to it (release/acquire). The
// items are Tracked: the explorer sees a read of a slot before its item was constructed, or
// without happening after the construction.
TEST(Lesson06Ex1, ExplorerAConsumerReadsOnlyAWrittenSlot) {
    lesson06_model::expect_no_failure(ws::model::explore(lesson06_model::options(), [] {
        lesson06_model::TrackedQueue q;
        std::uint64_t got = 0;
        {
            ws::model::Thread producer([&] { q.push(lesson06_model::Tracked(7)); });
            // Steals until it has the item (the producer runs on meanwhile, so it comes).
            for (int i = 0; i < 3 && got == 0; ++i) {
                auto s = q.steal();
                if (s.is_success()) got = s.value().get();
            }
        }
        if (got == 0) {
            auto s = q.steal();
            ws::model::check(s.is_success(), "the item pushed is not in the queue");
            if (s.is_success()) got = s.value().get();
        }
        ws::model::check(got == 7, "took " + std::to_string(got) + ", not the item pushed (7)");
        ws::model::check(q.steal().is_empty(), "an item was taken twice, or a phantom appeared");
    }));
}
