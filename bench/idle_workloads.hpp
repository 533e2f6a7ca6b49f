// Workloads where workers sit idle between tasks (lesson 05 on): how quickly a sleeping worker
// wakes up, and how much CPU a pool burns per task when tasks arrive one by one. Registered
// per contender like the standard workloads (contenders.hpp).
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
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
// thread sleeps in ws::futex_wait on a word of its own; wake_after() waits as long as
// wake_latency() idles, then changes the word and calls ws::futex_wake, and returns the time from
// just before that to the thread running, waited for and counted as in wake_latency(). No pool
// can wake a worker faster than this on the same machine (on a VM it includes waking a halted
// virtual CPU, or, where the host packs threads onto busy ones, waiting for the waker's).
class FutexSleeper {
  public:
    using Clock = std::chrono::steady_clock;

    FutexSleeper() : sleeper_([this] { sleep_loop(); }) {
        wake();  // a first round trip, like the pools' warm-up: first touches do not count
    }
    FutexSleeper(const FutexSleeper&) = delete;
    FutexSleeper& operator=(const FutexSleeper&) = delete;
    ~FutexSleeper() {
        quit_.store(true, std::memory_order_relaxed);  // published by the increment
        round_.fetch_add(1, std::memory_order_release);
        ws::futex_wake(round_, 1);
        sleeper_.join();
    }

    std::chrono::nanoseconds wake_after(std::chrono::milliseconds idle) {
        std::this_thread::sleep_for(idle);
        return wake();
    }

  private:
    void sleep_loop() {
        std::uint32_t seen = 0;
        for (;;) {
            std::uint32_t now_round = 0;
            // acquire: pairs with the caller's release increment, which comes after its reset
            // of `started_` (and its store of `quit_`).
            while ((now_round = round_.load(std::memory_order_acquire)) == seen)
                ws::futex_wait(round_, seen);
            seen = now_round;
            if (quit_.load(std::memory_order_relaxed)) return;
            // release: the caller's acquire load sees the timestamp.
            started_.store(Clock::now().time_since_epoch().count(), std::memory_order_release);
            started_.notify_one();
        }
    }

    // One wake-up: the time from just before the wake to the sleeper running.
    std::chrono::nanoseconds wake() {
        started_.store(0, std::memory_order_relaxed);  // published by the increment
        const auto t0 = Clock::now();
        round_.fetch_add(1, std::memory_order_release);
        ws::futex_wake(round_, 1);
        Clock::rep at = 0;
        while ((at = started_.load(std::memory_order_acquire)) == 0)
            started_.wait(0, std::memory_order_acquire);
        return Clock::duration(at) - t0.time_since_epoch();
    }

    std::atomic<std::uint32_t> round_{0};  // the futex word: bumped once per wake-up
    std::atomic<bool> quit_{false};
    std::atomic<Clock::rep> started_{0};
    std::thread sleeper_;  // last: it starts once the words above exist
};

// The floor as a benchmark of its own: kWakeSamples wake-ups of a FutexSleeper. `medians_us`, if
// given, receives each run's median, for a later benchmark of the same run to compare with
// (lesson 09's ping-pong).
inline void register_wake_floor(std::vector<double>* medians_us = nullptr) {
    benchmark::RegisterBenchmark(
        "wake_latency/futex_floor",
        [medians_us](benchmark::State& state) {
            FutexSleeper floor;
            std::vector<double> micros;
            for (auto _ : state) {
                const auto latency = floor.wake_after(kIdleBeforeWake);
                state.SetIterationTime(std::chrono::duration<double>(latency).count());
                micros.push_back(std::chrono::duration<double, std::micro>(latency).count());
            }
            const double middle = report_wake_samples(state, std::move(micros));
            if (medians_us != nullptr) medians_us->push_back(middle);
        })
        ->UseManualTime()
        ->Iterations(kWakeSamples)
        ->Unit(benchmark::kMicrosecond);
}

// One pool's wake-ups for register_wake_against_floor: a call makes the pool (outside the timed
// rounds) and returns a function that measures one wake_latency() of it after kIdleBeforeWake.
using WakeOnce = std::function<std::chrono::nanoseconds()>;
template <typename Make>
std::function<WakeOnce()> pool_wakes(Make make) {
    return [make] {
        std::shared_ptr exec = make();
        return WakeOnce([exec] { return wake_latency(*exec, kIdleBeforeWake); });
    };
}

