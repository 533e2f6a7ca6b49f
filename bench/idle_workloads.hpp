// Workloads where workers sit idle between tasks (lesson 05 on): how quickly a sleeping worker
// wakes up, and how much CPU a pool burns per task when tasks arrive one by one. Registered
// per contender like the standard workloads (contenders.hpp).
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <ws/bench/kernel.hpp>
#include <ws/futex.hpp>
#include <ws/testing/wait.hpp>

#include "contenders.hpp"  // kIdleBeforeWake: the tour's wake workload idles as long

#if defined(WS_HAVE_TBB)
#include <oneapi/tbb/task_arena.h>
#endif

namespace ws::bench {

inline constexpr int kWakeSamples = 20;  // per repetition; each one waits kIdleBeforeWake
inline constexpr std::uint64_t kTrickleTasks = 2000;
inline constexpr std::chrono::microseconds kTrickleGap{50};

// The counters of a wake-up benchmark: the median and the 99th percentile of its samples, in
// microseconds (with 20 samples the "99th percentile" is the slowest one). Returns the median
// (0 without samples).
inline double report_wake_samples(benchmark::State& state, std::vector<double> micros) {
    if (micros.empty()) return 0;
    std::sort(micros.begin(), micros.end());
    const auto n = micros.size();
    state.counters["median_us"] = micros[n / 2];
    state.counters["p99_us"] = micros[std::min(
        n - 1, static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n))) - 1)];
    return micros[n / 2];
}

// Wake-up latency: the pool idles for 300 ms (its workers are asleep by then), then one task is
// spawned from outside; the time from just before spawn() until the task starts running is the
// iteration's (manual) time. Counters: the median and the 99th percentile, in microseconds.
template <typename Make>
void register_wake_latency(const std::string& contender, Make make) {
    benchmark::RegisterBenchmark(
        ("wake_latency/" + contender).c_str(),
        [make](benchmark::State& state) {
            auto exec = make();
            std::vector<double> micros;
            for (auto _ : state) {
                const auto latency = wake_latency(*exec, kIdleBeforeWake);
                state.SetIterationTime(std::chrono::duration<double>(latency).count());
                micros.push_back(std::chrono::duration<double, std::micro>(latency).count());
            }
            report_wake_samples(state, std::move(micros));
        })
        ->UseManualTime()
        ->Iterations(kWakeSamples)
        ->Unit(benchmark::kMicrosecond);
}

// The floor under wake_latency: no pool, only the operating system's part of a wake-up. One
// thread sleeps in ws::futex_wait on a word of its own; after the same 300 ms the caller changes
// the word and calls ws::futex_wake, and the time from just before that to the thread running is
// the iteration's time, waited for and counted as in wake_latency(). No pool can wake a worker
// faster than this on the same machine (on a VM it includes waking a halted virtual CPU).
// `medians_us`, if given, receives each run's median, for a later benchmark of the same run to
// compare with (lesson 09's ping-pong).
inline void register_wake_floor(std::vector<double>* medians_us = nullptr) {
    benchmark::RegisterBenchmark(
        "wake_latency/futex_floor",
        [medians_us](benchmark::State& state) {
            using Clock = std::chrono::steady_clock;
            std::atomic<std::uint32_t> round{0};  // the futex word: bumped once per wake-up
            std::atomic<bool> quit{false};
            std::atomic<Clock::rep> started{0};
            std::thread sleeper([&] {
                std::uint32_t seen = 0;
                for (;;) {
                    std::uint32_t now_round = 0;
                    // acquire: pairs with the caller's release increment, which comes after its
                    // reset of `started` (and its store of `quit`).
                    while ((now_round = round.load(std::memory_order_acquire)) == seen)
                        ws::futex_wait(round, seen);
                    seen = now_round;
                    if (quit.load(std::memory_order_relaxed)) return;
                    // release: the caller's acquire load sees the timestamp.
                    started.store(Clock::now().time_since_epoch().count(),
                                  std::memory_order_release);
                    started.notify_one();
                }
            });
            // One wake-up: returns the time from just before the wake to the sleeper running.
            const auto wake = [&] {
                started.store(0, std::memory_order_relaxed);  // published by the increment
                const auto t0 = Clock::now();
                round.fetch_add(1, std::memory_order_release);
                ws::futex_wake(round, 1);
                Clock::rep at = 0;
                while ((at = started.load(std::memory_order_acquire)) == 0)
                    started.wait(0, std::memory_order_acquire);
                return Clock::duration(at) - t0.time_since_epoch();
            };
            wake();  // a first round trip, like the pools' warm-up: first touches do not count
            std::vector<double> micros;
            for (auto _ : state) {
                std::this_thread::sleep_for(kIdleBeforeWake);
                const auto latency = wake();
                state.SetIterationTime(std::chrono::duration<double>(latency).count());
                micros.push_back(std::chrono::duration<double, std::micro>(latency).count());
            }
            quit.store(true, std::memory_order_relaxed);  // published by the increment
            round.fetch_add(1, std::memory_order_release);
            ws::futex_wake(round, 1);
            sleeper.join();
            const double median = report_wake_samples(state, std::move(micros));
            if (medians_us != nullptr) medians_us->push_back(median);
        })
        ->UseManualTime()
        ->Iterations(kWakeSamples)
        ->Unit(benchmark::kMicrosecond);
}

