// Registers the contenders that are not lessons: sequential code, oneTBB and OpenMP, each
// where available. Linked into every benchmark binary.
#include "peers.hpp"

#include <benchmark/benchmark.h>

#include <memory>

#include <ws/bench/peers.hpp>

#include "contenders.hpp"
#if defined(WS_HAVE_OPENMP)
#include "openmp_peer.hpp"
#endif

namespace ws::bench {

void register_peers() {
    register_pool_workloads("sequential", [] { return std::make_unique<Sequential>(); });
    register_fork_join_workloads("sequential", [] { return std::make_unique<Sequential>(); });
    // The machine's ceiling for `imbalanced` (workloads.hpp): the tool prints each contender's
    // share of it beside the share of the ideal.
    benchmark::RegisterBenchmark("imbalanced/static_split",
                                 [](benchmark::State& state) {
                                     const auto unit = iterations_for(kImbalancedUnit);
                                     const auto workers = static_cast<unsigned>(bench_workers());
                                     for (auto _ : state)
                                         imbalanced_static_split(workers, kImbalancedTasks, unit);
                                     state.SetItemsProcessed(state.iterations() * kImbalancedTasks);
                                 })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
#if defined(WS_HAVE_TBB)
    const auto tbb = [] { return std::make_unique<TbbTaskGroup>(); };
    register_pool_workloads("onetbb", tbb);
    register_fork_join_workloads("onetbb", tbb);
    register_idle_workloads("onetbb", tbb);
#endif
#if defined(WS_HAVE_OPENMP)
    const auto omp = [](const char* name, auto body) {
        benchmark::RegisterBenchmark(name, body)->Unit(benchmark::kMillisecond)->UseRealTime();
    };
    omp("flat_spawn/openmp", [](benchmark::State& state) {
        for (auto _ : state)
            openmp::flat_spawn(kFlatTasks);
        state.SetItemsProcessed(state.iterations() * kFlatTasks);
    });
    omp("spawn_tree/openmp", [](benchmark::State& state) {
        for (auto _ : state)
            openmp::spawn_tree(kTreeDepth);
        state.SetItemsProcessed(state.iterations() * spawn_tree_tasks(kTreeDepth));
    });
    omp("imbalanced/openmp", [](benchmark::State& state) {
        const auto unit = iterations_for(kImbalancedUnit);
        for (auto _ : state)
            openmp::imbalanced_from_one(kImbalancedTasks, unit);
        state.SetItemsProcessed(state.iterations() * kImbalancedTasks);
    });
    omp("fib/openmp", [](benchmark::State& state) {
        for (auto _ : state) {
            if (openmp::fib(kFibN) != 832'040) state.SkipWithError("fib(30) is not 832040");
        }
        state.SetItemsProcessed(state.iterations() * fib_joins(kFibN));
    });
    omp("reduce/openmp", [](benchmark::State& state) {
        for (auto _ : state)
            benchmark::DoNotOptimize(openmp::sqrt_reduce(kReduceN, kReduceGrain));
        state.SetItemsProcessed(state.iterations() * kReduceN);
    });
    // Last of all: after a parallel region libomp's threads spin (KMP_BLOCKTIME, 200 ms by
    // default), which would be charged to whatever is measured next.
    register_idle_measures(
        "openmp", [] { return openmp::idle_cpu_per_second(kIdleWindow); },
        [] { return openmp::wake_latency(kIdleBeforeWake); });
#endif
}

}  // namespace ws::bench
