// Lesson 07 in the tour: the work-stealing pool with fork-join — the pool workloads, the
// fork-join ones (fib by join, parallel_reduce) and idleness.
#include <cstdint>
#include <memory>
#include <utility>

#include "contenders.hpp"
#include "fork_join.hpp"
#include "thread_pool.hpp"

namespace ws::bench {

namespace {
// The pool behind the fork-join workloads' interface.
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
}  // namespace

void register_tour_lesson07() {
    const auto make = [] { return std::make_unique<lesson07::ThreadPool>(bench_workers()); };
    register_pool_workloads("lesson07", make);
    register_fork_join_workloads("lesson07", [] { return std::make_unique<Lesson07ForkJoin>(); });
    register_idle_workloads("lesson07", make);
}

}  // namespace ws::bench
