// The standard workloads, written once for every contender. An executor `E` needs
// `e.spawn(callable)` (callable from inside a running task too) and `e.wait_idle()`.
// Adapters for the peers (oneTBB, sequential) are in ws/bench/peers.hpp.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <thread>
#include <vector>

#include "ws/bench/kernel.hpp"

namespace ws::bench {

// Flat spawn: `n` tiny tasks spawned one by one from the calling (outside) thread.
template <typename E>
void flat_spawn(E& exec, std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i)
        exec.spawn([] { tiny_work(); });
    exec.wait_idle();
}

// Number of tasks spawn_tree(depth) runs: a full binary tree.
constexpr std::uint64_t spawn_tree_tasks(unsigned depth) {
    return (std::uint64_t{2} << depth) - 1;
}

namespace detail {
template <typename E>
void tree_node(E& exec, unsigned depth) {
    if (depth == 0) {
        tiny_work();
        return;
    }
    exec.spawn([&exec, depth] { tree_node(exec, depth - 1); });
    exec.spawn([&exec, depth] { tree_node(exec, depth - 1); });
}
}  // namespace detail

// Spawn tree: one task from outside; every inner node spawns two children from inside the
// pool, the leaves do tiny work. Measures spawns from worker threads.
template <typename E>
void spawn_tree(E& exec, unsigned depth) {
    exec.spawn([&exec, depth] { detail::tree_node(exec, depth); });
    exec.wait_idle();
}

// Imbalanced: one task, spawned from outside, spawns `n` tasks from inside the pool (so they
// all start in one worker's queue, if the pool has per-worker queues). Task i spins for
// `unit` iterations, except every 8th which spins 8x as long: work is uneven and starts in
// one place, so other workers only get any by stealing.
constexpr std::uint64_t imbalanced_work(std::uint64_t i, std::uint64_t unit) {
    return (i % 8 == 0) ? 8 * unit : unit;
}

template <typename E>
void imbalanced_from_one(E& exec, std::uint64_t n, std::uint64_t unit) {
    exec.spawn([&exec, n, unit] {
        for (std::uint64_t i = 0; i < n; ++i) {
            const std::uint64_t work = imbalanced_work(i, unit);
            exec.spawn([work] { (void)spin_kernel(work); });
        }
    });
    exec.wait_idle();
}

// The same tasks with no scheduler: `workers` plain threads (the caller one of them), each
// running one contiguous block of them, fixed in advance. With 8 dividing n / workers every
// block holds the same work, so no balancing can do better on this machine: its time is the
// machine's ceiling for imbalanced_from_one, which tells a pool's loss from the machine's (two
// busy CPUs may run slower than one, and a virtual machine may share them). It starts its
// threads every run, a few tens of microseconds that a pool spends waking its workers instead.
inline void imbalanced_static_split(unsigned workers, std::uint64_t n, std::uint64_t unit) {
    const auto run_block = [n, unit, workers](unsigned k) {
        for (std::uint64_t i = k * n / workers; i < (k + 1) * n / workers; ++i)
            (void)spin_kernel(imbalanced_work(i, unit));
    };
    std::vector<std::jthread> others;
    for (unsigned k = 1; k < workers; ++k)
        others.emplace_back(run_block, k);
    run_block(0);
}  // the jthreads join here

// Total kernel iterations imbalanced_from_one(n, unit) performs: the sequential baseline.
constexpr std::uint64_t imbalanced_total(std::uint64_t n, std::uint64_t unit) {
    const std::uint64_t heavy = (n + 7) / 8;
    return heavy * 8 * unit + (n - heavy) * unit;
}

// fib(n) by fork-join without a cutoff: every call with n >= 2 joins its two halves, so
// fib(30) runs 1,346,268 joins and 1,346,269 fib_leaf calls. `join(a, b)` is the contender's
// fork-join: runs both callables, possibly in parallel, and returns when both are done.
template <typename Join>
std::uint64_t fib(Join& join, std::uint64_t n) {
    if (n < 2) return fib_leaf(n);
    std::uint64_t x = 0, y = 0;
    join([&] { x = fib(join, n - 1); }, [&] { y = fib(join, n - 2); });
    return x + y;
}

// Number of joins fib(join, n) performs: the calls with n >= 2.
constexpr std::uint64_t fib_joins(std::uint64_t n) {
    std::uint64_t a = 0, b = 1;  // fib(0), fib(1); after the loop a = fib(n + 1)
    for (std::uint64_t i = 0; i <= n; ++i) {
        const std::uint64_t c = a + b;
        a = b;
        b = c;
    }
    return a - 1;  // the inner calls of fib(n) number fib(n + 1) - 1
}

// CPU time consumed by every thread of this process so far, in seconds.
inline double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Idle CPU: seconds of CPU the process burns per second of wall time while nothing is to do,
// measured over `window` that starts right after `burst()` (a short burst of work) — so a
// pool that spins for a while before it sleeps pays for that spinning. (The calling thread
// sleeps meanwhile; other threads of the process must be quiet too.)
template <typename Burst>
double idle_cpu_after(Burst burst, std::chrono::milliseconds window) {
    burst();
    const double cpu0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(window);
    const double cpu1 = process_cpu_seconds();
    const auto t1 = std::chrono::steady_clock::now();
    return (cpu1 - cpu0) / std::chrono::duration<double>(t1 - t0).count();
}

// The same for an executor, after a spawn tree of 2,047 tasks.
template <typename E>
double idle_cpu_per_second(E& exec, std::chrono::milliseconds window) {
    return idle_cpu_after([&exec] { spawn_tree(exec, 10); }, window);
}

// Wake-up latency: after `idle` with nothing to do, the time from spawning one task (from
// outside, and not helping) to that task starting on a worker. The pool first runs a small
// spawn tree (2,047 tasks, enough for every worker of a small pool to run some): the first tasks
// a new worker runs also pay for page faults and first allocations (its deque's slots, its
// stack), which are a cost of starting, not of waking up.
template <typename E>
std::chrono::nanoseconds wake_latency(E& exec, std::chrono::milliseconds idle) {
    using Clock = std::chrono::steady_clock;
    spawn_tree(exec, 10);
    std::this_thread::sleep_for(idle);
    std::atomic<Clock::rep> started{0};
    const auto t0 = Clock::now();
    exec.spawn([&started] {
        // release: the caller's acquire load sees the timestamp; notify after the store
        started.store(Clock::now().time_since_epoch().count(), std::memory_order_release);
        started.notify_one();
    });
    Clock::rep at = 0;
    while ((at = started.load(std::memory_order_acquire)) == 0)
        started.wait(0, std::memory_order_acquire);
    exec.wait_idle();  // the task has finished with `started` before it leaves scope
    return Clock::duration(at) - t0.time_since_epoch();
}

}  // namespace ws::bench
