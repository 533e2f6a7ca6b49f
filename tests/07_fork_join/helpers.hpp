// Helpers shared by lesson 07's tests.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <ws/testing/harness.hpp>

#include "fork_join.hpp"
#include "thread_pool.hpp"

namespace lesson07_test {

using ws::lesson07::ThreadPool;

// fib(n) by join, without a cutoff: fib(27) = 196418 through 317,810 joins.
inline std::uint64_t fib(ThreadPool& pool, std::uint64_t n) {
    if (n < 2) return n;
    std::uint64_t x = 0, y = 0;
    ws::lesson07::join(
        pool, [&] { x = fib(pool, n - 1); }, [&] { y = fib(pool, n - 2); });
    return x + y;
}

// Spins (politely) until `flag` is true or `timeout` (scaled for sanitizers) passes; returns
// the flag. For tests in which one task waits for another to *start*: bounded, so a pool that
// runs them one after the other fails the test instead of hanging it.
inline bool spin_until(const std::atomic<bool>& flag,
                       std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout * ws::testing::slowdown();
    while (!flag.load(std::memory_order_acquire)) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::yield();
    }
    return true;
}

// Runs `body` as a task on `pool` and waits for it: the test's code then runs on a worker.
template <typename F>
void on_worker(ThreadPool& pool, F body) {
    pool.spawn(std::move(body));
    pool.wait_idle();
}

}  // namespace lesson07_test
