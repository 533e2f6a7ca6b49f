// The contenders that are not lessons, behind the same interfaces as a pool: spawn/wait_idle
// for the pool workloads, join/parallel_reduce for the fork-join workloads.
#pragma once

#include <cstdint>
#include <utility>

#if defined(WS_HAVE_TBB)
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/task_group.h>
#endif

namespace ws::bench {

// Runs every task at once on the calling thread: the sequential baseline. spawn_tree on it is
// a depth-first recursion; flat_spawn a plain loop.
struct Sequential {
    template <typename F>
    void spawn(F&& f) {
        std::forward<F>(f)();
    }
    void wait_idle() {}

    // join is two calls; parallel_reduce one call of map over the whole range.
    template <typename A, typename B>
    void join(A&& a, B&& b) {
        std::forward<A>(a)();
        std::forward<B>(b)();
    }
    template <typename T, typename Map, typename Reduce>
    T parallel_reduce(std::uint64_t begin, std::uint64_t end, std::uint64_t /*grain*/, T identity,
                      Map map, Reduce reduce) {
        return reduce(std::move(identity), map(begin, end));
    }
};

#if defined(WS_HAVE_TBB)
// oneTBB's task_group: run() from anywhere, wait() helps with the work. join is a task_group
// too (run a, call b, wait); parallel_reduce is tbb::parallel_reduce with its default
// (auto) partitioner, `grain` being the smallest range it may split.
struct TbbTaskGroup {
    oneapi::tbb::task_group group;
    template <typename F>
    void spawn(F&& f) {
        group.run(std::forward<F>(f));
    }
    void wait_idle() { group.wait(); }

    template <typename A, typename B>
    void join(A&& a, B&& b) {
        oneapi::tbb::task_group g;
        g.run(std::forward<A>(a));
        std::forward<B>(b)();
        g.wait();
    }
    template <typename T, typename Map, typename Reduce>
    T parallel_reduce(std::uint64_t begin, std::uint64_t end, std::uint64_t grain, T identity,
                      Map map, Reduce reduce) {
        return oneapi::tbb::parallel_reduce(
            oneapi::tbb::blocked_range<std::uint64_t>(begin, end, grain), identity,
            [&map, &reduce](const oneapi::tbb::blocked_range<std::uint64_t>& r, T acc) {
                return reduce(std::move(acc), map(r.begin(), r.end()));
            },
            reduce);
    }
};
#endif

}  // namespace ws::bench
