// Lesson 06: the global injector. Outside-spawn throughput with 1 to 4 producer threads, the
// injector against lesson 05's locked global queue, and the standard workloads.
#include <memory>

#include "05_parking/thread_pool.hpp"
#include "06_injector/thread_pool.hpp"
#include "contenders.hpp"
#include "idle_workloads.hpp"

namespace ws::bench {

void register_benchmarks() {
    const auto l05 = [] { return std::make_unique<lesson05::ThreadPool>(bench_workers()); };
    const auto l06 = [] { return std::make_unique<lesson06::ThreadPool>(bench_workers()); };
    register_pool_workloads("lesson05", l05);
    register_pool_workloads("lesson06", l06);
    for (unsigned producers = 1; producers <= 4; ++producers) {
        register_outside_spawn("lesson05", l05, producers);
        register_outside_spawn("lesson06", l06, producers);
    }
    register_wake_against_floor({{"lesson05", pool_wakes(l05)}, {"lesson06", pool_wakes(l06)}});
}

}  // namespace ws::bench
