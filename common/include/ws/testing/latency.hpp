// How soon something happens, timed so that a loaded machine does not fail correct code.
//
// A few tests bound how soon something happens on the wall clock: a task spawned into an idle
// pool starts within 50 ms, destroying an idle pool takes under 100 ms. Those bounds are about
// the code under test: how long its idle workers sleep before they look again, whether the
// destructor wakes them. But on a loaded machine a worker that wakes at once may still wait,
// runnable, until a core is free: beside 15 busy processes on 2 cores the reference solution of
// lesson 02 once took 169 ms against 50. That wait is the machine's, and Linux counts it for
// each thread (run_delay, <ws/testing/thread_state.hpp>). So a Latency holds the wall-clock
// interval and what is left of it after the run-queue delay of the threads on its critical
// path, and the tests bound what is left. A sleep the code chooses (a fixed 100 ms, a backoff
// that doubles without a cap, a worker nobody wakes) is time asleep, never run-queue delay: it
// is all still counted, on a quiet machine or a loaded one.
//
// Only waits that cannot overlap such a sleep are subtracted:
// - a task's start (time_to_start): the run-queue delay of the worker that ran it, from just
//   before the spawn until the task's first statement, which reads it (its own figure, up to
//   date since it is running);
// - a pool's destruction (time_to_destroy): the run-queue delay of the worker that ended last,
//   from just before the call until it ended, then the test thread's until the destructor
//   returned. Both are read by that worker as it ends (EndProbes: a thread_local's destructor),
//   while the test thread is asleep in join.
// A worker's starting figure is read while it is asleep where that can be had, so that no wait it
// is in the middle of, whose length is not counted yet, is taken for one inside the interval. A
// worker that stays runnable (the reference of lesson 02 yields 64 times before it sleeps, and
// beside busy processes each yield is a long wait for a core) is read as it is: then the part of
// its current wait from before the spawn is subtracted too. That could hide a sleep only of a
// worker that lost its core between its last look at the queues and that sleep; the tests that
// must catch a long sleep every time spawn while the workers are asleep.
//
// The test thread's own waits before the spawn has queued the task, or before the destructor
// has signalled the workers, are NOT subtracted: the workers may be asleep by choice meanwhile,
// and subtracting could hide that. Such a wait makes a figure ambiguous instead: an attempt with
// a figure over the bound and a wait of the test thread is repeated (measure_until_clear, at
// most 3 attempts in all); code that is really too slow is over the bound in every attempt.
//
// Without /proc (kCanSteerThreads false) or without schedstats nothing is subtracted: the plain
// wall clock.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ws/testing/harness.hpp"
#include "ws/testing/thread_state.hpp"
#include "ws/testing/wait.hpp"

namespace ws::testing {

using LatencyClock = std::chrono::steady_clock;

struct Latency {
    std::chrono::nanoseconds wall{};    // the wall-clock interval
    std::chrono::nanoseconds waited{};  // run-queue delay on its critical path: subtracted
    // The test thread's run-queue delay at moments where it could hide a chosen sleep: not
    // subtracted, but it makes a figure over the bound ambiguous (see above).
    std::chrono::nanoseconds test_thread_waited{};
    bool workers_seen_asleep = true;  // false: a worker was runnable at the starting look
    int attempts = 1;

    std::chrono::nanoseconds left() const {
        return std::max(wall - waited, std::chrono::nanoseconds{0});
    }
    bool ambiguous() const { return test_thread_waited > std::chrono::nanoseconds{0}; }
};

// "169.2 ms on the wall clock, 3.1 ms without the 166.1 ms its threads waited, runnable, for a
// core", and why a figure may be ambiguous.
inline std::string describe(const Latency& l) {
    const auto ms = [](std::chrono::nanoseconds d) {
        return std::chrono::duration<double, std::milli>(d).count();
    };
    char text[320];
    std::snprintf(text, sizeof text,
                  "%.1f ms on the wall clock, %.1f ms without the %.1f ms its threads waited, "
                  "runnable, for a core",
                  ms(l.wall), ms(l.left()), ms(l.waited));
    std::string s = text;
    if (!l.workers_seen_asleep) s += " (a worker was runnable, not asleep, as the timing began)";
    if (l.ambiguous()) {
        std::snprintf(text, sizeof text,
                      " (in each of %d attempts the test's own thread also waited for a core at a "
                      "moment that may matter, %.1f ms the last time)",
                      l.attempts, ms(l.test_thread_waited));
        s += text;
    }
    return s;
}

// Keeps the largest wall-clock figure and the largest figure left among a test's measurements as
// the test's properties max_wall_us and max_left_us (in the XML or JSON of --gtest_output), so
// that a run beside busy processes shows how much of the wall clock was waiting for a core.
class LatencyRecord {
  public:
    void add(const Latency& l) {
        using std::chrono::duration_cast;
        using std::chrono::microseconds;
        wall_ = std::max(wall_, l.wall);
        left_ = std::max(left_, l.left());
        ::testing::Test::RecordProperty(
            "max_wall_us", static_cast<int>(duration_cast<microseconds>(wall_).count()));
        ::testing::Test::RecordProperty(
            "max_left_us", static_cast<int>(duration_cast<microseconds>(left_).count()));
    }

