// Lesson 04, exercise 3, under the interleaving explorer: the memory orderings. Each scenario
// is a race that an order too weak loses under the C++ memory model, whether or not this
// machine (x86 keeps most orders anyway) or ThreadSanitizer would ever show it.
#include <gtest/gtest.h>

#include <ws/model/explore.hpp>

#include "../exercises.hpp"
#include "deque_scenarios.hpp"

using lesson04_model::Deque;
using lesson04_model::Taken;

// Two items; the owner pops once while a thief steals twice. pop's store of bottom and load of
// top, and steal's loads of top and bottom, must all be seq_cst: otherwise the owner can read
// an old top and take item 2 without a CAS while the thief, not seeing the owner's
// reservation of it, steals item 2 as well.
TEST(Lesson04Ex3, ExplorerOwnerPopsWhileAThiefStealsTwice) {
    lesson04_model::expect_no_failure(ws::model::explore(lesson04_model::options(), [] {
        Deque deque(4);
        Taken taken;
        deque.push(1);
        deque.push(2);
        {
            ws::model::Thread thief([&] { taken.steal(deque, 2); });
            taken.pop(deque, 1);
        }
        taken.drain_and_check(deque, 2);
    }));
}

// Two items, two thieves stealing once each, the owner popping once: one thief's CAS moves top
// to 1; the other thief must not combine that newer top with an older bottom.
TEST(Lesson04Ex3, ExplorerOwnerPopsWhileTwoThievesSteal) {
    lesson04_model::expect_no_failure(ws::model::explore(lesson04_model::options(), [] {
        Deque deque(4);
        Taken taken;
        deque.push(1);
        deque.push(2);
        {
            ws::model::Thread a([&] { taken.steal(deque, 1); });
            ws::model::Thread b([&] { taken.steal(deque, 1); });
            taken.pop(deque, 1);
        }
        taken.drain_and_check(deque, 2);
    }));
}

// A full ring of two: a thief steals item 1 while the owner pushes item 3, which reuses item
// 1's slot as soon as the owner sees the thief's CAS. The thief must have read its item before
// that CAS, and push's load of top must acquire it, so that the read happens before the reuse.
TEST(Lesson04Ex3, ExplorerOwnerReusesTheSlotAThiefJustTookFrom) {
    lesson04_model::expect_no_failure(ws::model::explore(lesson04_model::options(), [] {
        Deque deque(2);
        Taken taken;
        deque.push(1);
        deque.push(2);
        {
            ws::model::Thread thief([&] { taken.steal(deque, 1); });
            deque.push(3);
            taken.pop(deque, 1);
        }
        taken.drain_and_check(deque, 3);
    }));
}

// The last item, with a thief that started before the item was pushed (so nothing but the deque
// tells it about the item). pop's restore of bottom after its CAS must be a release: a thief
// may read that restored value (C++ allows it even though the thief's own CAS is what made the
// owner's CAS fail: load buffering), and with a relaxed restore nothing makes the item visible
// to it, so it could win the CAS with a stale slot.
TEST(Lesson04Ex3, ExplorerAThiefStartedBeforeThePushRacesForTheLastItem) {
    lesson04_model::expect_no_failure(ws::model::explore(lesson04_model::options(), [] {
        Deque deque(2);
        Taken taken;
        {
            ws::model::Thread thief([&] { taken.steal(deque, 1); });
            deque.push(1);
            taken.pop(deque, 1);
        }
        taken.drain_and_check(deque, 1);
    }));
}
