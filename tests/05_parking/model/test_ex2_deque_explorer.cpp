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

#include <ws/atomic.hpp>
#include <ws/model/explore.hpp>
#include <ws/steal.hpp>

#include "../exercises.hpp"
#include "chase_lev_deque.hpp"
#include "parker.hpp"
#include "parker_scenarios.hpp"

namespace {

// A pool reduced to what the parking protocol reasons about, with one worker's deque as its
// only queue (lesson 05's ThreadPool: a spawn from a worker's task is push onto its own deque +
// notify_one; the recheck of a worker about to sleep is has_work_anywhere(): the stop flag and
// every deque's is_empty()). The parking worker's loop is the pool's: steal a task, or begin a
// search and look once more, or leave if the pool stops, or park.
class DequeParkingPool {
  public:
    // The owner of the deque, from its running task: publish (push's seq_cst store of bottom),
    // then notify.
    void spawn(std::uint64_t item) {
        deque_.push(item);
        parker_.notify_one();
    }

    // The other worker: its own deque is empty, so it steals from the owner's.
    void thief() {
        bool searching = false;
        for (;;) {
            const ws::Steal<std::uint64_t> s = deque_.steal();
            if (s.is_retry()) continue;
            if (s.is_success()) {
                if (searching) parker_.end_search([this] { return has_work(); });
                searching = false;
                // seq_cst: a count the owner waits on.
                ran_.fetch_add(1, std::memory_order_seq_cst);
                continue;
            }
            if (!searching) {
                parker_.begin_search();
                searching = true;
                continue;  // look once more, as a searcher
            }
            // seq_cst: as the pool's stopping_, published like a task.
            if (stop_.load(std::memory_order_seq_cst)) return;
            // relaxed: only a moment for the owner to go on from (wait_until_parking()).
            parking_.store(true, std::memory_order_relaxed);
            parker_.park([this] { return has_work(); });
        }
    }

    // The owner's task waits until `tasks` tasks have run elsewhere (forever, if a wake-up was
    // lost: it stands for a long task, which must not keep its child waiting while another
    // worker sleeps), then the pool shuts down as its destructor does: stop, published like a
    // task, then notify_all().
    void wait_then_stop(int tasks) {
        // seq_cst: a spin-wait on the count the thief raises (the explorer sees the spin).
        while (ran_.load(std::memory_order_seq_cst) < tasks) {
        }
        stop_.store(true, std::memory_order_seq_cst);
        parker_.notify_all();
    }

    // Waits until the thief is about to park: the spawn then meets the announcement and the
    // recheck, which is the race this scenario is about, in few executions. relaxed: a
    // synchronisation here would hide what notify_one() and the recheck may read.
    void wait_until_parking() const {
        while (!parking_.load(std::memory_order_relaxed)) {
        }
    }

    // After the thief has been joined, on the owner's thread.
    int ran() const { return ran_.load(std::memory_order_seq_cst); }
    bool deque_empty() { return !deque_.pop().has_value(); }

  private:
    // The recheck (ThreadPool::has_work_anywhere()): the stop flag, then the deque.
    bool has_work() const {
        // seq_cst: as the pool's stopping_.
        return stop_.load(std::memory_order_seq_cst) || !deque_.is_empty();
    }

    ws::lesson05::ChaseLevDeque<std::uint64_t> deque_{4};
    ws::lesson05::Parker parker_{2};
    ws::atomic<int> ran_{0};
    ws::atomic<bool> stop_{false};
    ws::atomic<bool> parking_{false};
};

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
// worker, idle from the start, is about to park. Whatever the schedule and whatever the memory
// model lets each load read, the owner's notify_one() sees the sleeper or the sleeper's recheck
// sees the child. With push()'s store of bottom release (break-it patch 21) or is_empty()'s load
// of it acquire (22) execution 197 fails, in every run; no other test of the lesson notices either.
TEST(Lesson05Ex2, ExplorerASpawnOntoAWorkersDequeAndAParkingWorkerNeverMissEachOther) {
    lesson05_model::expect_no_failure(ws::model::explore(deque_parking_options(), [] {
        DequeParkingPool pool;
        {
            ws::model::Thread thief([&] { pool.thief(); });
            pool.wait_until_parking();
            pool.spawn(1);
            pool.wait_then_stop(1);
        }
        ws::model::check(pool.ran() == 1 && pool.deque_empty(),
                         "the child did not run exactly once");
    }));
}
