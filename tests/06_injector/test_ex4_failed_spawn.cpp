// Lesson 06, exercise 4: a spawn from outside that fails (the injector cannot get a new block:
// std::bad_alloc) leaves nothing counted — and nobody waiting. If wait_idle went to sleep
// while this spawn's own count was the last one, taking the count back must wake it.
//
// Deterministic: this file replaces the global operator new, so that one chosen allocation on
// the spawning thread (the injector's next block, about 1 KiB) first waits until a wait_idle
// caller is asleep, then throws. Not under the sanitizers: their runtimes own operator new.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <new>
#include <thread>

#include <ws/testing/harness.hpp>
#include <ws/testing/sanitizer.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson06::ThreadPool;

#if defined(__linux__) && !defined(WS_SANITIZER_ALLOCATOR)
namespace {
// Armed on one thread only; every other allocation of the test binary goes straight to malloc.
thread_local void (*tl_before_failing)() = nullptr;
constexpr std::size_t kBlockBytesMin = 1000;  // an injector block: 1 KiB; a Task is less

std::atomic<ws::testing::ThreadId> g_waiter_tid{0};
std::atomic<bool> g_in_failing_allocation{false};

void wait_until_the_waiter_sleeps() {
    g_in_failing_allocation = true;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (g_waiter_tid.load() == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    // Asleep for 20 ms in a row: inside wait_idle's condition variable, not passing through.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    ws::testing::wait_until_asleep({g_waiter_tid.load()}, left);
}
}  // namespace

void* operator new(std::size_t size) {
    if (tl_before_failing != nullptr && size >= kBlockBytesMin) {
        auto hook = tl_before_failing;
        tl_before_failing = nullptr;
        hook();
        throw std::bad_alloc();
    }
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
// Through a pointer: g++ 12 takes a replacement operator delete that calls free() for a
// mismatched new/delete pair (-Wmismatched-new-delete), although operator new above mallocs.
void (*volatile g_release)(void*) = std::free;
void operator delete(void* p) noexcept {
    g_release(p);
}
void operator delete(void* p, std::size_t) noexcept {
    ::operator delete(p);
}

TEST(Lesson06Ex4, AFailedOutsideSpawnWakesASleepingWaitIdle) {
    ThreadPool pool(1);
    std::atomic<bool> threw{false};
    std::thread spawner([&] {
        // One task at a time, the pool idle in between (nothing else counted), until the spawn
        // that needs a new injector block fails.
        for (int i = 0; i < 10'000 && !threw; ++i) {
            tl_before_failing = &wait_until_the_waiter_sleeps;
            try {
                pool.spawn([] {});
            } catch (const std::bad_alloc&) {
                threw = true;
            }
            tl_before_failing = nullptr;
            if (!threw) pool.wait_idle();
        }
    });
    ASSERT_TRUE(ws::testing::wait_until([&] { return g_in_failing_allocation.load(); },
                                        10s * ws::testing::slowdown()))
        << "no outside spawn allocated an injector block (is spawn using the injector yet?)";
    // Now the spawner holds one count (its failing spawn) and waits for us to sleep on it.
    auto waiter = std::async(std::launch::async, [&] {
        g_waiter_tid = ws::testing::current_thread_id();
        pool.wait_idle();
    });
    const bool returned =
        waiter.wait_for(5s * ws::testing::slowdown()) == std::future_status::ready;
    spawner.join();
    EXPECT_TRUE(threw.load()) << "the chosen allocation did not make spawn throw";
    EXPECT_TRUE(returned)
        << "wait_idle slept on after the failed spawn took its count back: the count that "
           "reaches zero must wake the waiters, whoever takes it there";
    if (!returned) {
        pool.spawn([] {});  // a task that finishes wakes the waiter, so the test ends
        waiter.wait();
    }
}
#else
TEST(Lesson06Ex4, AFailedOutsideSpawnWakesASleepingWaitIdle) {
    GTEST_SKIP() << "replaces operator new: not under a sanitizer's allocator";
}
#endif
