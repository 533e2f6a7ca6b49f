// Lesson 04: the Chase-Lev deque on its own, and the pool built on it against lesson 03's
// (the standard workloads: flat_spawn, spawn_tree, imbalanced).
//
// owner_push_pop: one push and one pop by the owner, with a few items below them (the owner's
//   everyday path: no CAS). Its contender "floor" is a loop doing one seq_cst store per pair,
//   the least a correct pop can cost (it needs one store-load ordered operation): the
//   deque's pair should stay within 1.2x of it.
// owner_push_pop_last: the same on an otherwise empty deque, so every pop takes the last item
//   with a CAS (two locked instructions a pair).
// steal_1_thief: one thief steals a batch of items the owner pushed; time per stolen item.
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include "03_steal_half/thread_pool.hpp"
#include "04_chase_lev/chase_lev_deque.hpp"
#include "04_chase_lev/thread_pool.hpp"
#include "contenders.hpp"

namespace ws::bench {
namespace {

using Deque = lesson04::ChaseLevDeque<std::uint64_t>;

void owner_push_pop(benchmark::State& state, std::uint64_t items_below) {
    Deque d(64);
    for (std::uint64_t i = 0; i < items_below; ++i)
        d.push(i);
    std::uint64_t x = 0, sum = 0;
    for (auto _ : state) {
        d.push(++x);
        if (auto item = d.pop()) sum += *item;  // kept in a register: no store of our own
    }
    benchmark::DoNotOptimize(sum);
    state.SetItemsProcessed(state.iterations());
}

void floor_seq_cst_store(benchmark::State& state) {
    alignas(64) std::atomic<std::int64_t> bottom{0};
    benchmark::DoNotOptimize(&bottom);  // it escapes: the stores cannot be optimised away
    std::int64_t x = 0;
    for (auto _ : state)
        bottom.store(++x, std::memory_order_seq_cst);
    benchmark::DoNotOptimize(bottom.load(std::memory_order_relaxed));
    state.SetItemsProcessed(state.iterations());
}

// The owner pushes kBatch items while the thief waits, then the thief steals them all; the
// time from "go" to "all stolen" is the iteration's (manual) time.
void steal_one_thief(benchmark::State& state) {
    constexpr std::uint64_t kBatch = 4096;
    Deque d(kBatch);
    std::atomic<std::uint64_t> go{0}, done{0};
    std::atomic<bool> stop{false};
    std::thread thief([&] {
        for (std::uint64_t round = 1;; ++round) {
            while (go.load(std::memory_order_acquire) < round) {
                if (stop.load(std::memory_order_relaxed)) return;
            }
            std::uint64_t got = 0, sum = 0;
            while (got < kBatch) {
                auto s = d.steal();
                if (s.is_success()) {
                    sum += s.value();
                    ++got;
                }
            }
            benchmark::DoNotOptimize(sum);
            done.store(round, std::memory_order_release);
        }
    });
    std::uint64_t round = 0;
    for (auto _ : state) {
        for (std::uint64_t i = 0; i < kBatch; ++i)
            d.push(i);
        ++round;
        const auto start = std::chrono::steady_clock::now();
        go.store(round, std::memory_order_release);
        while (done.load(std::memory_order_acquire) < round) {
        }
        const auto end = std::chrono::steady_clock::now();
        state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    }
    stop.store(true);
    thief.join();
    state.SetItemsProcessed(state.iterations() * kBatch);
}

}  // namespace

void register_benchmarks() {
    benchmark::RegisterBenchmark("owner_push_pop/lesson04",
                                 [](benchmark::State& s) { owner_push_pop(s, 16); });
    benchmark::RegisterBenchmark("owner_push_pop/floor", floor_seq_cst_store);
    benchmark::RegisterBenchmark("owner_push_pop_last/lesson04",
                                 [](benchmark::State& s) { owner_push_pop(s, 0); });
    benchmark::RegisterBenchmark("steal_1_thief/lesson04", steal_one_thief)->UseManualTime();

    register_pool_workloads("lesson03",
                            [] { return std::make_unique<lesson03::ThreadPool>(bench_workers()); });
    register_pool_workloads("lesson04",
                            [] { return std::make_unique<lesson04::ThreadPool>(bench_workers()); });
}

}  // namespace ws::bench
