// The OpenMP contender: the same workloads written with OpenMP tasks. openmp_peer.cpp is
// compiled by clang with LLVM's libomp (see bench/CMakeLists.txt), whatever compiles the rest,
// so this interface is plain functions on plain types. Only built when clang and libomp are
// found.
#pragma once

#include <chrono>
#include <cstdint>

namespace ws::bench::openmp {

void flat_spawn(std::uint64_t n);
void spawn_tree(unsigned depth);
void imbalanced_from_one(std::uint64_t n, std::uint64_t unit);

// fib(n) with a task per call (no cutoff) and a taskwait, from one thread of a parallel region.
std::uint64_t fib(std::uint64_t n);
// Sum of sqrt(i) over [0, n): `parallel for reduction(+)` over chunks of `grain` indices.
double sqrt_reduce(std::uint64_t n, std::uint64_t grain);
// As ws::bench::idle_cpu_per_second and wake_latency (ws/bench/workloads.hpp): CPU per second
// right after a parallel region; latency from entering a parallel region after `idle` to its
// second thread starting.
double idle_cpu_per_second(std::chrono::milliseconds window);
std::chrono::nanoseconds wake_latency(std::chrono::milliseconds idle);

}  // namespace ws::bench::openmp
