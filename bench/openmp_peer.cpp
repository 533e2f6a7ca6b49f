#include "openmp_peer.hpp"

#include <omp.h>

#include <ws/bench/kernel.hpp>

namespace ws::bench::openmp {

void flat_spawn(std::uint64_t n) {
#pragma omp parallel
#pragma omp single
    for (std::uint64_t i = 0; i < n; ++i) {
#pragma omp task
        tiny_work();
    }
    // the parallel region's closing barrier waits for every task
}

namespace {
void tree_node(unsigned depth) {
    if (depth == 0) {
        tiny_work();
        return;
    }
#pragma omp task
    tree_node(depth - 1);
#pragma omp task
    tree_node(depth - 1);
}
}  // namespace

void spawn_tree(unsigned depth) {
#pragma omp parallel
#pragma omp single
    {
#pragma omp task
        tree_node(depth);
    }
}

void imbalanced_from_one(std::uint64_t n, std::uint64_t unit) {
#pragma omp parallel
#pragma omp single
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t work = (i % 8 == 0) ? 8 * unit : unit;
#pragma omp task firstprivate(work)
        (void)spin_kernel(work);
    }
}

}  // namespace ws::bench::openmp
