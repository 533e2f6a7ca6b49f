// Lesson 05, exercise 2, under the interleaving explorer, with the real deque instead of the
// seq_cst count that parker_scenarios.hpp stands in for the queues. A worker's spawn pushes onto
// its own ChaseLevDeque, then notify_one() loads the parker's state; a worker about to sleep
// announces itself, then its recheck loads that deque's bottom (is_empty()). Each side is a
// write followed by a load of another location, and only when all four are seq_cst does one
// total order S make one of the loads see the other's write. The deque's side of it is given
// code (carried from lesson 04 with lesson 05's change): push()'s seq_cst store of bottom and
// is_empty()'s seq_cst load of it. As release, or as acquire, both loads may read the old
// values: the worker sleeps next to the task. The explorer shows it as a livelock: the spawning
// worker waits forever for its task to run elsewhere.
#include <gtest/gtest.h>

#include <cstdint>

#include <ws/model/explore.hpp>
#include <ws/testing/parking_scenario.hpp>

#include "../exercises.hpp"
#include "chase_lev_deque.hpp"
#include "parker.hpp"
#include "parker_scenarios.hpp"

namespace {

// Lesson 05's ThreadPool reduced to one worker's deque and the parker: a spawn from the owner's
// running task is push onto its own deque + notify_one (push's seq_cst store of bottom is the
// publication); the recheck of the other worker, about to sleep, is the stop flag and the
// deque's is_empty() (its seq_cst load of bottom), as has_work_anywhere() is. That worker's own
// deque is empty, so it steals from the owner's. The parker counts both workers.
using DequeParkingPool =
    ws::testing::OneQueueParkingPool<ws::lesson05::ChaseLevDeque<std::uint64_t>,
                                     ws::lesson05::Parker>;

// One preemption, as exercise 3's scenarios: the lost wake-up needs none (the thief runs up to
// its sleep, then the owner runs; notify_one() reads the parker's state from before the
// announcement, and the recheck the bottom from before the push), and each execution starts
// real threads, so a small space keeps the test fast on a loaded machine.
ws::model::Options deque_parking_options() {
    ws::model::Options o = lesson05_model::options();
    o.preemption_bound = 1;
    return o;
}

}  // namespace

// Two workers: the owner runs a task that spawns one child onto its own deque once the other
// worker, idle from the start, is about to park, and then waits for the child to run elsewhere
// (it stands for a long task, which must not keep its child waiting while another worker
// sleeps). Whatever the schedule and whatever the memory model lets each load read, the owner's
// notify_one() sees the sleeper or the sleeper's recheck sees the child. With push()'s store of
// bottom release (break-it patch 21) or is_empty()'s load of it acquire (22) execution 197
// fails, in every run; no other test of the lesson notices either.
TEST(Lesson05Ex2, ExplorerASpawnOntoAWorkersDequeAndAParkingWorkerNeverMissEachOther) {
    lesson05_model::expect_no_failure(ws::model::explore(deque_parking_options(), [] {
        DequeParkingPool pool(2, 4);  // two workers; a deque of capacity 4
        {
            ws::model::Thread thief([&] { pool.idle_worker(); });
            pool.wait_until_parking();
            pool.spawn(1);
            pool.wait_then_stop(1);
        }
        ws::model::check(pool.ran() == 1 && !pool.queue().pop().has_value(),
                         "the child did not run exactly once");
    }));
}
