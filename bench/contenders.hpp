// Registers the standard workloads (ws/bench/workloads.hpp) for one contender, so every
// benchmark binary — a lesson's and the tour — measures every contender the same way.
//
// Benchmark names are "<workload>/<contender>", e.g. "spawn_tree/lesson01"; the workshop tool
// groups them by workload and prints each contender's time as a ratio to the others.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <ws/bench/kernel.hpp>
#include <ws/bench/workloads.hpp>
#include <ws/pool.hpp>
#include <ws/stats.hpp>

namespace ws::bench {

// The workload sizes, the same for everyone.
inline constexpr std::uint64_t kFlatTasks = 1'000'000;
inline constexpr unsigned kTreeDepth = 17;  // 262,143 tasks
inline constexpr std::uint64_t kImbalancedTasks = 20'000;
// Every 8th imbalanced task spins 8 units, the others 1: a mean of 15/8 units = 5 us.
inline constexpr std::chrono::nanoseconds kImbalancedUnit{2'667};
inline constexpr std::uint64_t kFibN = 30;  // 1,346,268 joins, no cutoff
inline constexpr std::uint64_t kReduceN = 10'000'000;
inline constexpr std::uint64_t kReduceGrain = 16'384;  // ~34 us of sqrt_sum per chunk
inline constexpr std::chrono::milliseconds kIdleWindow{1000};
inline constexpr std::chrono::milliseconds kIdleBeforeWake{300};

// The median of a run's samples (the upper one of an even count; 0 without samples).
inline double median(std::vector<double> samples) {
    if (samples.empty()) return 0;
    const auto middle = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
    std::nth_element(samples.begin(), middle, samples.end());
    return *middle;
}

// Workers for every pool: one per core.
inline std::size_t bench_workers() {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 2 : n;
}

// The steal counters of a pool that reports ws::PoolStats, per timed run: built before the timed
// loop, report() after it adds them to the benchmark's counters ("steals", "steal_attempts",
// "stolen_tasks" per run, and "tasks_per_steal"). Contenders without stats() report nothing.
//
// A contender with stats() is one of the lessons' pools, and it must keep the whole pool
// contract: read() checks ws::Pool<E> at compile time. Every contender of the standard workloads
// comes through here (register_pool_workloads), so each benchmark binary checks the pools it
// measures: bench_lessonNN its lessons', ws_tour those of lessons 01 to 08. The peers
// (sequential code, oneTBB) and lesson 00's SerialExecutor have no stats(): executors, not pools.
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
    static constexpr bool kHasStats = requires(const E& e) { e.stats(); };
    static PoolStats read(const E& exec) {
        if constexpr (kHasStats) {
            static_assert(ws::Pool<E>,
                          "a contender with stats() is a lesson's pool: it must model ws::Pool "
                          "(<ws/pool.hpp>)");
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

// The "wake" row alone (register_idle_measures, below): `wake()` -> std::chrono::nanoseconds.
template <typename Wake>
void register_wake_measure(const std::string& contender, Wake wake) {
    benchmark::RegisterBenchmark(
        ("wake/" + contender).c_str(),
        [wake](benchmark::State& state) {
            for (auto _ : state)
                state.SetIterationTime(std::chrono::duration<double>(wake()).count());
        })
        ->Unit(benchmark::kMicrosecond)
        ->UseManualTime()
        ->Iterations(1)
        ->Repetitions(9);  // one wake-up per repetition: the median ignores the odd slow one
}

// Idle CPU and wake-up latency, measured by `idle()` -> seconds of CPU per second (see
// idle_cpu_after) and `wake()` -> std::chrono::nanoseconds. Both report through manual time,
// so the table shows them as times: "idle_cpu" is the CPU burnt per second of idleness
// (0.4 ms = 0.4 ms of CPU per second, 0.04 % of a core), "wake" the latency after
// kIdleBeforeWake of idleness (the median of 9 wake-ups, whatever --benchmark_repetitions says).
template <typename Idle, typename Wake>
void register_idle_measures(const std::string& contender, Idle idle, Wake wake) {
    benchmark::RegisterBenchmark(("idle_cpu/" + contender).c_str(),
                                 [idle](benchmark::State& state) {
                                     for (auto _ : state)
                                         state.SetIterationTime(idle());
                                 })
        ->Unit(benchmark::kMillisecond)
        ->UseManualTime()
        ->Iterations(1);
    register_wake_measure(contender, wake);
}

// The same for a pool (spawn/wait_idle), for contenders with threads of their own (not for
// sequential code or lesson 00). `make()` as above. Register these last for every contender,
// and OpenMP's last of all: its threads spin for a while after a parallel region, which would
// be charged to whoever is measured next.
template <typename Make>
void register_idle_workloads(const std::string& contender, Make make) {
    register_idle_measures(
        contender,
        [make] {
            auto exec = make();
            return idle_cpu_per_second(*exec, kIdleWindow);
        },
        [make] {
            auto exec = make();
            return wake_latency(*exec, kIdleBeforeWake);
        });
}

// The fork-join workloads, for contenders that have a join: fib(kFibN) without cutoff and
// parallel_reduce of sqrt over kReduceN indices. `make()` returns a std::unique_ptr to an
// object with `join(a, b)` and `parallel_reduce(begin, end, grain, identity, map, reduce)`.
template <typename Make>
void register_fork_join_workloads(const std::string& contender, Make make) {
    benchmark::RegisterBenchmark(("fib/" + contender).c_str(),
                                 [make](benchmark::State& state) {
                                     auto fj = make();
                                     const auto join = [&fj](auto&& a, auto&& b) {
                                         fj->join(a, b);
                                     };
                                     for (auto _ : state) {
                                         if (fib(join, kFibN) != 832'040)
                                             state.SkipWithError("fib(30) is not 832040");
                                     }
                                     state.SetItemsProcessed(state.iterations() * fib_joins(kFibN));
                                 })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(
        ("reduce/" + contender).c_str(),
        [make](benchmark::State& state) {
            auto fj = make();
            for (auto _ : state) {
                double sum = fj->parallel_reduce(
                    std::uint64_t{0}, kReduceN, kReduceGrain, 0.0,
                    [](std::uint64_t b, std::uint64_t e) { return sqrt_sum(b, e); },
                    [](double x, double y) { return x + y; });
                benchmark::DoNotOptimize(sum);
            }
            state.SetItemsProcessed(state.iterations() * kReduceN);
        })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
}

}  // namespace ws::bench