// A thread of its own for one contender's wake-ups in register_wake_against_floor: a pool may
// keep state for each thread that spawns into it from outside (lesson 07 caches task nodes per
// outside thread, for one pool at a time), and contenders taking turns on one thread would evict
// each other's. run() hands the thread one measurement and sleeps until it returns.
class CallerThread {
  public:
    CallerThread() : thread_([this] { serve(); }) {}
    CallerThread(const CallerThread&) = delete;
    CallerThread& operator=(const CallerThread&) = delete;
    ~CallerThread() {
        {
            std::lock_guard lock(mutex_);
            quit_ = true;
        }
        changed_.notify_all();
        thread_.join();
    }

    std::chrono::nanoseconds run(const WakeOnce& measure) {
        std::unique_lock lock(mutex_);
        job_ = &measure;
        done_ = false;
        changed_.notify_all();
        changed_.wait(lock, [this] { return done_; });
        return result_;
    }

  private:
    void serve() {
        std::unique_lock lock(mutex_);
        for (;;) {
            changed_.wait(lock, [this] { return quit_ || job_ != nullptr; });
            if (quit_) return;
            const WakeOnce* measure = std::exchange(job_, nullptr);
            lock.unlock();
            const auto latency = (*measure)();
            lock.lock();
            result_ = latency;
            done_ = true;
            changed_.notify_all();
        }
    }

    std::mutex mutex_;
    std::condition_variable changed_;
    const WakeOnce* job_ = nullptr;  // guarded by mutex_, like the three below
    bool done_ = false;
    bool quit_ = false;
    std::chrono::nanoseconds result_{};
    std::thread thread_;  // last: it starts once the members above exist
};

// Wake-up latency against its floor, in one run: kWakeSamples rounds, in each of which every
// pool and the bare futex wake-up (FutexSleeper) are woken once after kIdleBeforeWake, each
// round in a rotated order, each contender from an outside thread of its own (CallerThread).
// Separate rows measure one contender for 6 s and then the next, and on a shared or virtual
// machine a slow spell can fall on one of them alone; interleaved, it falls on all. `pools`: {name,
// pool_wakes(make)} pairs; the row is "wake_vs_floor/<last name>", its time the last pool's
// latency. Counters: each pool's median in microseconds
// ("<name>_us"), the floor's ("futex_floor_us"), and each pool's median over the floor's
// ("<name>_x_floor"; lesson 05's goal is at most 1.2).
inline void register_wake_against_floor(
    std::vector<std::pair<std::string, std::function<WakeOnce()>>> pools) {
    benchmark::RegisterBenchmark(
        ("wake_vs_floor/" + pools.back().first).c_str(),
        [pools](benchmark::State& state) {
            std::vector<WakeOnce> wakes;
            for (const auto& [name, make] : pools)
                wakes.push_back(make());
            FutexSleeper floor;
            wakes.emplace_back([&floor] { return floor.wake_after(kIdleBeforeWake); });
            const std::size_t n = wakes.size();  // the last one is the floor
            std::vector<std::unique_ptr<CallerThread>> callers;
            for (std::size_t i = 0; i < n; ++i)
                callers.push_back(std::make_unique<CallerThread>());
            std::vector<std::vector<double>> micros(n);
            std::size_t round = 0;
            for (auto _ : state) {
                for (std::size_t k = 0; k < n; ++k) {
                    const std::size_t i = (round + k) % n;
                    micros[i].push_back(
                        std::chrono::duration<double, std::micro>(callers[i]->run(wakes[i]))
                            .count());
                }
                ++round;
                state.SetIterationTime(micros[n - 2].back() * 1e-6);  // the last pool's
            }
            const double floor_us = median(micros[n - 1]);
            state.counters["futex_floor_us"] = floor_us;
            for (std::size_t i = 0; i + 1 < n; ++i) {
                const double us = median(micros[i]);
                state.counters[pools[i].first + "_us"] = us;
                if (floor_us > 0) state.counters[pools[i].first + "_x_floor"] = us / floor_us;
            }
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
