// ws_trace_overhead: what recording a timeline costs (bench/trace_overhead.sh). Lesson 03's and
// lesson 07's reference pools run the benchmarks' spawn tree (262,143 tasks) and imbalanced
// workload (20,000 tasks) with a recorder installed, a fresh pool and a fresh recorder for
// every timed run. The same source is built in
// the `bench` preset, where the pools' hooks compile to nothing and the recorder is made but
// never written, and in the `trace` preset, where every worker records every event: the ratio
// of the two times is the overhead of tracing.
//
// Only the workload and its wait_idle() are timed: making the recorder (zeroing its lanes)
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

// Room for every event of one run in each lane: 2 per task, and the steal attempts of a worker
// that finds nothing. A run that drops events is reported as an error, not timed.
constexpr std::size_t kEventsPerWorker = std::size_t{1} << 20;

// "<workload>_recorded/<contender>": `run(pool)` timed, with a fresh recorder and pool each time.
template <typename Pool, typename Run>
void register_recorded(const std::string& workload, const std::string& contender,
                       std::uint64_t tasks, Run run) {
    benchmark::RegisterBenchmark(
        (workload + "_recorded/" + contender).c_str(),
        [tasks, run](benchmark::State& state) {
            const std::size_t workers = bench_workers();
            std::uint64_t events = 0;
            for (auto _ : state) {
                trace::Recorder recorder(workers, kEventsPerWorker);
                trace::install(&recorder);
                {
                    Pool pool(workers);
                    const auto start = std::chrono::steady_clock::now();
                    run(pool);
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
            state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(tasks));
        })
        ->Unit(benchmark::kMillisecond)
        ->UseManualTime();
}

// The imbalanced workload's unit of work as a fixed number of kernel iterations, not calibrated
// (iterations_for) as the benchmarks do: the two builds run in separate processes and would
// each calibrate their own, and do different work. 1,892 is 2.67 us where it was measured.
constexpr std::uint64_t kImbalancedUnitIterations = 1'892;

// The spawn tree, whose tasks are the smallest (tens of ns: the overhead's worst case), and the
// imbalanced workload, whose tasks take about 5 us on average.
template <typename Pool>
void register_recorded_workloads(const std::string& contender) {
    register_recorded<Pool>("spawn_tree", contender, spawn_tree_tasks(kTreeDepth),
                            [](Pool& pool) { spawn_tree(pool, kTreeDepth); });
    register_recorded<Pool>("imbalanced", contender, kImbalancedTasks, [](Pool& pool) {
        imbalanced_from_one(pool, kImbalancedTasks, kImbalancedUnitIterations);
    });
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
    register_recorded_workloads<lesson03::ThreadPool>("lesson03");
    register_recorded_workloads<lesson07::ThreadPool>("lesson07");
    register_event_costs();
}

}  // namespace ws::bench
