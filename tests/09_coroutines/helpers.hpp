// Helpers shared by lesson 09's tests.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>

#include <ws/testing/harness.hpp>
#include <ws/testing/wait.hpp>

#include "async.hpp"

namespace lesson09_test {

using ws::lesson09::Task;
using ws::lesson09::ThreadPool;

// Counts its live copies in *live: a coroutine's parameters are copied into its frame, so a
// Tracked parameter (or local) tells whether the frame was destroyed.
class Tracked {
  public:
    explicit Tracked(std::atomic<int>& live) noexcept : live_(&live) { ++*live_; }
    Tracked(const Tracked& other) noexcept : live_(other.live_) { ++*live_; }
    Tracked& operator=(const Tracked&) = delete;
    ~Tracked() { --*live_; }

  private:
    std::atomic<int>* live_;
};

// The calling thread's id, read afresh. Inside a coroutine, clang may keep a thread id (or a
// thread_local's address) read before a co_await and reuse it after, when the coroutine may be
// on another thread: std::this_thread::get_id() is declared as a function whose result never
// changes. The empty asm with a memory clobber makes this call one it cannot reuse.
[[gnu::noinline]] inline std::thread::id current_thread() {
    const std::thread::id id = std::this_thread::get_id();
    asm volatile("" ::: "memory");
    return id;
}

// Runs `task` to its end on `pool` from this (outside) thread.
template <typename T>
T run(ThreadPool& pool, Task<T> task) {
    return ws::lesson09::sync_wait(pool, std::move(task));
}

// Waits (politely) until `flag` is true or 5 s (scaled for sanitizers) pass; returns the flag.
// Bounded, so a missing wake-up fails the test instead of hanging it.
inline bool eventually(const std::atomic<bool>& flag) {
    return ws::testing::wait_until([&] { return flag.load(); },
                                   std::chrono::seconds(5) * ws::testing::slowdown());
}

// The number of coroutines for "a million" tests: fewer under sanitizers, which run each
// coroutine many times slower and keep more memory per frame.
inline std::size_t million() {
    return std::size_t{1'000'000} / static_cast<std::size_t>(ws::testing::slowdown());
}

}  // namespace lesson09_test
