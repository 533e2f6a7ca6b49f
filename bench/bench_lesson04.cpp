// Lesson 04: the Chase-Lev deque on its own, and the pool built on it against lesson 03's
// (the standard workloads: flat_spawn, spawn_tree, imbalanced).
//
// owner_push_pop: one push and one pop by the owner, with a few items below them (the owner's
//   everyday path: no CAS). Its contender "floor" is a loop doing one seq_cst store per pair,
//   the least a correct pop can cost (it needs one store-load ordered operation): the
//   deque's pair should stay within 1.2x of it.
//   Its contender "fence_based" is the owner's half of the textbook version (relaxed accesses
//   and a standalone seq_cst fence in pop), which lesson 04 does not use: g++ compiles that
//   fence to `lock or`, clang 14 to `mfence`.
// owner_push_pop_last: the same on an otherwise empty deque, so every pop takes the last item
//   with a CAS (two locked instructions a pair).
// <pattern>/lesson04_vs_floor: lesson 04's ChaseLevDeque<Payload*> against FloorChaseLev
//   (floor_chase_lev.hpp, the smallest correct Chase-Lev of pointers) in three owner patterns:
//   owner_alternating_empty (push, pop on an otherwise empty deque: every pop takes the last
//   item), owner_burst_256 (256 pushes, then 256 pops) and owner_alternating_16_below (push, pop
//   with 16 items below: no CAS). The two deques take turns in blocks of kPairsPerBlock pairs
//   in one process; the counters are per push+pop pair: lesson04_ns and floor_ns (medians of
//   the blocks) and ratio (the median of the ratios of neighbouring blocks), robust against a
//   block that another process preempted. The goal is ratio <= 1.2 under g++ and clang:
//   bench/owner_path.sh builds and runs both, and shows the generated code.
// steal_1_thief: one thief steals a batch of 4096 items the owner pushed (the owner waits):
//   the thief's CPU time per batch; items_per_second is steals per second.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "03_steal_half/thread_pool.hpp"
#include "04_chase_lev/chase_lev_deque.hpp"
#include "04_chase_lev/thread_pool.hpp"
#include "contenders.hpp"
#include "floor_chase_lev.hpp"

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
        if (auto item = d.pop()) sum += *item;
    }
    const std::uint64_t result = sum;  // only a copy escapes: sum itself stays in a register
    benchmark::DoNotOptimize(result);
    state.SetItemsProcessed(state.iterations());
}

// The owner's side of the fence-based Chase-Lev deque (Le et al., 2013), only as far as this
// comparison needs it: fixed capacity, no growth, no thieves.
class FenceBasedOwnerSide {
  public:
    void push(std::uint64_t item) {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed);
        slots_[static_cast<std::size_t>(b & kMask)].store(item, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);
        bottom_.store(b + 1, std::memory_order_relaxed);
    }
    std::optional<std::uint64_t> pop() {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
        bottom_.store(b, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        std::int64_t t = top_.load(std::memory_order_relaxed);
        if (t > b) {
            bottom_.store(b + 1, std::memory_order_relaxed);
            return std::nullopt;
        }
        const std::uint64_t item =
            slots_[static_cast<std::size_t>(b & kMask)].load(std::memory_order_relaxed);
        if (t < b) return item;
        const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                                      std::memory_order_relaxed);
        bottom_.store(b + 1, std::memory_order_relaxed);
        if (!won) return std::nullopt;
        return item;
    }

  private:
    static constexpr std::int64_t kMask = 63;
    alignas(64) std::atomic<std::int64_t> top_{0};
    alignas(64) std::atomic<std::int64_t> bottom_{0};
    std::atomic<std::uint64_t> slots_[kMask + 1]{};
};

