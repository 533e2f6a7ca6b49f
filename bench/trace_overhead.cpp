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

// Where the time of one event goes (bench/trace_overhead.sh parts): a read of the events' clock,
// a read of steady_clock for comparison, and a whole hook, one thread, into a lane with room for
// every event (in the bench build the hook is empty and this measures an empty loop).
constexpr std::int64_t kEvents = std::int64_t{1} << 22;

void register_event_costs() {
    benchmark::RegisterBenchmark("event_cost/clock_ticks", [](benchmark::State& state) {
        for (auto _ : state)
            benchmark::DoNotOptimize(trace::detail::ticks());
    });
    benchmark::RegisterBenchmark("event_cost/steady_clock_now", [](benchmark::State& state) {
        for (auto _ : state)
            benchmark::DoNotOptimize(std::chrono::steady_clock::now());
    });
    benchmark::RegisterBenchmark("event_cost/hook", [](benchmark::State& state) {
        trace::Recorder recorder(1, static_cast<std::size_t>(kEvents));
        trace::install(&recorder);
        trace::attach_worker(0);
        for (auto _ : state) {
            WS_TRACE_EVENT(task_begin);
            benchmark::ClobberMemory();
        }
        trace::install(nullptr);
        trace::attach_worker(0);  // detaches this thread
        if (recorder.lane(0).dropped() != 0) state.SkipWithError("the lane was full");
    })->Iterations(kEvents);
}

}  // namespace

void register_benchmarks() {
    register_recorded_tree<lesson03::ThreadPool>("lesson03");
    register_recorded_tree<lesson07::ThreadPool>("lesson07");
    register_event_costs();
}

}  // namespace ws::bench
