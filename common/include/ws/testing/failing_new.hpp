// Making one thread's allocations fail on demand, to test what code does with std::bad_alloc
// (Linux). A test arms the calling thread: fail_allocation_after(n) lets n more allocations of
// this thread succeed and makes the next one throw (once), refuse_allocations(true) makes every
// allocation of this thread throw until refuse_allocations(false). Other threads are never
// touched. failed_allocations() counts the failures, so a test can check that the failure it
// wanted did happen (a test whose failure never happened proves nothing).
// allocations_not_freed_here() counts the calling thread's operator new calls minus its
// operator delete calls, so a test can check that a call frees, on the thread that made it,
// what it allocated there (a leak a plain build does not see otherwise).
// before_each_allocation_failure(hook, context) runs hook(context) on the calling thread just
// before each of its failing allocations throws: a test can hold the failing call there, at the
// exact place where the code allocates (under a lock, say), until other threads have done what
// the test needs, to force an interleaving. A hook may also arm the thread again
// (fail_allocation_after, refuse_allocations(true)) for a later failure: the code's next
// attempt, say its fallback after this failure.
//
// How: the linker sends every call of operator new and operator new[] made by code compiled
// into the test program to __wrap__Znwm / __wrap__Znam below (ld --wrap, which the root
// CMakeLists.txt sets, with WS_WRAPPED_OPERATOR_NEW, on the programs that use this header),
// which throw when the thread is armed and call the real operator otherwise; operator delete and
// delete[] (sized or not) go to wrappers that count them. Replacing operator new outright
// clashes with the sanitizers' runtimes, which define it too (a link error); with --wrap the
// same test runs in the plain build and under TSan and ASan, whose delete still checks every
// pair. Calls made inside libstdc++ itself are not redirected. Without --wrap,
// kCanFailAllocations is false and the test should skip.
//
// The wrappers are inline with [[gnu::used]]: every file that includes this header emits them,
// and the linker keeps one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

