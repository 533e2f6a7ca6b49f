// The tour: every lesson's reference pool on the standard workloads, next to the peers.
// `./workshop tour` runs it and prints the table.
#include <cstdint>
#include <memory>
#include <utility>

#include "01_shared_queue/thread_pool.hpp"
#include "02_local_queues/thread_pool.hpp"
#include "03_steal_half/thread_pool.hpp"
#include "07_fork_join/fork_join.hpp"
#include "07_fork_join/thread_pool.hpp"
#include "contenders.hpp"

namespace ws::bench {

namespace {
// Lesson 07's pool behind the fork-join workloads' interface.
struct Lesson07ForkJoin {
    lesson07::ThreadPool pool{bench_workers()};

    template <typename A, typename B>
    void join(A&& a, B&& b) {
        lesson07::join(pool, std::forward<A>(a), std::forward<B>(b));
    }
    template <typename T, typename Map, typename Reduce>
    T parallel_reduce(std::uint64_t begin, std::uint64_t end, std::uint64_t grain, T identity,
                      Map map, Reduce reduce) {
        return lesson07::parallel_reduce(pool, begin, end, grain, std::move(identity),
                                         std::move(map), std::move(reduce));
    }
};

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
    const auto lesson07 = [] { return std::make_unique<lesson07::ThreadPool>(bench_workers()); };
    register_pool_workloads("lesson07", lesson07);
    register_fork_join_workloads("lesson07", [] { return std::make_unique<Lesson07ForkJoin>(); });
    register_idle_workloads("lesson07", lesson07);
}

}  // namespace ws::bench
