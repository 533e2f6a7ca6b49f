// Lesson 07: fork-join on the work-stealing pool — every workload, fork-join ones included
// (fib(30) by join, parallel_reduce), against the peers. Lesson 06's pool joins the table on
// the pool workloads once lesson 06 is in (it has no join). Last, the wake-up of the pools of
// lessons 05 to 07 against the bare futex wake-up, interleaved in one run (wake_vs_floor).
#include <memory>

#include "05_parking/thread_pool.hpp"
#include "06_injector/thread_pool.hpp"
#include "contenders.hpp"
#include "idle_workloads.hpp"
#include "lesson07_contender.hpp"

namespace ws::bench {

void register_benchmarks() {
    register_lesson07();
    register_wake_against_floor(
        {{"lesson05",
          pool_wakes([] { return std::make_unique<lesson05::ThreadPool>(bench_workers()); })},
         {"lesson06",
          pool_wakes([] { return std::make_unique<lesson06::ThreadPool>(bench_workers()); })},
         {"lesson07",
          pool_wakes([] { return std::make_unique<lesson07::ThreadPool>(bench_workers()); })}});
}

}  // namespace ws::bench
