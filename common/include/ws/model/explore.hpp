// The interleaving explorer: runs a small scenario under every schedule within a bound, and
// under a model of the C++ memory model, so that a memory order that is too weak fails on any
// machine. Build with WS_MODEL_CHECK (link ws_model), so that ws::atomic<T> is the instrumented
// ws::model::Atomic<T>.
//
//   auto report = ws::model::explore({}, [] {
//       ws::atomic<int> x{0}, y{0};
//       int r1 = 0, r2 = 0;
//       ws::model::Thread a([&] { x.store(1, std::memory_order_relaxed);
//                                 r1 = y.load(std::memory_order_relaxed); });
//       y.store(1, std::memory_order_relaxed);
//       r2 = x.load(std::memory_order_relaxed);
//       a.join();
//       ws::model::check(r1 == 1 || r2 == 1, "both loads read 0");
//   });
//   EXPECT_FALSE(report.failed) << report;   // fails: relaxed allows r1 == r2 == 0
//
// How it runs. The scenario runs on model threads (real std::threads, started with
// ws::model::Thread) that pass a baton: exactly one runs at a time, and every atomic operation
// is a scheduling point where the explorer picks who runs next. Every load is a second kind of
// choice: which of the stores the memory model allows it to read. One run of the scenario is an
// execution; the explorer replays the scenario from scratch for each, so the scenario must be
// deterministic apart from those choices (no clocks, no randomness of its own).
//   1. Depth-first search over the choices: every schedule with at most
//      `preemption_bound` preemptions (switching away from a thread that could go on), at most
//      `stale_read_bound` loads that read an older store than the newest they may read, and
//      at most `future_read_bound` loads that read a store that runs later (below).
//   2. Then `random_executions` random schedules (seeded: the same ones every run), without
//      those bounds.
// It stops at the first execution that fails: a check() that does not hold, a use of a
// destroyed atomic ("use after free"), a race on an atomic's construction or destruction, a
// deadlock or livelock, an exception out of a thread, an order that is undefined behaviour (a
// release load, an acquire store). The report holds a numbered trace of that execution and a
// schedule string; Options::replay = that string runs exactly that execution again.
//
// The memory model (C++20 [intro.races], [atomics.order]), what is modelled:
//  - Every load reads one store to its location that coherence allows: not older than a store
//    it happens after or than what an earlier load happening before it read (write-read and
//    read-read coherence). Which one is a choice, explored like the schedule: that gives store
//    buffering, stale reads, and loads of different locations seeming reordered.
//  - Load buffering, in part: a load may also read a store that runs after it. After each
//    depth-first execution, for every load whose location is next touched by another thread's
//    store of a different value that the load does not happen before, the explorer remembers
//    that value; a later execution with the same prefix lets the load read it (a promise). The
//    promise must be kept by the very next access to the location, a store of that value by a
//    thread the load does not happen before, and if the load acquires, the store must release
//    nothing (the explorer does not apply synchronisation backwards). Executions whose promise
//    is not kept are discarded. Values only ever come from stores some execution made: nothing
//    comes out of thin air.
//  - Happens-before by vector clocks: a release store (or stronger) read by an acquire load
//    (or stronger) synchronises; release sequences continue through read-modify-writes (C++20:
//    not through plain stores); relaxed gives nothing; starting and joining a Thread
//    synchronise; memory_order_consume is treated as acquire.
//  - Read-modify-writes (exchange, fetch_add, fetch_sub, a successful compare_exchange) read
//    the newest store in modification order. A failed compare_exchange is a load with the
//    failure order and may read an older store (one whose value differs from `expected`).
//  - seq_cst: a single total order S of all seq_cst operations must exist that is consistent
//    with "strongly happens before" (computed exactly, including C++20's rule that
//    release/acquire pairs that are not both seq_cst order only what lies strictly before and
//    after them) and with coherence between seq_cst operations. The explorer keeps these
//    constraints as a graph and lets a seq_cst load read a store only if the graph stays
//    acyclic. So all-seq_cst store buffering and IRIW are forbidden, and weaker mixes allowed.
//  - An atomic's construction is a plain write: an access that it does not happen before is a
//    data race (an object published without release/acquire), and so is a destruction that an
//    access of another thread does not happen before (a race on reclamation); any access after
//    the destruction is a use after free, caught before it touches the freed memory (freed
//    memory is not reused while an execution runs, see model_quarantine.cpp).
// What is not modelled:
//  - Modification order follows the order the stores ran in: outcomes that need two threads'
//    stores ordered against both program orders (2+2W and the like) are never produced.
//  - Standalone fences (std::atomic_thread_fence): the structures use none.
//  - Spurious failures of compare_exchange_weak; mixed-size or non-atomic accesses (no data
//    race detection on plain memory: ThreadSanitizer's job); memory_order_consume's dependency
//    ordering; atomics shared with threads outside the scenario.
//  - Fairness, in a simple form: a thread that loads a store it already read, without writing
//    in between, is taken to be spinning. It yields until another thread writes (the switch
//    costs no preemption), then reads the newest store of that location; if nobody writes for
//    `livelock_steps` operations, the execution fails as a livelock.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace ws::model {

struct Options {
    int preemption_bound = 2;   // DFS: at most this many preemptions per execution
    int stale_read_bound = 2;   // DFS: at most this many loads that skip a newer store
    int future_read_bound = 1;  // DFS: at most this many loads that read a later store
    std::uint64_t max_dfs_executions = 200'000;  // DFS stops there (Report::dfs_complete false)
    std::uint64_t random_executions = 1'000;     // then this many random executions
    std::uint64_t seed = 1;                      // of the random executions
    std::uint64_t max_steps = 100'000;           // atomic operations per execution, then it fails
    std::uint64_t livelock_steps = 2'000;        // operations without any store, then it fails
    std::string replay;  // non-empty: run only the execution this schedule string describes
};

struct Report {
    bool failed = false;
    std::string failure;               // what went wrong
    std::string trace;                 // the failing execution, numbered, one operation a line
    std::string schedule;              // replays it: Options::replay = schedule
    std::uint64_t executions = 0;      // run in all
    std::uint64_t dfs_executions = 0;  // of which depth-first
    bool dfs_complete = false;         // the DFS covered every execution within the bounds
    std::uint64_t discarded = 0;       // executions that could not exist (a broken promise)
};

// Prints a one-line summary, and for a failure the failure, the trace and the schedule.
std::ostream& operator<<(std::ostream& out, const Report& report);

// Runs `scenario` on a model thread once per execution, as described at the top of this file.
Report explore(const Options& options, const std::function<void()>& scenario);

// A thread of the scenario. Starting it and joining it synchronise, as for std::thread; the
// destructor joins if join() was not called (as std::jthread's does). Only inside explore().
class Thread {
  public:
    explicit Thread(std::function<void()> body);
    ~Thread();
    Thread(const Thread&) = delete;
    Thread& operator=(const Thread&) = delete;
    void join();

  private:
    int id_;
    bool joined_ = false;
};

// The scenario's invariant: if `ok` is false the execution fails with `what` (the threads run
// on; explore() reports the first failure when the execution ends). Only inside explore().
void check(bool ok, std::string_view what);

}  // namespace ws::model
