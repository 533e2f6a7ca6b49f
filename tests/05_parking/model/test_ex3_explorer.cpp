// Lesson 05, exercise 3, under the interleaving explorer: the last searcher wakes one. A spawn
// that sees a searcher wakes nobody and relies on that searcher; if the searcher has just found
// another task, its end_search() must see the spawned one and hand the search to a sleeper.
// That needs end_search()'s RMW in the same total order as the spawner's load: as acq_rel or
// weaker, the spawner may still see the worker searching while the worker's recheck misses the
// task, and the task waits behind the searcher's own task while a worker sleeps.
//
// Two workers and three threads make many more schedules than exercise 2's scenario: these
// cover the schedules with at most one preemption and two stale reads, and no read of a later
// store (the store buffering of a lost wake-up does not need one).
#include <gtest/gtest.h>

#include "../exercises.hpp"
#include "parker_scenarios.hpp"

using lesson05_model::Pool;

namespace {

ws::model::Options options() {
    ws::model::Options o = lesson05_model::options();
    o.preemption_bound = 1;
    o.future_read_bound = 0;
    return o;
}

}  // namespace

// Both workers asleep; a spawn wakes one, whose task does not finish until a second task has
// started; the second spawn comes while it runs, and must reach the other worker.
TEST(Lesson05Ex3, ExplorerASpawnWhileTheOnlySearcherTakesAnotherTaskWakesASleeper) {
    lesson05_model::expect_no_failure(ws::model::explore(options(), [] {
        Pool pool(2);
        {
            ws::model::Thread a([&] { pool.worker(/*first_waits=*/true); });
            ws::model::Thread b([&] { pool.worker(/*first_waits=*/true); });
            pool.wait_for_sleepers(2);
            pool.spawn();
            pool.wait_for_started(1);
            pool.spawn();
            pool.wait_then_stop(2);
        }
        lesson05_model::check_every_task_ran(pool, 2);
    }));
}

// The same two spawns into two workers that may be anywhere between working, searching and
// sleeping: the second task must still find a worker of its own.
TEST(Lesson05Ex3, ExplorerTwoSpawnsIntoTwoWorkersEachFindAWorker) {
    lesson05_model::expect_no_failure(ws::model::explore(options(), [] {
        Pool pool(2);
        {
            ws::model::Thread a([&] { pool.worker(/*first_waits=*/true); });
            ws::model::Thread b([&] { pool.worker(/*first_waits=*/true); });
            pool.spawn();
            pool.spawn();
            pool.wait_then_stop(2);
        }
        lesson05_model::check_every_task_ran(pool, 2);
    }));
}
