// ws_trace_overhead: what recording a timeline costs (bench/trace_overhead.sh). Lesson 03's and
// lesson 07's reference pools run the benchmarks' spawn tree (262,143 tasks) with a recorder
// installed, a fresh pool and a fresh recorder for every timed run. The same source is built in
// the `bench` preset, where the pools' hooks compile to nothing and the recorder is made but
// never written, and in the `trace` preset, where every worker records every event: the ratio
// of the two times is the overhead of tracing.
//
// Only the spawn tree and its wait_idle() are timed: making the recorder (zeroing its lanes)
// and starting and stopping the pool are not, as they would be in any traced program.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include <ws/bench/workloads.hpp>
#include <ws/trace.hpp>

#include "03_steal_half/thread_pool.hpp"
#include "07_fork_join/thread_pool.hpp"
#include "contenders.hpp"

namespace ws::bench {
namespace {

// Room for every event of one spawn tree in each lane: 2 per task, and the steal attempts of a
// worker that finds nothing. A run that drops events is reported as an error, not timed.
constexpr std::size_t kEventsPerWorker = std::size_t{1} << 21;

template <typename Pool>
void register_recorded_tree(const std::string& contender) {
    benchmark::RegisterBenchmark(
        ("spawn_tree_recorded/" + contender).c_str(),
        [](benchmark::State& state) {
            const std::size_t workers = bench_workers();
            std::uint64_t events = 0;
            for (auto _ : state) {
                trace::Recorder recorder(workers, kEventsPerWorker);
                trace::install(&recorder);
                {
                    Pool pool(workers);
                    const auto start = std::chrono::steady_clock::now();
                    spawn_tree(pool, kTreeDepth);
                    state.SetIterationTime(
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                            .count());
                }  // the workers have ended: their lanes can be read
                trace::install(nullptr);
                for (std::size_t w = 0; w < workers; ++w) {
                    if (recorder.lane(w).dropped() != 0)
                        state.SkipWithError("a lane was full: events were dropped");
                    events += recorder.lane(w).size();
                }
            }
            // Per run: 0 in the bench build, at least 2 per task in the trace build.
            state.counters["events"] =
                benchmark::Counter(static_cast<double>(events), benchmark::Counter::kAvgIterations);
            state.SetItemsProcessed(state.iterations() *
                                    static_cast<std::int64_t>(spawn_tree_tasks(kTreeDepth)));
        })
        ->Unit(benchmark::kMillisecond)
        ->UseManualTime();
}

}  // namespace

void register_benchmarks() {
    register_recorded_tree<lesson03::ThreadPool>("lesson03");
    register_recorded_tree<lesson07::ThreadPool>("lesson07");
}

}  // namespace ws::bench
