#include "ws/bench/kernel.hpp"

#include <atomic>
#include <cmath>

namespace ws::bench {

namespace {
// Results land here so the optimiser must compute them; relaxed, because nobody reads them.
std::atomic<std::uint64_t> g_sink{0};
}  // namespace

std::uint64_t spin_kernel(std::uint64_t iterations) {
    // Hide the argument's value from the optimiser: with a constant argument (the calibration
    // below, tiny_work) clang 14 otherwise computes the whole loop at compile time, even
    // across the noinline boundary, which made iterations_for() return ~10^8 for 5 us.
    asm volatile("" : "+r"(iterations));
    std::uint64_t x = iterations | 1;
    for (std::uint64_t i = 0; i < iterations; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

void tiny_work() {
    g_sink.store(spin_kernel(8), std::memory_order_relaxed);
}

std::uint64_t fib_leaf(std::uint64_t n) {
    return n;
}

double sqrt_sum(std::uint64_t begin, std::uint64_t end) {
    double sum = 0;
    for (std::uint64_t i = begin; i < end; ++i)
        sum += std::sqrt(static_cast<double>(i));
    return sum;
}

std::uint64_t iterations_for(std::chrono::nanoseconds duration) {
    static const double ns_per_iteration = [] {
        constexpr std::uint64_t kProbe = 2'000'000;
        double best = 1e30;
        for (int rep = 0; rep < 5; ++rep) {
            const auto t0 = std::chrono::steady_clock::now();
            g_sink.store(spin_kernel(kProbe), std::memory_order_relaxed);
            const auto t1 = std::chrono::steady_clock::now();
            const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
            if (ns < best) best = ns;
        }
        return best / kProbe;
    }();
    const double n = static_cast<double>(duration.count()) / ns_per_iteration;
    return n < 1 ? 1 : static_cast<std::uint64_t>(n);
}

}  // namespace ws::bench