// CPU per task when tasks trickle in: one task from outside every ~50 us, 2000 of them. The
// iteration's (manual) time is the CPU time the whole process used, so the table compares CPU,
// not wall time; counter: CPU microseconds per task. A pool that spins or polls while idle pays
// for every gap; a parked pool pays for the wake-ups.
template <typename Make>
void register_trickle_cpu(const std::string& contender, Make make) {
    benchmark::RegisterBenchmark(
        ("trickle_cpu/" + contender).c_str(),
        [make](benchmark::State& state) {
            auto exec = make();
            exec->spawn([] {});
            exec->wait_idle();
            double total = 0;
            std::uint64_t wakeups0 = 0;
            if constexpr (requires { exec->stats().wakeups; }) wakeups0 = exec->stats().wakeups;
            for (auto _ : state) {
                const double c0 = ws::testing::process_cpu_seconds();
                for (std::uint64_t i = 0; i < kTrickleTasks; ++i) {
                    exec->spawn([] { tiny_work(); });
                    std::this_thread::sleep_for(kTrickleGap);
                }
                exec->wait_idle();
                const double used = ws::testing::process_cpu_seconds() - c0;
                total += used;
                state.SetIterationTime(used);
            }
            const auto tasks = static_cast<double>(state.iterations() * kTrickleTasks);
            state.counters["cpu_us_per_task"] = total * 1e6 / tasks;
            if constexpr (requires { exec->stats().wakeups; }) {
                state.counters["wakeups_per_task"] =
                    static_cast<double>(exec->stats().wakeups - wakeups0) / tasks;
            }
        })
        ->UseManualTime()
        ->Iterations(3)
        ->Unit(benchmark::kMillisecond);
}

// Outside-spawn throughput: `producers` threads each spawn `per_producer` tiny tasks from
// outside the pool at once; one iteration ends when all have run.
inline constexpr std::uint64_t kInjectTasks = 400'000;  // in total, split among the producers

template <typename Make>
void register_outside_spawn(const std::string& contender, Make make, unsigned producers) {
    benchmark::RegisterBenchmark(
        ("outside_spawn_" + std::to_string(producers) + "p/" + contender).c_str(),
        [make, producers](benchmark::State& state) {
            auto exec = make();
            const std::uint64_t per_producer = kInjectTasks / producers;
            for (auto _ : state) {
                std::atomic<bool> go{false};
                std::vector<std::thread> threads;
                for (unsigned p = 0; p < producers; ++p) {
                    threads.emplace_back([&] {
                        // acquire/release: only a starting gun (the producers start together);
                        // the pool's own synchronisation publishes the tasks.
                        while (!go.load(std::memory_order_acquire))
                            std::this_thread::yield();
                        for (std::uint64_t i = 0; i < per_producer; ++i)
                            exec->spawn([] { tiny_work(); });
                    });
                }
                go.store(true, std::memory_order_release);
                for (auto& t : threads)
                    t.join();
                exec->wait_idle();
            }
            state.SetItemsProcessed(state.iterations() * per_producer * producers);
        })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
}

#if defined(WS_HAVE_TBB)
// oneTBB for the wake-up and trickle workloads: a task_arena of our worker count with no slot
// reserved for the main thread, fed with enqueue() (fire and forget), so every task is run by
// one of TBB's worker threads, which sleep when idle, like ours.
class TbbArena {
  public:
    explicit TbbArena(int workers) : arena_(workers, 0) {}
    template <typename F>
    void spawn(F f) {
        // relaxed: the decrement's release publishes the task's effects; this only counts.
        pending_.fetch_add(1, std::memory_order_relaxed);
        arena_.enqueue([this, f = std::move(f)] {
            f();
            // release: pairs with the acquire loads in wait_idle().
            if (pending_.fetch_sub(1, std::memory_order_release) == 1) pending_.notify_all();
        });
    }
    // Sleeps (a futex wait, like our pools' condition variable) until every task has run.
    void wait_idle() {
        for (int v; (v = pending_.load(std::memory_order_acquire)) != 0;)
            pending_.wait(v, std::memory_order_acquire);
    }

  private:
    oneapi::tbb::task_arena arena_;
    std::atomic<int> pending_{0};
};
#endif

}  // namespace ws::bench
