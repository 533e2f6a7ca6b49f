#include "openmp_peer.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include <ws/bench/kernel.hpp>
#include <ws/bench/workloads.hpp>

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
        const std::uint64_t work = imbalanced_work(i, unit);
#pragma omp task firstprivate(work)
        (void)spin_kernel(work);
    }
}

namespace {
std::uint64_t fib_task(std::uint64_t n) {
    if (n < 2) return fib_leaf(n);
    std::uint64_t x = 0;
    std::uint64_t y = 0;
#pragma omp task shared(x)
    x = fib_task(n - 1);
    y = fib_task(n - 2);
#pragma omp taskwait
    return x + y;
}
}  // namespace

std::uint64_t fib(std::uint64_t n) {
    std::uint64_t result = 0;
#pragma omp parallel
#pragma omp single
    result = fib_task(n);
    return result;
}

double sqrt_reduce(std::uint64_t n, std::uint64_t grain) {
    const auto chunks = static_cast<std::int64_t>((n + grain - 1) / grain);
    double sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
        const auto begin = static_cast<std::uint64_t>(c) * grain;
        sum += sqrt_sum(begin, std::min(n, begin + grain));
    }
    return sum;
}

double idle_cpu_per_second(std::chrono::milliseconds window) {
    return idle_cpu_after([] { spawn_tree(10); }, window);
}

std::chrono::nanoseconds wake_latency(std::chrono::milliseconds idle) {
    using Clock = std::chrono::steady_clock;
    std::this_thread::sleep_for(idle);
    Clock::time_point started{};
    const auto t0 = Clock::now();
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1) started = Clock::now();
    }  // the region's closing barrier orders the write before the read below
    return started - t0;
}

}  // namespace ws::bench::openmp
