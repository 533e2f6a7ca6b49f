// Lesson 02: a queue per worker, against lesson 01's one shared queue. The spawn tree is where
// local queues should win: every spawn from inside a task stays on its worker's own queue
// instead of going through the one lock. The steal counters come with every result.
#include <memory>

#include "01_shared_queue/thread_pool.hpp"
#include "02_local_queues/thread_pool.hpp"
#include "contenders.hpp"

namespace ws::bench {

void register_benchmarks() {
    register_pool_workloads("lesson01",
                            [] { return std::make_unique<lesson01::ThreadPool>(bench_workers()); });
    register_pool_workloads("lesson02",
                            [] { return std::make_unique<lesson02::ThreadPool>(bench_workers()); });
}

}  // namespace ws::bench
