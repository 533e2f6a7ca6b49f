// Registers the standard workloads (ws/bench/workloads.hpp) for one contender, so every
// benchmark binary — a lesson's and the tour — measures every contender the same way.
//
// Benchmark names are "<workload>/<contender>", e.g. "spawn_tree/lesson01"; the workshop tool
// groups them by workload and prints each contender's time as a ratio to the others.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include <ws/bench/kernel.hpp>
#include <ws/bench/workloads.hpp>
#include <ws/stats.hpp>

namespace ws::bench {

// The workload sizes, the same for everyone.
inline constexpr std::uint64_t kFlatTasks = 1'000'000;
inline constexpr unsigned kTreeDepth = 17;  // 262,143 tasks
inline constexpr std::uint64_t kImbalancedTasks = 20'000;
inline constexpr std::chrono::microseconds kImbalancedUnit{5};

// Workers for every pool: one per core.
inline std::size_t bench_workers() {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 2 : n;
}

// The steal counters of a pool that reports ws::PoolStats, per timed run: built before the timed
// loop, report() after it adds them to the benchmark's counters ("steals", "steal_attempts",
// "stolen_tasks" per run, and "tasks_per_steal"). Contenders without stats() report nothing.
template <typename E>
class StealCounters {
  public:
    explicit StealCounters(const E& exec) : before_(read(exec)) {}

    void report(benchmark::State& state, const E& exec) const {
        if constexpr (kHasStats) {
            const PoolStats after = read(exec);
            const auto per_run = [](std::uint64_t delta) {
                return benchmark::Counter(static_cast<double>(delta),
                                          benchmark::Counter::kAvgIterations);
            };
            state.counters["steals"] = per_run(after.steals - before_.steals);
            state.counters["steal_attempts"] =
                per_run(after.steal_attempts - before_.steal_attempts);
            state.counters["stolen_tasks"] = per_run(after.stolen_tasks - before_.stolen_tasks);
            const std::uint64_t steals = after.steals - before_.steals;
            state.counters["tasks_per_steal"] =
                steals == 0 ? 0.0
                            : static_cast<double>(after.stolen_tasks - before_.stolen_tasks) /
                                  static_cast<double>(steals);
        } else {
            (void)state;
            (void)exec;
        }
    }

  private:
    static constexpr bool kHasStats = requires(const E& e) {
        { e.stats() } -> std::convertible_to<PoolStats>;
    };
    static PoolStats read(const E& exec) {
        if constexpr (kHasStats) {
            return exec.stats();
        } else {
            (void)exec;
            return {};
        }
    }

    PoolStats before_;
};

// `make()` returns a std::unique_ptr to a fresh executor (spawn + wait_idle); one executor is
// built per benchmark, outside the timed loop.
template <typename Make>
void register_pool_workloads(const std::string& contender, Make make) {
    benchmark::RegisterBenchmark(("flat_spawn/" + contender).c_str(),
                                 [make](benchmark::State& state) {
                                     auto exec = make();
                                     const StealCounters counters(*exec);
                                     for (auto _ : state)
                                         flat_spawn(*exec, kFlatTasks);
                                     state.SetItemsProcessed(state.iterations() * kFlatTasks);
                                     counters.report(state, *exec);
                                 })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(
        ("spawn_tree/" + contender).c_str(),
        [make](benchmark::State& state) {
            auto exec = make();
            const StealCounters counters(*exec);
            for (auto _ : state)
                spawn_tree(*exec, kTreeDepth);
            state.SetItemsProcessed(state.iterations() * spawn_tree_tasks(kTreeDepth));
            counters.report(state, *exec);
        })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("imbalanced/" + contender).c_str(),
                                 [make](benchmark::State& state) {
                                     auto exec = make();
                                     const auto unit = iterations_for(kImbalancedUnit);
                                     const StealCounters counters(*exec);
                                     for (auto _ : state) {
                                         imbalanced_from_one(*exec, kImbalancedTasks, unit);
                                     }
                                     state.SetItemsProcessed(state.iterations() * kImbalancedTasks);
                                     counters.report(state, *exec);
                                 })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
}

}  // namespace ws::bench
