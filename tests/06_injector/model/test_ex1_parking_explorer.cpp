// Lesson 06, exercise 1, under the interleaving explorer: the injector's push is the publication
// the parking protocol reasons about (lesson 05). A spawn from outside pushes, then notify_one()
// loads the parker's state; a worker about to sleep announces itself, then its recheck loads the
// injector's tail (is_empty()). Each side is a write followed by a load of another location, and
// only when all four are seq_cst does one total order S make one of the loads see the other's
// write. push()'s claim of a position is that write: a CAS that is acq_rel (or weaker) is not in
// S, and then the spawner can see nobody asleep while the sleeper's recheck sees the tail before
// the claim: the worker sleeps next to the task. x86 (whose CAS is a full barrier) and
// ThreadSanitizer never show it; the explorer does, as a livelock: the spawner waits forever for
// the task to run.
#include <gtest/gtest.h>

#include <cstdint>

#include <ws/model/explore.hpp>
#include <ws/testing/harness.hpp>
#include <ws/testing/parking_scenario.hpp>

#include "../exercises.hpp"
#include "injector_scenarios.hpp"
#include "parker.hpp"

namespace {

// Lesson 06's ThreadPool reduced to the injector and the parker: a spawn from outside is push +
// notify_one (push's seq_cst claim of its position is the publication); the recheck of a worker
// about to sleep is the stop flag and injector_.is_empty() (its seq_cst load of the tail). One
// worker.
using InjectorParkingPool =
    ws::testing::OneQueueParkingPool<lesson06_model::Queue, ws::lesson06::Parker>;

// One preemption, as lesson 05's exercise 3 scenarios: the lost wake-up needs none (the worker
// runs up to its sleep, then the spawner runs; one stale load of the parker's state), and each
// execution starts real threads, so a small space keeps the test fast on a loaded machine. A
// lost wake-up is reported after 500 operations without a store, as in lesson 05, so that its
// trace stays short.
ws::model::Options injector_parking_options() {
    ws::model::Options o = lesson06_model::options();
    o.preemption_bound = 1;
    o.livelock_steps = 500;
    return o;
}

}  // namespace

// One worker, idle from the start (it searches, finds nothing and parks), and one spawn from
// outside once the worker is about to park. Whatever the schedule and whatever the memory model
// lets each load read, the spawner sees the sleeper or the sleeper's recheck sees the task. With
// push()'s claim acq_rel (break-it patch 24) execution 213 fails, in every run.
TEST(Lesson06Ex1, ExplorerAPushAndAParkingWorkerNeverMissEachOther) {
    lesson06_model::expect_no_failure(ws::model::explore(injector_parking_options(), [] {
        InjectorParkingPool pool(1);  // one worker
        {
            ws::model::Thread worker([&] { pool.idle_worker(); });
            pool.wait_until_parking();
            pool.spawn(1);
            pool.wait_then_stop(1);
        }
        ws::model::check(pool.ran() == 1, "the task did not run exactly once");
    }));
}
