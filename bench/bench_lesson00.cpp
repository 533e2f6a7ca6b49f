// Lesson 00: what a ws::Task costs against std::function (construct + run + destroy), inline and
// on the heap, and the serial executor on the standard workloads.
#include <benchmark/benchmark.h>

#include <array>
#include <functional>
#include <memory>

#include <ws/bench/kernel.hpp>
#include <ws/task.hpp>

#include "contenders.hpp"
#include "serial_executor.hpp"

namespace ws::bench {
namespace {

// 24 bytes of captures: inline in a Task (48 bytes), on the heap in libstdc++'s std::function
// (16 bytes of local storage).
template <typename Callable>
void construct_and_run(benchmark::State& state) {
    std::uint64_t a = 1, b = 2, c = 3;
    for (auto _ : state) {
        Callable f([a, b, c] { benchmark::DoNotOptimize(a + b + c); });
        f();
        benchmark::DoNotOptimize(f);
    }
}

// 256 bytes of captures: on the heap for both.
template <typename Callable>
void construct_and_run_large(benchmark::State& state) {
    std::array<std::uint64_t, 32> big{};
    for (auto _ : state) {
        Callable f([big] { benchmark::DoNotOptimize(big[0]); });
        f();
        benchmark::DoNotOptimize(f);
    }
}

}  // namespace

void register_benchmarks() {
    benchmark::RegisterBenchmark("task_24B/ws::Task", construct_and_run<Task>);
    benchmark::RegisterBenchmark("task_24B/std::function",
                                 construct_and_run<std::function<void()>>);
    benchmark::RegisterBenchmark("task_256B/ws::Task", construct_and_run_large<Task>);
    benchmark::RegisterBenchmark("task_256B/std::function",
                                 construct_and_run_large<std::function<void()>>);
    register_pool_workloads("lesson00",
                            [] { return std::make_unique<lesson00::SerialExecutor>(); });
}

}  // namespace ws::bench
