// The tour: every lesson's reference pool on the standard workloads, next to the peers.
// `./workshop tour` runs it and prints the table.
#include <memory>
#include <string>

#include "01_shared_queue/thread_pool.hpp"
#include "02_local_queues/thread_pool.hpp"
#include "03_steal_half/thread_pool.hpp"
#include "04_chase_lev/thread_pool.hpp"
#include "05_parking/thread_pool.hpp"
#include "06_injector/thread_pool.hpp"
#include "contenders.hpp"
#include "idle_workloads.hpp"
#include "lesson07_contender.hpp"
#include "lesson08_contender.hpp"
#include "lesson09_contender.hpp"

namespace ws::bench {

namespace {
// The pool workloads, then idleness (registered last: see register_idle_workloads).
template <typename Pool>
void register_pool(const std::string& name) {
    const auto make = [] { return std::make_unique<Pool>(bench_workers()); };
    register_pool_workloads(name, make);
    register_idle_workloads(name, make);
}
}  // namespace

void register_benchmarks() {
    register_pool<lesson01::ThreadPool>("lesson01");
    register_pool<lesson02::ThreadPool>("lesson02");
    register_pool<lesson03::ThreadPool>("lesson03");
    register_pool<lesson04::ThreadPool>("lesson04");
    register_pool<lesson05::ThreadPool>("lesson05");
    register_pool<lesson06::ThreadPool>("lesson06");
    register_lesson07();
    register_lesson08();
    register_lesson09();
    // The wake row's floor: a bare futex wake-up, a fresh sleeper for each of the nine, like the
    // pools' fresh pool (idle_workloads.hpp).
    register_wake_measure("futex_floor", [] { return FutexSleeper().wake_after(kIdleBeforeWake); });
}

}  // namespace ws::bench
