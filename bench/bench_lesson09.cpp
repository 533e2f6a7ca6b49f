// Lesson 09: asynchronous tasks. What a coroutine costs on the work-stealing pool.
//
//   spawn_await/...  a root coroutine on the pool spawns kSpawned empty coroutines; the last to
//                    finish releases the outside thread. Items: coroutines. Counters: heap
//                    allocations and bytes per coroutine (the frame), from this binary's
//                    counting operator new.
//   fib25/...        fib(25) with no cutoff (121,392 joins): lesson 09 by when_all of two child
//                    Tasks (a heap frame per call), lesson 07 by join (a job on the stack).
//                    Leaves are the shared fib_leaf kernel.
//   ping_pong/...    one value sent back and forth between two coroutines through two channels
//                    of capacity 1, kRounds rounds per iteration, on a pool of two workers.
//                    Items: rounds (so the time per item is one round trip). lesson09's
//                    counters: one_way_us (a hand-off: half a round trip), steals and parks
//                    per hand-off (did it cross to the other worker, through the kernel?), and
//                    one_way_vs_floor: one_way_us over the median of this run's
//                    wake_latency/futex_floor (lesson 05's floor, idle_workloads.hpp: the
//                    operating system's part of one wake-up). The goal: at most 1.5.
//   ping_pong_two_pools/lesson09  the same with ping and pong on two pools of one worker
//                    each, so that every hand-off crosses to the other thread.
//   wake_latency/futex_floor  that floor, registered first so that it runs first.
// Contenders: lesson09; lesson09_frame_pool (spawn_await and fib: the same with coroutine frames
// from per-thread free lists, see operator new below); lesson07 (fib only: it has no
// suspension); asio, Asio's thread_pool with
// C++20 awaitables (asio::co_spawn, and asio::experimental::concurrent_channel for ping-pong),
// when <asio.hpp> (Debian's libasio-dev) is found.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <semaphore>
#include <vector>

#include <ws/bench/kernel.hpp>
#include <ws/bench/workloads.hpp>

#include "07_fork_join/fork_join.hpp"
#include "07_fork_join/thread_pool.hpp"
#include "09_coroutines/async.hpp"
#include "contenders.hpp"
#include "coroutine_fib.hpp"
#include "idle_workloads.hpp"

#if __has_include(<asio.hpp>)
#define WS_HAVE_ASIO 1
#include <asio.hpp>
#include <asio/experimental/concurrent_channel.hpp>
#endif

// ---- Counting the heap: every allocation of this binary goes through here. A shard per thread
// (by a thread_local index) keeps the count from becoming a contended cache line.
namespace {

struct alignas(64) AllocShard {
    std::atomic<std::uint64_t> count{0};
    std::atomic<std::uint64_t> bytes{0};
};
constexpr std::size_t kShards = 64;
AllocShard g_alloc[kShards];
std::atomic<std::size_t> g_next_shard{0};

AllocShard& my_shard() {
    thread_local AllocShard& shard =
        g_alloc[g_next_shard.fetch_add(1, std::memory_order_relaxed) % kShards];
    return shard;
}

struct AllocTotals {
    std::uint64_t count = 0, bytes = 0;
};
AllocTotals alloc_totals() {
    AllocTotals t;
    for (const AllocShard& s : g_alloc) {
        t.count += s.count.load(std::memory_order_relaxed);
        t.bytes += s.bytes.load(std::memory_order_relaxed);
    }
    return t;
}

// ---- A frame pool, as a contender (the *_frame_pool rows): while g_pool_small is set, an
// allocation of up to kPooledMax bytes is rounded up to a multiple of kClassBytes and taken from
// the calling thread's free list of that size class; its delete puts it on the free list of the
// thread that deletes it (a frame that a thief finished goes to the thief, whose next frames
// come from there). Never given back to malloc. In fib and spawn_await every allocation is a
// coroutine frame, so this stands for what a promise_type::operator new with per-thread free
// lists would buy, without touching the lesson's code. Every block carries a header with its
// class (0: from malloc), in every row alike, so that delete knows where it goes.
constexpr std::size_t kHeader = 16;  // keeps malloc's 16-byte alignment
constexpr std::size_t kClassBytes = 64;
constexpr std::size_t kClasses = 16;
constexpr std::size_t kPooledMax = kClasses * kClassBytes;
std::atomic<bool> g_pool_small{false};

struct FreeBlock {
    FreeBlock* next;
};
thread_local FreeBlock* tl_free[kClasses + 1] = {};  // by class, 1..kClasses

void* with_header(void* block, std::size_t size_class) {
    *static_cast<std::size_t*>(block) = size_class;
    return static_cast<char*>(block) + kHeader;
}

}  // namespace