namespace ws::testing {

namespace failing_new_detail {
// Allocations of this thread still to succeed before one fails; -1: none fails; kRefuseAll:
// every one fails.
inline constexpr std::int64_t kRefuseAll = -2;
inline thread_local std::int64_t tl_successes_left = -1;
inline std::atomic<std::uint64_t> g_failed{0};
// This thread's operator new calls that succeeded, minus its operator delete calls.
inline thread_local std::int64_t tl_not_freed = 0;
// Run just before a failure of this thread throws (before_each_allocation_failure).
inline thread_local void (*tl_before_failure)(void*) noexcept = nullptr;
inline thread_local void* tl_before_failure_context = nullptr;

inline void count_down_or_fail() {
    std::int64_t& left = tl_successes_left;
    if (left == -1) return;
    if (left > 0) {
        --left;
        return;
    }
    if (left == 0) left = -1;  // fail_allocation_after: one failure per arming
    g_failed.fetch_add(1, std::memory_order_relaxed);
    if (void (*hook)(void*) noexcept = tl_before_failure) {
        // The hook's own allocations never fail: this thread is disarmed while it runs (and
        // refusing again afterwards, if it was), unless the hook arms it again: that arming
        // stands (so a hook that arms should do so last).
        const std::int64_t armed = std::exchange(left, -1);
        hook(tl_before_failure_context);
        if (left == -1) left = armed;
    }
    throw std::bad_alloc();
}

// operator new or new[]: fails it if this thread is armed, else allocates and counts it.
inline void* count_new(void* (*real)(std::size_t), std::size_t size) {
    count_down_or_fail();
    void* p = real(size);
    ++tl_not_freed;
    return p;
}

inline void count_delete(void* p) noexcept {
    if (p != nullptr) --tl_not_freed;
}
}  // namespace failing_new_detail

#if defined(WS_WRAPPED_OPERATOR_NEW)
inline constexpr bool kCanFailAllocations = true;
#else
inline constexpr bool kCanFailAllocations = false;
#endif

// In a GoogleTest test that needs failing allocations: skips it where they cannot fail.
#define WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL()                                                   \
    do {                                                                                        \
        if (!::ws::testing::kCanFailAllocations)                                                \
            GTEST_SKIP() << "allocations cannot fail here: <ws/testing/failing_new.hpp> needs " \
                            "ld --wrap (Linux, ws_fail_allocations_on_demand)";                 \
    } while (false)

// noinline: inside a coroutine, clang may keep a thread_local's address from before a co_await
// and reuse it after, on another thread; a call it cannot see into reads it afresh.
[[gnu::noinline]] inline void fail_allocation_after(std::int64_t successes) {
    failing_new_detail::tl_successes_left = successes < 0 ? -1 : successes;
}

[[gnu::noinline]] inline void refuse_allocations(bool on) {
    failing_new_detail::tl_successes_left = on ? failing_new_detail::kRefuseAll : -1;
}

// Disarms this thread; true if it was still armed (no failure since fail_allocation_after, or
// refusing).
[[gnu::noinline]] inline bool disarm_allocation_failures() {
    return std::exchange(failing_new_detail::tl_successes_left, -1) != -1;
}

// From now on, hook(context) runs on the calling thread just before each of its allocation
// failures throws, the failure already counted (failed_allocations), with the thread disarmed
// meanwhile, so the hook may allocate; nullptr: no hook (the default). The hook must not throw
// (noexcept). Typical use: wait there, inside the failing call, for other threads (a lock the
// call holds then is still held). Or arm the thread again (fail_allocation_after(0): the next
// allocation after this failure fails too), as its last step: that arming stands after the hook
// returns. noinline: see fail_allocation_after.
[[gnu::noinline]] inline void before_each_allocation_failure(void (*hook)(void*) noexcept,
                                                             void* context = nullptr) {
    failing_new_detail::tl_before_failure = hook;
    failing_new_detail::tl_before_failure_context = context;
}

// The calling thread's operator new calls so far minus its operator delete calls: equal before
// and after a call that frees on this thread whatever it allocated on it. (Only calls made from
// code compiled into the test program count, as above.) noinline: see fail_allocation_after.
[[gnu::noinline]] inline std::int64_t allocations_not_freed_here() {
    return failing_new_detail::tl_not_freed;
}

// Allocations failed so far, by every thread. relaxed: a count, read after the failing call
// returned (on the same thread) or after the pool's own synchronisation.
inline std::uint64_t failed_allocations() {
    return failing_new_detail::g_failed.load(std::memory_order_relaxed);
}

}  // namespace ws::testing

#if defined(WS_WRAPPED_OPERATOR_NEW)
extern "C" {
void* __real__Znwm(std::size_t size);
void* __real__Znam(std::size_t size);
void __real__ZdlPv(void* p) noexcept;
void __real__ZdlPvm(void* p, std::size_t size) noexcept;
void __real__ZdaPv(void* p) noexcept;
void __real__ZdaPvm(void* p, std::size_t size) noexcept;
// Each wrapper counts the call (and a new may fail first), then calls the real operator.
[[gnu::used]] inline void* __wrap__Znwm(std::size_t size) {
    return ws::testing::failing_new_detail::count_new(__real__Znwm, size);
}
[[gnu::used]] inline void* __wrap__Znam(std::size_t size) {
    return ws::testing::failing_new_detail::count_new(__real__Znam, size);
}
[[gnu::used]] inline void __wrap__ZdlPv(void* p) noexcept {
    ws::testing::failing_new_detail::count_delete(p);
    __real__ZdlPv(p);
}
[[gnu::used]] inline void __wrap__ZdlPvm(void* p, std::size_t size) noexcept {
    ws::testing::failing_new_detail::count_delete(p);
    __real__ZdlPvm(p, size);
}
[[gnu::used]] inline void __wrap__ZdaPv(void* p) noexcept {
    ws::testing::failing_new_detail::count_delete(p);
    __real__ZdaPv(p);
}
[[gnu::used]] inline void __wrap__ZdaPvm(void* p, std::size_t size) noexcept {
    ws::testing::failing_new_detail::count_delete(p);
    __real__ZdaPvm(p, size);
}
}
#endif
