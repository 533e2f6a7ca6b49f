// The tour: every lesson's reference pool on the standard workloads, next to the peers.
// `./workshop tour` runs it and prints the table.
#include <memory>

#include "01_shared_queue/thread_pool.hpp"
#include "02_local_queues/thread_pool.hpp"
#include "03_steal_half/thread_pool.hpp"
#include "04_chase_lev/thread_pool.hpp"
#include "05_parking/thread_pool.hpp"
#include "06_injector/thread_pool.hpp"
#include "contenders.hpp"

namespace ws::bench {

void register_benchmarks() {
    register_pool_workloads("lesson01",
                            [] { return std::make_unique<lesson01::ThreadPool>(bench_workers()); });
    register_pool_workloads("lesson02",
                            [] { return std::make_unique<lesson02::ThreadPool>(bench_workers()); });
    register_pool_workloads("lesson03",
                            [] { return std::make_unique<lesson03::ThreadPool>(bench_workers()); });
    register_pool_workloads("lesson04",
                            [] { return std::make_unique<lesson04::ThreadPool>(bench_workers()); });
    register_pool_workloads("lesson05",
                            [] { return std::make_unique<lesson05::ThreadPool>(bench_workers()); });
    register_pool_workloads("lesson06",
                            [] { return std::make_unique<lesson06::ThreadPool>(bench_workers()); });
}

}  // namespace ws::bench