// noinline: g++ would otherwise see malloc and free across an inlined new/delete pair and warn.
[[gnu::noinline]] void* operator new(std::size_t size) {
    AllocShard& shard = my_shard();
    shard.count.fetch_add(1, std::memory_order_relaxed);
    shard.bytes.fetch_add(size, std::memory_order_relaxed);
    // relaxed: a switch the benchmark sets before it starts its pool
    if (size <= kPooledMax && g_pool_small.load(std::memory_order_relaxed)) {
        const std::size_t size_class = size == 0 ? 1 : (size + kClassBytes - 1) / kClassBytes;
        if (FreeBlock* block = tl_free[size_class]) {
            tl_free[size_class] = block->next;
            return with_header(block, size_class);
        }
        if (void* p = std::malloc(kHeader + size_class * kClassBytes))
            return with_header(p, size_class);
        throw std::bad_alloc();
    }
    if (void* p = std::malloc(kHeader + (size == 0 ? 1 : size))) return with_header(p, 0);
    throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept {
    if (p == nullptr) return;
    void* block = static_cast<char*>(p) - kHeader;
    const std::size_t size_class = *static_cast<std::size_t*>(block);
    if (size_class == 0) return std::free(block);
    auto* free_block = static_cast<FreeBlock*>(block);
    free_block->next = tl_free[size_class];
    tl_free[size_class] = free_block;
}
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept {
    operator delete(p);
}

namespace ws::bench {
namespace {

constexpr std::size_t kSpawned = 1'000'000;
constexpr std::uint64_t kFib = 25;
constexpr int kRounds = 10'000;

// Adds the heap traffic between two snapshots, per item, to the benchmark's counters.
void report_allocations(benchmark::State& state, AllocTotals before, std::uint64_t items) {
    const AllocTotals after = alloc_totals();
    const double n = static_cast<double>(items);
    state.counters["allocs_per_item"] = static_cast<double>(after.count - before.count) / n;
    state.counters["bytes_per_item"] = static_cast<double>(after.bytes - before.bytes) / n;
}

// ---- lesson 09
namespace l9 = ws::lesson09;

l9::Task<void> empty_coroutine(std::atomic<std::size_t>& left, std::binary_semaphore& done) {
    if (left.fetch_sub(1, std::memory_order_acq_rel) == 1) done.release();
    co_return;
}

l9::Task<void> spawn_all(l9::ThreadPool& pool, std::atomic<std::size_t>& left,
                         std::binary_semaphore& done) {
    for (std::size_t i = 0; i < kSpawned; ++i)
        l9::spawn(pool, empty_coroutine(left, done));
    co_return;
}

void lesson09_spawn_await(benchmark::State& state) {
    l9::ThreadPool pool(bench_workers());
    const AllocTotals before = alloc_totals();
    for (auto _ : state) {
        std::atomic<std::size_t> left{kSpawned};
        std::binary_semaphore done{0};
        l9::spawn(pool, spawn_all(pool, left, done));
        done.acquire();
        pool.wait_idle();
    }
    report_allocations(state, before, state.iterations() * kSpawned);
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kSpawned));
}

void lesson09_fib(benchmark::State& state) {
    l9::ThreadPool pool(bench_workers());
    const AllocTotals before = alloc_totals();
    for (auto _ : state)
        benchmark::DoNotOptimize(l9::sync_wait(pool, fib_by_when_all(pool, kFib)));
    report_allocations(state, before, state.iterations() * fib_joins(kFib));
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(fib_joins(kFib)));
}

