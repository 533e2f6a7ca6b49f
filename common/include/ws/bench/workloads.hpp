// The standard workloads, written once for every contender. An executor `E` needs
// `e.spawn(callable)` (callable from inside a running task too) and `e.wait_idle()`.
// Adapters for the peers (oneTBB, sequential) are in ws/bench/peers.hpp.
#pragma once

#include <atomic>
#include <cstdint>

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
template <typename E>
void imbalanced_from_one(E& exec, std::uint64_t n, std::uint64_t unit) {
    exec.spawn([&exec, n, unit] {
        for (std::uint64_t i = 0; i < n; ++i) {
            const std::uint64_t work = (i % 8 == 0) ? 8 * unit : unit;
            exec.spawn([work] { (void)spin_kernel(work); });
        }
    });
    exec.wait_idle();
}

// Total kernel iterations imbalanced_from_one(n, unit) performs: the sequential baseline.
constexpr std::uint64_t imbalanced_total(std::uint64_t n, std::uint64_t unit) {
    const std::uint64_t heavy = (n + 7) / 8;
    return heavy * 8 * unit + (n - heavy) * unit;
}

}  // namespace ws::bench
