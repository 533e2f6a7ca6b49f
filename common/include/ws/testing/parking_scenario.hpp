// The explorer scenarios' pool for the parking protocol (lessons 05 and 06): a pool reduced to
// what the protocol reasons about, with one queue. A spawn publishes onto the queue (its push),
// then calls notify_one(); a worker about to sleep announces itself (park()), then its recheck
// looks at the stop flag and the queue (is_empty()), as ThreadPool::has_work_anywhere() does.
// Each side is a write followed by a load of another location, and only when all four are
// seq_cst does one total order S make one of the loads see the other's write: which queue
// operations those are is the test's to say, with the queue it checks.
//
// Queue: push(std::uint64_t), steal() -> ws::Steal<std::uint64_t> and is_empty(), any thread
// (lesson 05's ChaseLevDeque, whose push only its owner calls, or lesson 06's Injector).
// Parker: the lesson's Parker. Only for programs built with WS_MODEL_CHECK, where ws::atomic is
// the explorer's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "ws/atomic.hpp"
#include "ws/steal.hpp"

namespace ws::testing {

template <typename Queue, typename Parker>
class OneQueueParkingPool {
  public:
    // `workers`: how many workers the parker counts; `queue_args`: the queue's constructor's.
    template <typename... QueueArgs>
    explicit OneQueueParkingPool(std::size_t workers, QueueArgs&&... queue_args)
        : queue_(std::forward<QueueArgs>(queue_args)...), parker_(workers) {}

    // Publish (the queue's push), then notify.
    void spawn(std::uint64_t item) {
        queue_.push(item);
        parker_.notify_one();
    }

    // A worker that has no queue of its own to look at: the pool's loop. Take a task, or begin
    // a search and look once more, or leave if the pool stops, or park.
    void idle_worker() {
        bool searching = false;
        for (;;) {
            const ws::Steal<std::uint64_t> s = queue_.steal();
            if (s.is_retry()) continue;
            if (s.is_success()) {
                if (searching) parker_.end_search([this] { return has_work(); });
                searching = false;
                // seq_cst: a count wait_then_stop() spins on.
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

    // Waits until `tasks` tasks have run on the idle worker (forever, if a wake-up was lost: the
    // explorer reports the spin as a livelock), then shuts the pool down as its destructor does:
    // stop, published like a task, then notify_all().
    void wait_then_stop(int tasks) {
        // seq_cst: pairs with idle_worker()'s count (the explorer sees the spin).
        while (ran_.load(std::memory_order_seq_cst) < tasks) {
        }
        stop_.store(true, std::memory_order_seq_cst);
        parker_.notify_all();
    }

    // Waits until the idle worker is about to park: a spawn then meets the announcement and the
    // recheck, which is the race the scenarios are about, in few executions. relaxed: a
    // synchronisation here would hide what notify_one() and the recheck may read.
    void wait_until_parking() const {
        while (!parking_.load(std::memory_order_relaxed)) {
        }
    }

    // After the idle worker has been joined.
    int ran() const { return ran_.load(std::memory_order_seq_cst); }
    Queue& queue() { return queue_; }

  private:
    // The recheck (ThreadPool::has_work_anywhere()): the stop flag, then the queue.
    bool has_work() const {
        // seq_cst: as the pool's stopping_.
        return stop_.load(std::memory_order_seq_cst) || !queue_.is_empty();
    }

    Queue queue_;
    Parker parker_;
    ws::atomic<int> ran_{0};
    ws::atomic<bool> stop_{false};
    ws::atomic<bool> parking_{false};
};

}  // namespace ws::testing
