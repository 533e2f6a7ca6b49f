// The tour: every lesson's reference pool on the standard workloads, next to the peers.
// `./workshop tour` runs it and prints the table.
#include <memory>

#include "contenders.hpp"
#include "thread_pool.hpp"

namespace ws::bench {

void register_benchmarks() {
    register_pool_workloads("lesson01",
                            [] { return std::make_unique<lesson01::ThreadPool>(bench_workers()); });
}

}  // namespace ws::bench
