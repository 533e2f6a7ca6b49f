// Registers the standard workloads (ws/bench/workloads.hpp) for one contender, so every
// benchmark binary — a lesson's and the tour — measures every contender the same way.
//
// Benchmark names are "<workload>/<contender>", e.g. "spawn_tree/lesson01"; the workshop tool
// groups them by workload and prints each contender's time as a ratio to the others.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include <ws/bench/kernel.hpp>
#include <ws/bench/workloads.hpp>

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

// `make()` returns a std::unique_ptr to a fresh executor (spawn + wait_idle); one executor is
// built per benchmark, outside the timed loop.
template <typename Make>
void register_pool_workloads(const std::string& contender, Make make) {
    benchmark::RegisterBenchmark(("flat_spawn/" + contender).c_str(),
                                 [make](benchmark::State& state) {
                                     auto exec = make();
                                     for (auto _ : state)
                                         flat_spawn(*exec, kFlatTasks);
                                     state.SetItemsProcessed(state.iterations() * kFlatTasks);
                                 })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(
        ("spawn_tree/" + contender).c_str(),
        [make](benchmark::State& state) {
            auto exec = make();
            for (auto _ : state)
                spawn_tree(*exec, kTreeDepth);
            state.SetItemsProcessed(state.iterations() * spawn_tree_tasks(kTreeDepth));
        })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("imbalanced/" + contender).c_str(),
                                 [make](benchmark::State& state) {
                                     auto exec = make();
                                     const auto unit = iterations_for(kImbalancedUnit);
                                     for (auto _ : state) {
                                         imbalanced_from_one(*exec, kImbalancedTasks, unit);
                                     }
                                     state.SetItemsProcessed(state.iterations() * kImbalancedTasks);
                                 })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
}

}  // namespace ws::bench
