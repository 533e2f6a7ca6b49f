// Lesson 06, exercise 4: a spawn from outside, stopped at its allocations. A spawn that fails
// (the injector cannot get a new block: std::bad_alloc) leaves nothing counted — and nobody
// waiting: if wait_idle went to sleep while this spawn's own count was the last one, taking the
// count back must wake it. And a spawn that succeeds counts its task before it pushes it: a
// worker that takes the task the moment it is pushed may finish it before the spawn returns.
//
// Deterministic: this file replaces the global operator new and delete, so that one chosen
// allocation on the spawning thread (the injector's next block, about 1 KiB) first waits for
// what the test needs, then throws or succeeds, and the free of that block waits too. Not under
// the sanitizers: their runtimes own operator new.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <new>
#include <thread>
#include <utility>

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

// The other pair of hooks, also armed on one thread only: tl_before_block runs at the next block
// allocation, which then succeeds; tl_on_block_freed runs when that block is freed on this
// thread (the injector's spare block, freed by a push that lost its claim and took another).
// Wherever and whenever that block is freed, g_watched_block_freed records it: a block that is
// never freed, even by the pool's destruction, has leaked.
thread_local void (*tl_before_block)() = nullptr;
thread_local void (*tl_on_block_freed)() = nullptr;
std::atomic<void*> g_watched_block{nullptr};
std::atomic<bool> g_watched_block_freed{false};
}  // namespace

// Through pointers: g++ 12 takes a replacement operator delete that calls free() for a
// mismatched new/delete pair (-Wmismatched-new-delete) once it sees the malloc behind this
// operator new, although both are ours.
void* (*volatile g_acquire)(std::size_t) = std::malloc;
void (*volatile g_release)(void*) = std::free;