l9::Task<void> ping(l9::Channel<int>& there, l9::Channel<int>& back, std::binary_semaphore& done) {
    for (int i = 0; i < kRounds; ++i) {
        co_await there.send(i);
        benchmark::DoNotOptimize(co_await back.receive());
    }
    done.release();
}

l9::Task<void> pong(l9::Channel<int>& there, l9::Channel<int>& back) {
    for (int i = 0; i < kRounds; ++i)
        co_await back.send(co_await there.receive());
}

// The medians of this run's wake_latency/futex_floor repetitions (it runs before ping_pong).
std::vector<double> g_wake_floor_us;

PoolStats operator-(const PoolStats& a, const PoolStats& b) {
    PoolStats d;
    d.steals = a.steals - b.steals;
    d.parks = a.parks - b.parks;
    return d;
}

// ping on ping_pool, pong on pong_pool; each channel wakes its receiver onto that receiver's
// pool (with capacity 1 and strict turns, no sender ever waits).
void run_ping_pong(benchmark::State& state, l9::ThreadPool& ping_pool, l9::ThreadPool& pong_pool) {
    l9::Channel<int> there(pong_pool, 1), back(ping_pool, 1);
    const bool two = &ping_pool != &pong_pool;
    const auto stats = [&] {
        PoolStats s = ping_pool.stats();
        if (two) {
            const PoolStats t = pong_pool.stats();
            s.steals += t.steals;
            s.parks += t.parks;
        }
        return s;
    };
    const PoolStats before = stats();
    std::binary_semaphore done{0};  // one for the whole run: ping may still be in release()
    std::chrono::steady_clock::duration elapsed{};
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        l9::spawn(pong_pool, pong(there, back));
        l9::spawn(ping_pool, ping(there, back, done));
        done.acquire();
        ping_pool.wait_idle();
        pong_pool.wait_idle();
        elapsed += std::chrono::steady_clock::now() - t0;
    }
    const PoolStats used = stats() - before;
    const auto hand_offs = static_cast<double>(state.iterations()) * 2 * kRounds;
    const double one_way_us =
        std::chrono::duration<double, std::micro>(elapsed).count() / hand_offs;
    state.counters["one_way_us"] = one_way_us;
    state.counters["steals_per_hand_off"] = static_cast<double>(used.steals) / hand_offs;
    state.counters["parks_per_hand_off"] = static_cast<double>(used.parks) / hand_offs;
    if (const double floor_us = median(g_wake_floor_us); floor_us > 0) {
        state.counters["futex_floor_us"] = floor_us;
        state.counters["one_way_vs_floor"] = one_way_us / floor_us;
    }
    state.SetItemsProcessed(state.iterations() * kRounds);
}

// Both on one pool of two workers: the woken coroutine goes onto the waker's own deque, and
// the waker suspends right after, so its worker usually pops it itself (steals_per_hand_off).
void lesson09_ping_pong(benchmark::State& state) {
    l9::ThreadPool pool(2);
    run_ping_pong(state, pool, pool);
}

// Each on its own pool of one worker: every hand-off crosses to the other thread (into its
// pool's injector, unparking its worker if it slept: parks_per_hand_off).
void lesson09_ping_pong_two_pools(benchmark::State& state) {
    l9::ThreadPool ping_pool(1), pong_pool(1);
    run_ping_pong(state, ping_pool, pong_pool);
}

// A lesson 09 benchmark with the frame pool on (see operator new above).
template <void (*Benchmark)(benchmark::State&)>
void with_frame_pool(benchmark::State& state) {
    g_pool_small.store(true, std::memory_order_relaxed);
    Benchmark(state);
    g_pool_small.store(false, std::memory_order_relaxed);
}

// ---- lesson 07 (fib only)
void lesson07_fib(benchmark::State& state) {
    lesson07::ThreadPool pool(bench_workers());
    auto join = [&pool](auto&& a, auto&& b) { lesson07::join(pool, a, b); };
    const AllocTotals before = alloc_totals();
    for (auto _ : state)
        benchmark::DoNotOptimize(fib(join, kFib));
    report_allocations(state, before, state.iterations() * fib_joins(kFib));
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(fib_joins(kFib)));
}

