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
//                    Items: rounds (so the time per item is one round trip).
// Contenders: lesson09; lesson07 (fib only: it has no suspension); asio, Asio's thread_pool with
// C++20 awaitables (asio::co_spawn, and asio::experimental::concurrent_channel for ping-pong),
// when <asio.hpp> (Debian's libasio-dev) is found.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <semaphore>

#include <ws/bench/kernel.hpp>
#include <ws/bench/workloads.hpp>

#include "07_fork_join/fork_join.hpp"
#include "07_fork_join/thread_pool.hpp"
#include "09_coroutines/async.hpp"
#include "contenders.hpp"

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

}  // namespace

// noinline: g++ would otherwise see malloc and free across an inlined new/delete pair and warn.
[[gnu::noinline]] void* operator new(std::size_t size) {
    AllocShard& shard = my_shard();
    shard.count.fetch_add(1, std::memory_order_relaxed);
    shard.bytes.fetch_add(size, std::memory_order_relaxed);
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
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

l9::Task<std::uint64_t> fib_by_when_all(l9::ThreadPool& pool, std::uint64_t n) {
    if (n < 2) co_return fib_leaf(n);
    auto [x, y] =
        co_await l9::when_all(pool, fib_by_when_all(pool, n - 1), fib_by_when_all(pool, n - 2));
    co_return x + y;
}

void lesson09_fib(benchmark::State& state) {
    l9::ThreadPool pool(bench_workers());
    const AllocTotals before = alloc_totals();
    for (auto _ : state)
        benchmark::DoNotOptimize(l9::sync_wait(pool, fib_by_when_all(pool, kFib)));
    report_allocations(state, before, state.iterations() * fib_joins(kFib));
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(fib_joins(kFib)));
}

l9::Task<void> ping(l9::Channel<int>& there, l9::Channel<int>& back) {
    for (int i = 0; i < kRounds; ++i) {
        co_await there.send(i);
        benchmark::DoNotOptimize(co_await back.receive());
    }
}

l9::Task<void> pong(l9::Channel<int>& there, l9::Channel<int>& back) {
    for (int i = 0; i < kRounds; ++i)
        co_await back.send(co_await there.receive());
}

void lesson09_ping_pong(benchmark::State& state) {
    l9::ThreadPool pool(2);
    l9::Channel<int> there(pool, 1), back(pool, 1);
    for (auto _ : state) {
        l9::spawn(pool, pong(there, back));
        l9::spawn(pool, ping(there, back));
        pool.wait_idle();
    }
    state.SetItemsProcessed(state.iterations() * kRounds);
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
    timed(benchmark::RegisterBenchmark("spawn_await/lesson09", lesson09_spawn_await));
    timed(benchmark::RegisterBenchmark("fib25/lesson09", lesson09_fib));
    timed(benchmark::RegisterBenchmark("fib25/lesson07", lesson07_fib));
    timed(benchmark::RegisterBenchmark("ping_pong/lesson09", lesson09_ping_pong));
#if defined(WS_HAVE_ASIO)
    timed(benchmark::RegisterBenchmark("spawn_await/asio", asio_spawn_await));
    timed(benchmark::RegisterBenchmark("ping_pong/asio", asio_ping_pong));
#endif
}

}  // namespace ws::bench
