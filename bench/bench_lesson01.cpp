// Lesson 01: one shared queue behind one lock, against lesson 00 and the peers.
#include <memory>

#include "contenders.hpp"
#include "serial_executor.hpp"
#include "thread_pool.hpp"

namespace ws::bench {

void register_benchmarks() {
    register_pool_workloads("lesson00",
                            [] { return std::make_unique<lesson00::SerialExecutor>(); });
    register_pool_workloads("lesson01",
                            [] { return std::make_unique<lesson01::ThreadPool>(bench_workers()); });
}

}  // namespace ws::bench