#if defined(WS_HAVE_ASIO)
// ---- Asio: thread_pool, co_spawn, awaitables
asio::awaitable<void> asio_empty(std::atomic<std::size_t>& left, std::binary_semaphore& done) {
    if (left.fetch_sub(1, std::memory_order_acq_rel) == 1) done.release();
    co_return;
}

asio::awaitable<void> asio_spawn_all(std::atomic<std::size_t>& left, std::binary_semaphore& done) {
    const auto executor = co_await asio::this_coro::executor;
    for (std::size_t i = 0; i < kSpawned; ++i)
        asio::co_spawn(executor, asio_empty(left, done), asio::detached);
}

void asio_spawn_await(benchmark::State& state) {
    asio::thread_pool pool(bench_workers());
    const AllocTotals before = alloc_totals();
    for (auto _ : state) {
        std::atomic<std::size_t> left{kSpawned};
        std::binary_semaphore done{0};
        asio::co_spawn(pool, asio_spawn_all(left, done), asio::detached);
        done.acquire();
    }
    report_allocations(state, before, state.iterations() * kSpawned);
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kSpawned));
    pool.join();
}

using AsioChannel = asio::experimental::concurrent_channel<void(asio::error_code, int)>;

asio::awaitable<void> asio_ping(AsioChannel& there, AsioChannel& back,
                                std::binary_semaphore& done) {
    for (int i = 0; i < kRounds; ++i) {
        co_await there.async_send(asio::error_code{}, i, asio::use_awaitable);
        benchmark::DoNotOptimize(co_await back.async_receive(asio::use_awaitable));
    }
    done.release();
}

asio::awaitable<void> asio_pong(AsioChannel& there, AsioChannel& back) {
    for (int i = 0; i < kRounds; ++i) {
        const int v = co_await there.async_receive(asio::use_awaitable);
        co_await back.async_send(asio::error_code{}, v, asio::use_awaitable);
    }
}

void asio_ping_pong(benchmark::State& state) {
    asio::thread_pool pool(2);
    AsioChannel there(pool, 1), back(pool, 1);
    for (auto _ : state) {
        std::binary_semaphore done{0};
        asio::co_spawn(pool, asio_pong(there, back), asio::detached);
        asio::co_spawn(pool, asio_ping(there, back, done), asio::detached);
        done.acquire();
    }
    state.SetItemsProcessed(state.iterations() * kRounds);
    pool.join();
}
#endif

}  // namespace

void register_benchmarks() {
    const auto timed = [](benchmark::internal::Benchmark* b) {
        b->Unit(benchmark::kMillisecond)->UseRealTime();
    };
    register_wake_floor(&g_wake_floor_us);  // first: ping_pong/lesson09 compares with it
    timed(benchmark::RegisterBenchmark("spawn_await/lesson09", lesson09_spawn_await));
    timed(benchmark::RegisterBenchmark("fib25/lesson09", lesson09_fib));
    timed(benchmark::RegisterBenchmark("fib25/lesson07", lesson07_fib));
    timed(benchmark::RegisterBenchmark("spawn_await/lesson09_frame_pool",
                                       with_frame_pool<lesson09_spawn_await>));
    timed(benchmark::RegisterBenchmark("fib25/lesson09_frame_pool", with_frame_pool<lesson09_fib>));
    timed(benchmark::RegisterBenchmark("ping_pong/lesson09", lesson09_ping_pong));
    timed(
        benchmark::RegisterBenchmark("ping_pong_two_pools/lesson09", lesson09_ping_pong_two_pools));
#if defined(WS_HAVE_ASIO)
    timed(benchmark::RegisterBenchmark("spawn_await/asio", asio_spawn_await));
    timed(benchmark::RegisterBenchmark("ping_pong/asio", asio_ping_pong));
#endif
}

}  // namespace ws::bench