void* operator new(std::size_t size) {
    if (tl_before_failing != nullptr && size >= kBlockBytesMin) {
        auto hook = tl_before_failing;
        tl_before_failing = nullptr;
        hook();
        throw std::bad_alloc();
    }
    void (*before_block)() = nullptr;
    if (tl_before_block != nullptr && size >= kBlockBytesMin)
        before_block = std::exchange(tl_before_block, nullptr);
    if (before_block != nullptr) before_block();
    if (void* p = g_acquire(size == 0 ? 1 : size)) {
        if (before_block != nullptr) {
            g_watched_block_freed = false;
            g_watched_block = p;
        }
        return p;
    }
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    if (p != nullptr && p == g_watched_block.load()) {
        g_watched_block = nullptr;
        g_watched_block_freed = true;
        if (auto hook = std::exchange(tl_on_block_freed, nullptr)) hook();
    }
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

namespace {
// What the test below shares with its hooks, which run on the spawning thread.
struct LateCount {
    std::atomic<bool> release_long{false};  // lets the long task finish
    std::atomic<bool> long_started{false};
    std::atomic<ws::testing::ThreadId> helper{0};  // the worker that runs the helper task
    std::atomic<bool> spawner_allocating{false};   // the spawner stopped in its block allocation
    std::atomic<bool> other_push_stuck{false};     // ... and the test's push could not finish
    std::atomic<bool> other_pushed{false};         // the test's own push took that position
    std::atomic<bool> task_published{false};       // the spawner freed its spare block
    std::atomic<bool> freed_before_queued{false};  // ... before its task was in the injector
    std::atomic<bool> task_ran{false};
    std::atomic<ws::testing::ThreadId> waiter{0};
    std::atomic<bool> waiter_returned{false};
};
LateCount* g_late = nullptr;

// At the spawner's allocation of the injector's next block (its push saw the block's last
// slot free): wait until the test's own push has taken that slot.
void wait_for_the_other_push() {
    g_late->spawner_allocating = true;
    // The test's push needs nothing from the spawner, unless the spawner has already claimed the
    // last slot: then the test's push waits at the phantom offset for this very allocation.
    if (!ws::testing::wait_until([] { return g_late->other_pushed.load(); },
                                 10s * ws::testing::slowdown()))
        g_late->other_push_stuck = true;
}

// At the free of that block (the push lost its claim, took slot 0 of the next block and is done
// with the injector; spawn has not returned): let the helper's worker take the task, run it and
// go to sleep; if that woke the waiter, let the waiter return before the spawn goes on.
void let_a_worker_finish_the_task() {
    g_late->task_published = true;
    const auto bound = 10s * ws::testing::slowdown();
    // Until the helper's worker has run the task and sleeps, or has slept 20 ms in a row without
    // running it: then the task was not in the injector yet (this push frees its spare block
    // before it has queued its task), and it cannot be until this hook returns.
    bool asleep = false;
    std::chrono::steady_clock::time_point asleep_since{};
    ws::testing::wait_until(
        [&] {
            const bool was_asleep = asleep;
            asleep = ws::testing::blocked_on_futex(g_late->helper.load());
            if (g_late->task_ran.load()) return asleep;
            const auto now = std::chrono::steady_clock::now();
            if (asleep && !was_asleep) asleep_since = now;
            return asleep && now - asleep_since >= 20ms;
        },
        bound);
    if (!g_late->task_ran.load()) {
        g_late->freed_before_queued = true;
        return;
    }
    if (!ws::testing::blocked_on_futex(g_late->waiter.load()))
        ws::testing::wait_until([] { return g_late->waiter_returned.load(); }, bound);
}
}  // namespace

TEST(Lesson06Ex4, AnOutsideSpawnIsCountedBeforeAWorkerCanFinishIt) {
    // A long task runs on one worker and a helper task on the other; a second thread sleeps in
    // wait_idle, which must not return before the long task has finished. Then a spawner's
    // push is held just after it has published its task (at the free of a spare block, forced
    // as above) while the helper's worker takes that task, runs it and reports it finished. A
    // spawn that counts the task only after the push has not counted it yet: the worker's report
    // takes pending_ to zero, and wait_idle returns with the long task still running.
    //
    // That moment needs a push that frees its unused spare block after it has queued its item
    // (the lesson's). A push that frees it earlier, or keeps it for a later block, is correct
    // too: then the moment cannot be forced and the test checks the rest (no early return, the
    // task ran, the spare block is not leaked) and says so in its output. A spare block never
    // freed, even by the pool's destruction, is a leak and fails.
    constexpr std::uint64_t kBlock = ws::lesson06::Injector<ws::Task*>::kBlockSize;
    LateCount late;  // before the pool: its tasks use it until the pool is gone
    g_late = &late;
    g_watched_block = nullptr;
    g_watched_block_freed = false;
    auto owned_pool = std::make_unique<ThreadPool>(2);
    ThreadPool& pool = *owned_pool;
    std::future<void> waiter;
    struct LetGoAtExit {  // whatever happens below, nothing waits on for good
        LateCount& late;
        ~LetGoAtExit() {
            late.other_pushed = true;
            late.task_published = true;
            late.release_long = true;
        }
    } let_go_at_exit{late};
    // Fill the injector's first block up to its last slot: kBlock - 3 tasks, then the long task
    // and the helper.
    for (std::uint64_t i = 0; i + 3 < kBlock; ++i)
        pool.spawn([] {});
    pool.wait_idle();
    pool.spawn([&] {
        late.long_started = true;
        ws::testing::wait_until([&] { return late.release_long.load(); },
                                20s * ws::testing::slowdown());
    });
    ASSERT_TRUE(ws::testing::wait_until([&] { return late.long_started.load(); },
                                        10s * ws::testing::slowdown()));
    pool.spawn([&] {
        late.helper = ws::testing::current_thread_id();
        ws::testing::wait_until([&] { return late.task_published.load(); },
                                20s * ws::testing::slowdown());
    });
    ASSERT_TRUE(ws::testing::wait_until([&] { return late.helper.load() != 0; },
                                        10s * ws::testing::slowdown()));
    waiter = std::async(std::launch::async, [&] {
        late.waiter = ws::testing::current_thread_id();
        pool.wait_idle();
        late.waiter_returned = true;
    });
    ASSERT_TRUE(ws::testing::wait_until([&] { return late.waiter.load() != 0; },
                                        10s * ws::testing::slowdown()));
    ASSERT_TRUE(ws::testing::wait_until_all({late.waiter.load()}, ws::testing::blocked_on_futex,
                                            10s * ws::testing::slowdown()))
        << "wait_idle returned, or did not sleep, while a task was still running";
    std::atomic<bool> spawned{false};
    std::thread spawner([&] {
        tl_before_block = &wait_for_the_other_push;
        tl_on_block_freed = &let_a_worker_finish_the_task;
        pool.spawn([&] { late.task_ran = true; });
        tl_before_block = nullptr;
        tl_on_block_freed = nullptr;
        spawned = true;
    });
    const bool allocating =
        ws::testing::wait_until([&] { return late.spawner_allocating.load() || spawned.load(); },
                                10s * ws::testing::slowdown());
    const bool set_up = allocating && !spawned.load();
    pool.spawn([] {});  // takes the block's last slot first
    late.other_pushed = true;
    spawner.join();
    const bool returned_early = late.waiter_returned.load();
    const bool forced = late.task_published.load() && !late.freed_before_queued.load();
    late.task_published = true;  // lets the helper go if the hooks never ran
    late.release_long = true;
    waiter.wait();
    ASSERT_TRUE(set_up) << "the outside spawn did not allocate the injector's next block before "
                           "claiming the block's last slot (is spawn using the injector yet?)";
    ASSERT_FALSE(late.other_push_stuck.load())
        << "another push waited for the outside spawn's allocation of the next block: the spawn "
           "claimed the block's last slot first and allocated after. Allocate the next block "
           "before the claim (lesson 06, exercise 1): the others wait at the phantom offset only "
           "for a few instructions, and a std::bad_alloc leaves the injector unchanged";
    EXPECT_FALSE(returned_early)
        << "wait_idle returned while a task spawned before it was still running: a worker "
           "finished a task pushed from outside before spawn had counted it. Count the task "
           "as pending before the push makes it visible (and take the count back if the push "
           "throws)";
    pool.wait_idle();
    EXPECT_TRUE(late.task_ran.load()) << "the task spawned from outside never ran";
    owned_pool.reset();
    EXPECT_TRUE(g_watched_block_freed.load())
        << "the outside spawn allocated the next block before its claim of the block's last slot, "
           "lost that slot to another push, and never freed the block, not even when the pool "
           "was destroyed: a leak. A push that no longer needs its spare block frees it (lesson "
           "06, exercise 1)";
    if (!forced && g_watched_block_freed.load()) {
        ::testing::Test::RecordProperty("moment_forced", "no");
        std::printf(
            "[note] this injector's push frees its unused spare block before it queues "
            "its item, or keeps it: the moment this test forces (a worker finishes the "
            "task before spawn returns) could not be had; checked the rest\n");
    }
}
#else
TEST(Lesson06Ex4, AFailedOutsideSpawnWakesASleepingWaitIdle) {
    GTEST_SKIP() << "replaces operator new: not under a sanitizer's allocator";
}
TEST(Lesson06Ex4, AnOutsideSpawnIsCountedBeforeAWorkerCanFinishIt) {
    GTEST_SKIP() << "replaces operator new: not under a sanitizer's allocator";
}
#endif
