// The one work kernel every benchmark contender runs. It lives in its own translation unit and
// is marked noinline, so no contender gets a better-optimised copy of the "work" than another.
#pragma once

#include <chrono>
#include <cstdint>

namespace ws::bench {

// Spins for `iterations` steps of a dependent integer recurrence and returns its value (so the
// compiler cannot drop it). One step is a few nanoseconds.
[[gnu::noinline]] std::uint64_t spin_kernel(std::uint64_t iterations);

// The body of a "tiny" task: a handful of kernel steps.
[[gnu::noinline]] void tiny_work();

// The leaf of every fib(n) contender: returns n (called for n < 2). Out of line, so a recursion
// without cutoff pays one real call per leaf in every contender alike.
[[gnu::noinline]] std::uint64_t fib_leaf(std::uint64_t n);

// The chunk of every parallel_reduce contender: the sum of sqrt(i) for i in [begin, end).
[[gnu::noinline]] double sqrt_sum(std::uint64_t begin, std::uint64_t end);

// How many spin_kernel iterations take about `duration` on this machine (measured once).
std::uint64_t iterations_for(std::chrono::nanoseconds duration);

}  // namespace ws::bench
