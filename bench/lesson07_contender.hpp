// Lesson 07's pool behind the fork-join workloads' interface (register_fork_join_workloads):
// join and parallel_reduce of ws::lesson07 on a pool of bench_workers() workers.
#pragma once

#include <cstdint>
#include <utility>

#include "07_fork_join/fork_join.hpp"
#include "07_fork_join/thread_pool.hpp"
#include "contenders.hpp"

namespace ws::bench {

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

// Lesson 07 on every workload: the pool ones, fork-join, idleness (last).
inline void register_lesson07() {
    const auto make = [] { return std::make_unique<lesson07::ThreadPool>(bench_workers()); };
    register_pool_workloads("lesson07", make);
    register_fork_join_workloads("lesson07", [] { return std::make_unique<Lesson07ForkJoin>(); });
    register_idle_workloads("lesson07", make);
}

}  // namespace ws::bench
