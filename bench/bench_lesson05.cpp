// Lesson 05: parking idle workers. The pool with the event count against lesson 04's pool (which
// backs off instead), the same pool with the naive parker (exercise 1), and the peers: the
// standard workloads, the wake-up latency after 300 ms idle (with the bare futex wake-up as its
// floor), and the CPU per task when tasks trickle in.
#include <memory>

#include "04_chase_lev/thread_pool.hpp"
#include "05_parking/thread_pool.hpp"
#include "contenders.hpp"
#include "idle_workloads.hpp"

namespace ws::bench {

namespace {
std::unique_ptr<lesson05::ThreadPool> lesson05_pool(bool naive) {
    lesson05::Config c;
    c.num_workers = bench_workers();
    c.naive_parking = naive;
    return std::make_unique<lesson05::ThreadPool>(c);
}
}  // namespace

void register_benchmarks() {
    const auto l04 = [] { return std::make_unique<lesson04::ThreadPool>(bench_workers()); };
    register_pool_workloads("lesson04", l04);
    register_wake_latency("lesson04", l04);
    register_trickle_cpu("lesson04", l04);
    const auto parked = [] { return lesson05_pool(false); };
    const auto naive = [] { return lesson05_pool(true); };
    register_pool_workloads("lesson05", parked);
    register_pool_workloads("lesson05-naive", naive);
    register_wake_latency("lesson05", parked);
    register_wake_latency("lesson05-naive", naive);
    register_trickle_cpu("lesson05", parked);
    register_trickle_cpu("lesson05-naive", naive);
    register_wake_floor();  // what the operating system alone takes to wake a sleeping thread
    register_wake_against_floor({{"lesson05", pool_wakes(parked)}});
#if defined(WS_HAVE_TBB)
    const auto tbb = [] { return std::make_unique<TbbArena>(static_cast<int>(bench_workers())); };
    register_wake_latency("onetbb", tbb);
    register_trickle_cpu("onetbb", tbb);
#endif
}

}  // namespace ws::bench
