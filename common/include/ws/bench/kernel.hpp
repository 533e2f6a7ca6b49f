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

// How many spin_kernel iterations take about `duration` on this machine (measured once).
std::uint64_t iterations_for(std::chrono::nanoseconds duration);

}  // namespace ws::bench
