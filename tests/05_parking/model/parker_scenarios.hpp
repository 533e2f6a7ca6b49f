// Lesson 05's explorer scenarios: the Parker between a spawner and the pool's worker loop, run by
// ws::model::explore() under every schedule within its bounds and under the C++ memory model,
// with the parker's two atomic words instrumented (<ws/model/explore.hpp>). x86 and
// ThreadSanitizer hide a too-weak order here: the lost wake-up needs a load to read an older
// value than the store just before it in another thread (store buffering), which x86's locked
// read-modify-writes forbid and which ThreadSanitizer does not produce. The explorer does.
//
// A lost wake-up in these scenarios is a thread that waits forever: the sleeper for its token,
// the spawner for its task to run. The explorer reports it as a livelock ("every thread waits
// for another"), with the trace of the execution that got there. The parker's futex calls on
// tokens_ reach the explorer build's overloads in <ws/futex.hpp>, where a wait returns at once
// (the explorer cannot see a thread blocked in the kernel): take_token() then rereads tokens_,
// and a thread that rereads a value it has already read is taken to be waiting until another
// thread writes. What the futex itself orders is not checked: it orders nothing, the word's
// atomics do.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include <ws/atomic.hpp>
#include <ws/model/explore.hpp>
#include <ws/testing/harness.hpp>

#include "parker.hpp"

namespace lesson05_model {

// A pool reduced to what the parker's protocol reasons about. The queues are one count of
// queued tasks, published with a seq_cst RMW and read with seq_cst loads, as the pool's
// shared_size_ is (and a deque's bottom: push's seq_cst store, is_empty()'s seq_cst loads).
// The worker loop is the pool's: take a task, or begin a search and look once more, or leave
// if the pool stops, or park; a worker that finds a task while searching ends its search.
class Pool {
  public:
    explicit Pool(std::size_t workers) : parker_(workers) {}

    // From outside the pool: publish, then notify (ThreadPool::spawn).
    void spawn() {
        // seq_cst: the publication the parking protocol reasons about (P in the proof).
        queued_.fetch_add(1, std::memory_order_seq_cst);
        parker_.notify_one();
    }

    // One worker's loop, until the pool stops. With `first_waits`, the first task to run in
    // the pool does not finish until a second one has started: it stands for a long task, and
    // a task spawned while it runs must not wait behind it while another worker sleeps.
    void worker(bool first_waits = false) {
        bool searching = false;
        for (;;) {
            if (try_take()) {
                if (searching) parker_.end_search([this] { return has_task(); });
                searching = false;
                // seq_cst: a count the scenario's checks and waits read.
                const int started = started_.fetch_add(1, std::memory_order_seq_cst) + 1;
                if (first_waits && started == 1) {
                    // seq_cst: a spin-wait on the count above (the explorer sees the spin).
                    while (started_.load(std::memory_order_seq_cst) < 2) {
                    }
                }
                continue;
            }
            if (!searching) {
                parker_.begin_search();
                searching = true;
                continue;  // look everywhere once more, as a searcher
            }
            // seq_cst: as the pool's stopping_, published like a task.
            if (stop_.load(std::memory_order_seq_cst)) return;
            parker_.park([this] { return stopping() || has_task(); });
        }
    }

    // The owner's side: waits until `tasks` tasks have started (forever, if a wake-up was
    // lost), then shuts the pool down as its destructor does: stop, published like a task, then
    // the parker's notify_all().
    void wait_then_stop(int tasks) {
        // seq_cst: a spin-wait on the count the workers raise.
        while (started_.load(std::memory_order_seq_cst) < tasks) {
        }
        stop_.store(true, std::memory_order_seq_cst);
        parker_.notify_all();
    }

    // Waits until `n` workers sleep: a spin the explorer sees, which lets the workers run.
    void wait_for_sleepers(std::uint32_t n) const {
        while (parker_.sleepers() < n) {
        }
    }
    // Waits until `tasks` tasks have started.
    void wait_for_started(int tasks) const {
        // relaxed: only a moment to go on from. A spawner knows nothing of the tasks that run,
        // and a synchronisation here would hide what it may read next.
        while (started_.load(std::memory_order_relaxed) < tasks) {
        }
    }

    // After the workers have been joined.
    int started() const { return started_.load(std::memory_order_seq_cst); }
    int queued() const { return queued_.load(std::memory_order_seq_cst); }

  private:
    // seq_cst loads, like every recheck of the pool (has_work_anywhere()).
    bool has_task() const { return queued_.load(std::memory_order_seq_cst) > 0; }
    bool stopping() const { return stop_.load(std::memory_order_seq_cst); }

    bool try_take() {
        // seq_cst: the search, which like the recheck must see publications.
        int q = queued_.load(std::memory_order_seq_cst);
        while (q > 0) {
            if (queued_.compare_exchange_weak(q, q - 1, std::memory_order_seq_cst)) return true;
        }
        return false;
    }

    ws::lesson05::Parker parker_;
    ws::atomic<int> queued_{0};
    ws::atomic<int> started_{0};
    ws::atomic<bool> stop_{false};
};

// After a scenario's threads have been joined: every task ran once. (The counts of sleepers and
// searchers are exercise 3's and 4's unit tests' business; these scenarios also run against a
// parker whose later exercises are still the starter's stand-ins.)
inline void check_every_task_ran(const Pool& pool, int tasks) {
    ws::model::check(pool.started() == tasks && pool.queued() == 0,
                     "a task was not run, or run twice");
}

// The bounds of <ws/model/explore.hpp> (2 preemptions, 2 stale reads, 1 read of a later
// store). The depth-first part covers each scenario within its bounds (the reference solution
// needs about 2,000 executions for one worker, 1,000 and 3,500 for two with the narrower
// bounds of exercise 3's scenarios). Under a sanitizer, which only checks the explorer's own
// threads here, far fewer: an execution there costs up to 10 ms (each starts its threads
// anew), and the whole depth-first part took 30 s under AddressSanitizer. A lost wake-up is
// reported after 500 operations without a store, not the default 2,000, so that its trace
// stays short.
inline ws::model::Options options() {
    ws::testing::set_explorer_deadline();  // every test calls this first
    ws::model::Options o;
    const auto slowdown = static_cast<std::uint64_t>(ws::testing::slowdown());
    o.max_dfs_executions = slowdown == 1 ? 20'000 : 1'000 / slowdown;
    o.random_executions = 300 / (slowdown * slowdown);
    o.livelock_steps = 500;
    return o;
}

// On a failure the report shows the failing execution step by step, and how to replay it.
inline void expect_no_failure(const ws::model::Report& report) {
    EXPECT_FALSE(report.failed) << report;
}

}  // namespace lesson05_model
