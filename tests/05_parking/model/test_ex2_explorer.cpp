// Lesson 05, exercise 2, under the interleaving explorer: announce, recheck, sleep against
// publish, notify. Whatever the schedule and whatever values the C++ memory model lets each load
// read, the spawner sees the sleeper or the sleeper's recheck sees the task. Each side is a
// store followed by a load of another location; only seq_cst on all four puts them in one order.
// An announcement or a notify_one() load that is acq_rel, acquire, release or relaxed lets both
// loads read the old values: the worker sleeps next to the task, the spawner waits forever.
#include <gtest/gtest.h>

#include "../exercises.hpp"
#include "parker_scenarios.hpp"

using lesson05_model::Pool;

// One worker, idle from the start (it searches, finds nothing and parks), and one spawn.
TEST(Lesson05Ex2, ExplorerASpawnAndAParkingWorkerNeverMissEachOther) {
    lesson05_model::expect_no_failure(ws::model::explore(lesson05_model::options(), [] {
        Pool pool(1);
        {
            ws::model::Thread worker([&] { pool.worker(); });
            pool.spawn();
            pool.wait_then_stop(1);
        }
        lesson05_model::check_every_task_ran(pool, 1);
    }));
}