  private:
    std::chrono::nanoseconds wall_{}, left_{};
};

namespace latency_detail {
// How much a run-queue figure grew; 0 if either is unknown (then nothing is subtracted).
inline std::chrono::nanoseconds grew(std::optional<std::chrono::nanoseconds> before,
                                     std::optional<std::chrono::nanoseconds> after) {
    if (!before || !after || *after < *before) return std::chrono::nanoseconds{0};
    return *after - *before;
}
}  // namespace latency_detail

// The run-queue figures of some threads, read at one look (all_asleep: every one of them asleep
// then), and the test thread's own figure from just before.
struct RunDelaySnapshot {
    std::vector<std::pair<ThreadId, std::optional<std::chrono::nanoseconds>>> threads;
    std::optional<std::chrono::nanoseconds> test_thread;
    bool all_asleep = false;

    std::optional<std::chrono::nanoseconds> of(ThreadId tid) const {
        for (const auto& [id, delay] : threads) {
            if (id == tid) return delay;
        }
        return std::nullopt;
    }
};

// Reads the run-queue figures of `tids`, at a look where every one of them is asleep if one comes
// within 20 ms × slowdown() (a look during which the test thread itself waited for a core is
// taken again); otherwise as they are, and all_asleep is false. Without /proc there is nothing
// to wait for.
inline RunDelaySnapshot snapshot_run_delays(const std::vector<ThreadId>& tids) {
    const auto me = current_thread_id();
    const auto deadline = LatencyClock::now() + std::chrono::milliseconds(20) * slowdown();
    RunDelaySnapshot snap;
    for (;;) {
        snap.test_thread = run_delay(me);
        const bool all_asleep = !kCanSteerThreads || std::all_of(tids.begin(), tids.end(), asleep);
        const bool give_up = LatencyClock::now() > deadline;
        if (all_asleep || give_up) {
            snap.threads.clear();
            for (ThreadId tid : tids)
                snap.threads.emplace_back(tid, run_delay(tid));
            // Asleep when looked at, so any wait of theirs began after the look; the look is
            // clean if this thread did not wait in the meantime either.
            snap.all_asleep = all_asleep && run_delay(me) == snap.test_thread;
            if (snap.all_asleep || give_up) return snap;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
}

// Where a timing starts: the moment, and the run-queue figures of the test thread and of the
// workers then.
struct TimingStart {
    LatencyClock::time_point at{};
    RunDelaySnapshot figures;
};

// Starts a timing now, at a look where every worker is asleep if one comes soon (see
// snapshot_run_delays).
inline TimingStart start_timing(const std::vector<ThreadId>& workers) {
    TimingStart start;
    start.figures = snapshot_run_delays(workers);
    start.at = LatencyClock::now();
    return start;
}

// Spawns a task into `pool` and measures how soon it starts: from `from` (just before the spawn,
// or a moment the caller chose) to the task's first statement, less the time the worker that ran
// it waited, runnable, for a core in between. nullopt if the task did not start within 10 s.
template <typename Pool>
std::optional<Latency> time_to_start(Pool& pool, const TimingStart& from) {
    struct Start {
        ThreadId tid{};
        std::optional<std::chrono::nanoseconds> run_delay;
        LatencyClock::time_point at{};
        std::atomic<bool> started{false};
    };
    auto start = std::make_shared<Start>();
    const auto me = current_thread_id();
    pool.spawn([start] {
        // The figure first, then the clock: a wait in between is in the interval but not
        // subtracted, so it can only count against the code, never for it.
        start->tid = current_thread_id();
        start->run_delay = ws::testing::run_delay(start->tid);
        start->at = LatencyClock::now();
        // Release pairs with the acquire load below: who sees `started` sees the fields.
        start->started.store(true, std::memory_order_release);
    });
    const auto test_thread_after = run_delay(me);
    if (!wait_until([&] { return start->started.load(std::memory_order_acquire); },
                    std::chrono::seconds(10) * slowdown())) {
        return std::nullopt;
    }
    Latency l;
    l.wall = start->at - from.at;
    l.waited = latency_detail::grew(from.figures.of(start->tid), start->run_delay);
    l.test_thread_waited = latency_detail::grew(from.figures.test_thread, test_thread_after);
    l.workers_seen_asleep = from.figures.all_asleep;
    return l;
}

// The same, timed from just before the spawn, once `workers` are all asleep (if they are soon).
template <typename Pool>
std::optional<Latency> time_to_start(Pool& pool, const std::vector<ThreadId>& workers) {
    return time_to_start(pool, start_timing(workers));
}

// Probes left in a pool's workers that record, as each worker ends, when it ended and the
// run-queue figures of that worker and of the test thread (the thread that made the EndProbes,
// the one that will destroy the pool). A probe is a thread_local whose destructor runs as the
// worker's thread ends, after the pool's worker function has returned.
class EndProbes {
  public:
    struct End {
        ThreadId tid{};
        std::optional<std::chrono::nanoseconds> run_delay;  // the worker's own, as it ends
        bool test_thread_asleep = false;                    // the test thread, asleep then,
        std::optional<std::chrono::nanoseconds> test_thread_run_delay;  // and its figure
        LatencyClock::time_point at{};
    };

    EndProbes() : shared_(std::make_shared<Shared>()) {
        shared_->test_thread = current_thread_id();
    }

    // Spawns `n` tasks into `pool` that each leave a probe in the worker running it and wait (up
    // to 5 s) until all `n` have started, so that each runs on a worker of its own. Returns
    // whether `n` workers now hold one; it waits for the tasks to finish.
    template <typename Pool>
    bool arm(Pool& pool, std::size_t n) {
        auto arrived = std::make_shared<std::atomic<std::size_t>>(0);
        auto finished = std::make_shared<std::atomic<std::size_t>>(0);
        for (std::size_t i = 0; i < n; ++i) {
            pool.spawn([shared = shared_, arrived, finished, n] {
                Probe& probe = this_threads_probe();
                if (!probe.shared) {
                    probe.shared = shared;
                    std::lock_guard lock(shared->mutex);
                    shared->armed.push_back(current_thread_id());
                }
                arrived->fetch_add(1);
                wait_until([&] { return arrived->load() >= n; },
                           std::chrono::seconds(5) * slowdown());
                finished->fetch_add(1);
            });
        }
        wait_until([&] { return finished->load() >= n; }, std::chrono::seconds(10) * slowdown());
        std::lock_guard lock(shared_->mutex);
        return shared_->armed.size() >= n;
    }

    // The workers that hold a probe.
    std::vector<ThreadId> threads() const {
        std::lock_guard lock(shared_->mutex);
        return shared_->armed;
    }

    // What the probes recorded, one per worker that has ended.
    std::vector<End> ends() const {
        std::lock_guard lock(shared_->mutex);
        return shared_->ends;
    }

  private:
    struct Shared {
        mutable std::mutex mutex;
        ThreadId test_thread{};
        std::vector<ThreadId> armed;
        std::vector<End> ends;
    };
    struct Probe {
        std::shared_ptr<Shared> shared;
        ~Probe() {
            if (!shared) return;
            End end;
            end.tid = current_thread_id();
            end.run_delay = ws::testing::run_delay(end.tid);
            // Its state before its figure: asleep at the look, so a wait it is in when the
            // figure is read began after the look.
            end.test_thread_asleep = asleep(shared->test_thread);
            end.test_thread_run_delay = ws::testing::run_delay(shared->test_thread);
            end.at = LatencyClock::now();
            std::lock_guard lock(shared->mutex);
            shared->ends.push_back(end);
        }
    };
    static Probe& this_threads_probe() {
        thread_local Probe probe;
        return probe;
    }

    std::shared_ptr<Shared> shared_;
};

// Destroys a pool with destroy() once the workers holding `probes` are all asleep, and measures
// how long that took: from just before the call to its return, less the time the worker that
// ended last waited, runnable, for a core until it ended, and the time this thread waited for
// one from then on (if it was asleep, in join, when that worker ended; otherwise nothing of its
// own is subtracted). Call it on the thread that made `probes`.
template <typename Destroy>
Latency time_to_destroy(const EndProbes& probes, Destroy destroy) {
    using latency_detail::grew;
    const auto me = current_thread_id();
    const RunDelaySnapshot before = snapshot_run_delays(probes.threads());
    const auto t0 = LatencyClock::now();
    destroy();
    // The figure first, then the clock (as in time_to_start).
    const auto test_thread_after = run_delay(me);
    const auto t1 = LatencyClock::now();
    Latency l;
    l.wall = t1 - t0;
    l.workers_seen_asleep = before.all_asleep;
    const auto ends = probes.ends();
    if (ends.empty()) {
        l.test_thread_waited = grew(before.test_thread, test_thread_after);
        return l;
    }
    const auto& last = *std::max_element(ends.begin(), ends.end(),
                                         [](const auto& a, const auto& b) { return a.at < b.at; });
    l.waited = grew(before.of(last.tid), last.run_delay);
    if (last.test_thread_asleep) {
        l.waited += grew(last.test_thread_run_delay, test_thread_after);
        l.test_thread_waited = grew(before.test_thread, last.test_thread_run_delay);
    } else {
        l.test_thread_waited = grew(before.test_thread, test_thread_after);
    }
    return l;
}

// Runs `attempt` (a callable returning std::optional<Latency>) until it gives a figure under
// `bound`, or one over it that is not ambiguous, at most `attempts` times; returns the last
// figure, or nullopt as soon as an attempt gives none (it reports why itself).
template <typename Attempt>
std::optional<Latency> measure_until_clear(std::chrono::nanoseconds bound, Attempt attempt,
                                           int attempts = 3) {
    std::optional<Latency> l;
    for (int i = 1; i <= attempts; ++i) {
        l = attempt();
        if (!l) return l;
        l->attempts = i;
        if (l->left() < bound || !l->ambiguous()) return l;
    }
    return l;
}

}  // namespace ws::testing
