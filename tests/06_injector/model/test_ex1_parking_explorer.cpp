// Lesson 06, exercise 1, under the interleaving explorer: the injector's push is the publication
// the parking protocol reasons about (lesson 05). A spawn from outside pushes, then notify_one()
// loads the parker's state; a worker about to sleep announces itself, then its recheck loads the
// injector's tail (is_empty()). Each side is a write followed by a load of another location, and
// only when all four are seq_cst does one total order S make one of the loads see the other's
// write. push()'s claim of a position is that write: a CAS that is acq_rel (or weaker) is not in
// S, and then the spawner can see nobody asleep while the sleeper's recheck sees the tail before
// the claim: the worker sleeps next to the task. x86 (whose CAS is a full barrier) and
// ThreadSanitizer never show it; the explorer does, as a livelock: the owner waits forever for
// the task to run.
#include <gtest/gtest.h>

#include <cstdint>

#include <ws/atomic.hpp>
#include <ws/model/explore.hpp>
#include <ws/testing/harness.hpp>

#include "../exercises.hpp"
#include "injector_scenarios.hpp"
#include "parker.hpp"

namespace {

// A pool reduced to what the parking protocol reasons about, with the injector as its only queue
// (lesson 06's ThreadPool: spawn from outside is push + notify_one; the recheck of a worker about
// to sleep is injector_.is_empty() and the stop flag). Its worker loop is the pool's: take a task,
// or begin a search and look once more, or leave if the pool stops, or park.
class InjectorParkingPool {
  public:
    // From outside the pool: publish (the injector's seq_cst claim), then notify.
    void spawn(std::uint64_t item) {
        queue_.push(item);
        parker_.notify_one();
    }

    void worker() {
        bool searching = false;
        for (;;) {
            const ws::Steal<std::uint64_t> s = queue_.steal();
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
            // relaxed: only a moment for the spawner to go on from (wait_until_parking()).
            parking_.store(true, std::memory_order_relaxed);
            parker_.park([this] { return has_work(); });
        }
    }

    // Waits until `tasks` tasks have run (forever, if a wake-up was lost), then shuts the pool
    // down as its destructor does: stop, published like a task, then notify_all().
    void wait_then_stop(int tasks) {
        // seq_cst: a spin-wait on the count the worker raises (the explorer sees the spin).
        while (ran_.load(std::memory_order_seq_cst) < tasks) {
        }
        stop_.store(true, std::memory_order_seq_cst);
        parker_.notify_all();
    }

    // Waits until the worker is about to park: the spawn then meets the announcement and the
    // recheck, which is the race this scenario is about, in few executions. relaxed: a
    // synchronisation here would hide what notify_one() may read.
    void wait_until_parking() const {
        while (!parking_.load(std::memory_order_relaxed)) {
        }
    }

    // After the worker has been joined.
    int ran() const { return ran_.load(std::memory_order_seq_cst); }

  private:
    // The recheck (ThreadPool::has_work_anywhere()): the stop flag, then the injector.
    bool has_work() const {
        // seq_cst: as the pool's stopping_.
        return stop_.load(std::memory_order_seq_cst) || !queue_.is_empty();
    }

    lesson06_model::Queue queue_;
    ws::lesson06::Parker parker_{1};
    ws::atomic<int> ran_{0};
    ws::atomic<bool> stop_{false};
    ws::atomic<bool> parking_{false};
};

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
        InjectorParkingPool pool;
        {
            ws::model::Thread worker([&] { pool.worker(); });
            pool.wait_until_parking();
            pool.spawn(1);
            pool.wait_then_stop(1);
        }
        ws::model::check(pool.ran() == 1, "the task did not run exactly once");
    }));
}
