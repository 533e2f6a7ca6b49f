// Lesson 01 in the tour: one shared queue behind one lock.
#include <memory>

#include "contenders.hpp"
#include "thread_pool.hpp"

namespace ws::bench {

void register_tour_lesson01() {
    const auto make = [] { return std::make_unique<lesson01::ThreadPool>(bench_workers()); };
    register_pool_workloads("lesson01", make);
    register_idle_workloads("lesson01", make);
}

}  // namespace ws::bench