void fence_based_push_pop(benchmark::State& state) {
    auto d = std::make_unique<FenceBasedOwnerSide>();
    for (std::uint64_t i = 0; i < 16; ++i)
        d->push(i);
    std::uint64_t x = 0, sum = 0;
    for (auto _ : state) {
        d->push(++x);
        if (auto item = d->pop()) sum += *item;
    }
    const std::uint64_t result = sum;  // only a copy escapes: sum itself stays in a register
    benchmark::DoNotOptimize(result);
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

// What the owner pushes in the lesson-against-floor patterns: pointers, as a pool's Task*.
struct Payload {
    std::uint64_t value;
};

std::uint64_t value_of(const Payload* p) {
    return p != nullptr ? p->value : 0;
}
std::uint64_t value_of(const std::optional<Payload*>& p) {
    return p ? (*p)->value : 0;
}

// The patterns, one noinline kernel each for both deques: each compiler decides for itself
// whether to inline a deque's push and pop into it, as it would in a pool's worker loop.
template <typename Deque>
[[gnu::noinline]] std::uint64_t push_pop_pairs(Deque& d, Payload* items, int pairs) {
    std::uint64_t sum = 0;
    for (int i = 0; i < pairs; ++i) {
        d.push(&items[i & 255]);
        sum += value_of(d.pop());
    }
    return sum;
}

template <typename Deque>
[[gnu::noinline]] std::uint64_t bursts_of_256(Deque& d, Payload* items, int pairs) {
    std::uint64_t sum = 0;
    for (int done = 0; done < pairs; done += 256) {
        for (int i = 0; i < 256; ++i)
            d.push(&items[i]);
        for (int i = 0; i < 256; ++i)
            sum += value_of(d.pop());
    }
    return sum;
}

enum class OwnerPattern { alternating_empty, burst_256, alternating_16_below };

template <typename Deque>
std::uint64_t run_pattern(OwnerPattern pattern, Deque& d, Payload* items, int pairs) {
    return pattern == OwnerPattern::burst_256 ? bursts_of_256(d, items, pairs)
                                              : push_pop_pairs(d, items, pairs);
}

void lesson04_vs_floor(benchmark::State& state, OwnerPattern pattern) {
    constexpr int kPairsPerBlock = 2048;  // a multiple of 256; some 20-50 us a block
    static Payload items[256];
    for (std::uint64_t i = 0; i < 256; ++i)
        items[i].value = i + 1;
    lesson04::ChaseLevDeque<Payload*> lesson(64);
    auto floor = std::make_unique<FloorChaseLev<Payload>>();
    if (pattern == OwnerPattern::alternating_16_below) {
        for (std::uint64_t i = 0; i < 16; ++i) {
            lesson.push(&items[i]);
            floor->push(&items[i]);
        }
    }
    std::uint64_t sum = run_pattern(pattern, lesson, items, kPairsPerBlock) +
                        run_pattern(pattern, *floor, items, kPairsPerBlock);  // warm up, grow
    using Clock = std::chrono::steady_clock;
    const auto seconds_of = [&](auto& deque) {
        const auto start = Clock::now();
        sum += run_pattern(pattern, deque, items, kPairsPerBlock);
        return std::chrono::duration<double>(Clock::now() - start).count();
    };
    std::vector<double> lesson_s, floor_s, ratios;
    const auto expected = static_cast<std::size_t>(state.max_iterations);
    lesson_s.reserve(expected);
    floor_s.reserve(expected);
    ratios.reserve(expected);
    bool lesson_first = true;  // alternate which goes first, so neither always follows the other
    for (auto _ : state) {
        double l = 0, f = 0;
        if (lesson_first) {
            l = seconds_of(lesson);
            f = seconds_of(*floor);
        } else {
            f = seconds_of(*floor);
            l = seconds_of(lesson);
        }
        lesson_first = !lesson_first;
        lesson_s.push_back(l);
        floor_s.push_back(f);
        ratios.push_back(l / f);
    }
    benchmark::DoNotOptimize(sum);
    const double per_pair_ns = 1e9 / kPairsPerBlock;
    state.counters["lesson04_ns"] = median(lesson_s) * per_pair_ns;
    state.counters["floor_ns"] = median(floor_s) * per_pair_ns;
    state.counters["ratio"] = median(ratios);
}

// CPU time of the calling thread, in seconds.
double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The owner pushes kBatch items while the thief waits, then the thief steals them all. The
// iteration's (manual) time is the CPU time the thief spent stealing them, so that a thief
// preempted by other work on a busy machine does not count the time it was not running.
void steal_one_thief(benchmark::State& state) {
    constexpr std::uint64_t kBatch = 4096;
    Deque d(kBatch);
    std::atomic<std::uint64_t> go{0}, done{0};
    std::atomic<double> thief_seconds{0};
    std::atomic<bool> stop{false};
    std::thread thief([&] {
        for (std::uint64_t round = 1;; ++round) {
            while (go.load(std::memory_order_acquire) < round) {
                if (stop.load(std::memory_order_relaxed)) return;
            }
            const double start = thread_cpu_seconds();
            std::uint64_t got = 0, sum = 0;
            while (got < kBatch) {
                auto s = d.steal();
                if (s.is_success()) {
                    sum += s.value();
                    ++got;
                }
            }
            benchmark::DoNotOptimize(sum);
            thief_seconds.store(thread_cpu_seconds() - start, std::memory_order_relaxed);
            done.store(round, std::memory_order_release);
        }
    });
    std::uint64_t round = 0;
    for (auto _ : state) {
        for (std::uint64_t i = 0; i < kBatch; ++i)
            d.push(i);
        go.store(++round, std::memory_order_release);
        while (done.load(std::memory_order_acquire) < round) {
        }
        state.SetIterationTime(thief_seconds.load(std::memory_order_relaxed));
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
    benchmark::RegisterBenchmark("owner_push_pop/fence_based", fence_based_push_pop);
    benchmark::RegisterBenchmark("owner_push_pop_last/lesson04",
                                 [](benchmark::State& s) { owner_push_pop(s, 0); });
    benchmark::RegisterBenchmark("steal_1_thief/lesson04", steal_one_thief)->UseManualTime();
    benchmark::RegisterBenchmark(
        "owner_alternating_empty/lesson04_vs_floor",
        [](benchmark::State& s) { lesson04_vs_floor(s, OwnerPattern::alternating_empty); });
    benchmark::RegisterBenchmark("owner_burst_256/lesson04_vs_floor", [](benchmark::State& s) {
        lesson04_vs_floor(s, OwnerPattern::burst_256);
    });
    benchmark::RegisterBenchmark(
        "owner_alternating_16_below/lesson04_vs_floor",
        [](benchmark::State& s) { lesson04_vs_floor(s, OwnerPattern::alternating_16_below); });

    register_pool_workloads("lesson03",
                            [] { return std::make_unique<lesson03::ThreadPool>(bench_workers()); });
    register_pool_workloads("lesson04",
                            [] { return std::make_unique<lesson04::ThreadPool>(bench_workers()); });
}

}  // namespace ws::bench
