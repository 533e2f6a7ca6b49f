// Trees of tasks that spawn tasks, for testing any pool with spawn (callable from inside a
// task): a full binary tree that counts its nodes, and random trees that mark unique ids.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ws/testing/exactly_once.hpp"

namespace ws::testing {

// Number of nodes binary_tree(depth) visits.
constexpr std::uint64_t binary_tree_nodes(unsigned depth) {
    return (std::uint64_t{2} << depth) - 1;
}

// Counts itself in `nodes`; above depth 0, spawns two subtrees of depth - 1.
template <typename Pool>
void binary_tree(Pool& pool, std::atomic<std::uint64_t>& nodes, unsigned depth) {
    nodes.fetch_add(1, std::memory_order_relaxed);
    if (depth == 0) return;
    pool.spawn([&pool, &nodes, depth] { binary_tree(pool, nodes, depth - 1); });
    pool.spawn([&pool, &nodes, depth] { binary_tree(pool, nodes, depth - 1); });
}

// Runs binary_tree(depth) from outside on a fresh pool of `workers`; returns the nodes counted.
template <typename Pool>
std::uint64_t count_binary_tree(std::size_t workers, unsigned depth) {
    std::atomic<std::uint64_t> nodes{0};
    Pool pool(workers);
    pool.spawn([&] { binary_tree(pool, nodes, depth); });
    pool.wait_idle();
    return nodes.load();
}

// A random tree: each node takes the next id from `next`, marks it in `seen` and spawns 0 to 3
// children (1.5 on average, so most trees keep growing) until the ids run out. Start enough
// roots, waiting in between, until `next` reaches seen.size(): then every id was used once.
template <typename Pool>
void random_tree(Pool& pool, ExactlyOnce& seen, std::atomic<std::size_t>& next,
                 std::uint64_t seed) {
    const std::size_t id = next.fetch_add(1, std::memory_order_relaxed);
    if (id >= seen.size()) return;  // out of ids: this node and its subtree end here
    seen.mark(id);
    std::uint64_t x = seed * 0x9E3779B97F4A7C15u + id + 1;
    x ^= x >> 29;
    const unsigned children = static_cast<unsigned>(x % 4);
    for (unsigned c = 0; c < children; ++c)
        pool.spawn([&pool, &seen, &next, s = x + c] { random_tree(pool, seen, next, s); });
}

// Grows random trees from batches of `roots` roots spawned from the calling (outside) thread,
// waiting for each batch, until every id of `seen` is used; `rng()` seeds each root.
template <typename Pool, typename Rng>
void run_random_trees(Pool& pool, ExactlyOnce& seen, Rng& rng, int roots = 64) {
    std::atomic<std::size_t> next{0};
    while (next.load() < seen.size()) {
        for (int r = 0; r < roots; ++r) {
            pool.spawn([&pool, &seen, &next, seed = static_cast<std::uint64_t>(rng())] {
                random_tree(pool, seen, next, seed);
            });
        }
        pool.wait_idle();
    }
}

}  // namespace ws::testing
