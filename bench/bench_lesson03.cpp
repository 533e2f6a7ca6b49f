// Lesson 03: steal half, against lesson 02's steal one. The imbalanced workload is where it
// shows: every task starts in one worker's queue, so the others only get work by stealing;
// compare the "steals" and "tasks_per_steal" counters as well as the time.
#include <memory>

#include "02_local_queues/thread_pool.hpp"
#include "03_steal_half/thread_pool.hpp"
#include "contenders.hpp"

namespace ws::bench {

void register_benchmarks() {
    register_pool_workloads("lesson02",
                            [] { return std::make_unique<lesson02::ThreadPool>(bench_workers()); });
    register_pool_workloads("lesson03",
                            [] { return std::make_unique<lesson03::ThreadPool>(bench_workers()); });
}

}  // namespace ws::bench
