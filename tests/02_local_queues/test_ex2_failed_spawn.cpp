// Lesson 02, exercise 2: a spawn whose push fails. A queue's std::deque allocates a new block
// every few pushes, and that allocation may throw std::bad_alloc: then spawn throws it on, and
// the task was never queued, so no worker will ever take its count off pending_ again. A spawn
// that throws must leave nothing counted, or wait_idle and the destructor wait forever for a
// task that does not exist. Three ways in: from outside (the shared queue), and from inside a
// task onto the worker's own queue, counted in pending_ or against the worker's tally of
// finished tasks.
//
// A fourth and a fifth test check the other half of taking the count back: when the unit taken
// back is pending_'s last, wait_idle callers may have seen it and gone to sleep, and must all be
// woken.
//
// Deterministic: <ws/testing/failing_new.hpp> (ld --wrap, set for this program in the root
// CMakeLists.txt) makes a thread's next allocation throw. The tests arm the spawning thread just
// before each spawn (the task is built by then, and a small task allocates nothing) and spawn
// one task after another until a push needs a new block and throws. Under ThreadSanitizer and
// AddressSanitizer too.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <ws/task.hpp>
#include <ws/testing/failing_new.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson02::ThreadPool;
using ws::testing::futex_word_of;
using ws::testing::slowdown;
using ws::testing::wait_until;

namespace {
// More than any deque needs before its next block: a block holds 8 tasks in libstdc++.
constexpr int kMaxTries = 1000;

// What a spawning thread saw: how many spawns succeeded before one threw, and what it threw.
struct SpawnRecord {
    std::atomic<int> succeeded{0};
    std::atomic<bool> threw_bad_alloc{false};
    std::atomic<bool> threw_other{false};
    std::atomic<int> ran{0};  // tasks of those spawns that ran
    std::atomic<bool> done{false};
};

// Spawns tasks into `pool` from the calling thread, each spawn with the thread's next
// allocation armed to fail, until one throws.
void spawn_until_one_throws(ThreadPool& pool, SpawnRecord& record) {
    struct Done {
        SpawnRecord& record;
        ~Done() { record.done = true; }
    } done{record};
    for (int i = 0; i < kMaxTries; ++i) {
        ws::Task task([&record] { record.ran.fetch_add(1); });
        ws::testing::fail_allocation_after(0);
        try {
            pool.spawn(std::move(task));
        } catch (const std::bad_alloc&) {
            ws::testing::disarm_allocation_failures();
            record.threw_bad_alloc = true;
            return;
        } catch (...) {
            ws::testing::disarm_allocation_failures();
            record.threw_other = true;
            return;
        }
        ws::testing::disarm_allocation_failures();
        record.succeeded.fetch_add(1);
    }
}

constexpr const char* kCountLeft =
    "wait_idle did not return after a spawn whose push threw std::bad_alloc: the failed spawn "
    "left its task counted in pending_ (or took a unit of the worker's tally and never gave it "
    "back). Take the count back before the exception leaves spawn";

// After the failed spawn: wait_idle returns within 2 s, every task that was queued ran, and the
// pool is destroyed within 2 s. A call that does not return leaves the pool leaked, not
// destroyed (its workers still use it).
void expect_the_pool_recovers(std::unique_ptr<ThreadPool> pool, const SpawnRecord& record) {
    if (!wait_until([&] { return record.done.load(); }, 10s * slowdown())) {
        (void)pool.release();
        FAIL() << "the task that spawns never finished";
    }
    ASSERT_TRUE(record.threw_bad_alloc.load())
        << (record.threw_other.load() ? "spawn threw something other than std::bad_alloc"
                                      : "no spawn threw (did any push allocate?)");
    ws::testing::DetachedCall wait([p = pool.get()] { p->wait_idle(); });
    if (!wait.wait_for(2s * slowdown())) {
        (void)pool.release();
        FAIL() << kCountLeft;
    }
    if (const auto error = wait.error()) std::rethrow_exception(error);
    EXPECT_EQ(record.ran.load(), record.succeeded.load())
        << "every task whose spawn succeeded runs once";
    EXPECT_TRUE(ws::testing::run_within(2s * slowdown(), [p = pool.release()] { delete p; }))
        << "the pool's destructor did not return after a failed spawn";
}
}  // namespace

TEST(Lesson02Ex2, AFailedSpawnFromOutsideLeavesNothingCounted) {
    // Onto the shared queue, counted in pending_: with nothing else counted, taking the count
    // back takes pending_ to zero.
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    auto pool = std::make_unique<ThreadPool>(2);
    SpawnRecord record;
    spawn_until_one_throws(*pool, record);
    expect_the_pool_recovers(std::move(pool), record);
}

TEST(Lesson02Ex2, AFailedSpawnOntoTheWorkersOwnQueueLeavesNothingCounted) {
    // The pool's first task spawns: its worker has finished nothing yet, so each spawn adds
    // one to pending_.
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    auto pool = std::make_unique<ThreadPool>(1);
    SpawnRecord record;
    pool->spawn([&record, p = pool.get()] { spawn_until_one_throws(*p, record); });
    expect_the_pool_recovers(std::move(pool), record);
}

TEST(Lesson02Ex2, AFailedSpawnAgainstTheWorkersTallyLeavesNothingCounted) {
    // The first task spawns kSiblings tasks onto its worker's own queue (the only worker); they
    // run newest first, so the oldest runs last, after kSiblings tasks finished on that worker
    // without its running out of work: each of its spawns cancels against that tally, until
    // one throws (within a deque block, far fewer than kSiblings).
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    constexpr int kSiblings = 200;
    auto pool = std::make_unique<ThreadPool>(1);
    SpawnRecord record;
    std::atomic<int> siblings_ran{0};
    pool->spawn([&record, &siblings_ran, p = pool.get()] {
        p->spawn([&record, p] { spawn_until_one_throws(*p, record); });
        for (int i = 1; i < kSiblings; ++i)
            p->spawn([&siblings_ran] { siblings_ran.fetch_add(1); });
    });
    expect_the_pool_recovers(std::move(pool), record);
    EXPECT_EQ(siblings_ran.load(), kSiblings - 1);
    EXPECT_LT(record.succeeded.load(), kSiblings)
        << "test setup: more spawns succeeded than the worker's tally held, so the failed one "
           "did not cancel against the tally";
}

namespace {
// The futex word (`expected`, if given) that the thread has been blocked on at 5 polls in a
// row, 1 ms apart, so not a lock it is only passing through (a sanitizer's own, say); 0 if that
// did not happen within `timeout`.
std::uintptr_t wait_until_blocked(ws::testing::ThreadId tid, std::chrono::milliseconds timeout,
                                  std::uintptr_t expected = 0) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::uintptr_t last = 0;
    int in_a_row = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        const std::uintptr_t word = futex_word_of(tid);
        if (word == 0 || (expected != 0 && word != expected)) {
            in_a_row = 0;
        } else {
            in_a_row = word == last ? in_a_row + 1 : 1;
        }
        last = word;
        if (in_a_row >= 5) return word;
        std::this_thread::sleep_for(1ms);
    }
    return 0;
}

// One spawn from outside, on a thread of its own, made when the test says go, with the thread's
// next allocation armed to fail; inside the failing allocation (the pool's mutex still held, if
// spawn holds it there), just before it throws, it waits until the test says release.
struct HeldSpawn {
    std::atomic<ws::testing::ThreadId> tid{0};
    std::atomic<bool> go{false};
    std::atomic<bool> held{false};  // waiting inside the failing allocation
    std::atomic<bool> release{false};
    std::atomic<bool> threw_bad_alloc{false};

    static void hold(void* self) noexcept {
        auto& spawn = *static_cast<HeldSpawn*>(self);
        spawn.held = true;
        wait_until([&] { return spawn.release.load(); }, 10s * slowdown());
    }
};

ws::testing::DetachedCall start_held_spawn(ThreadPool& pool, std::shared_ptr<HeldSpawn> spawn) {
    return ws::testing::DetachedCall([&pool, spawn] {
        spawn->tid = ws::testing::current_thread_id();
        if (!wait_until([&] { return spawn->go.load(); }, 10s * slowdown())) return;
        ws::Task task([] {});
        ws::testing::before_each_allocation_failure(&HeldSpawn::hold, spawn.get());
        ws::testing::fail_allocation_after(0);
        try {
            pool.spawn(std::move(task));
        } catch (const std::bad_alloc&) {
            spawn->threw_bad_alloc = true;
        }
        ws::testing::disarm_allocation_failures();
        ws::testing::before_each_allocation_failure(nullptr);
    });
}

// A wait_idle call on a thread of its own, made when the test says go.
struct HeldWait {
    std::atomic<ws::testing::ThreadId> tid{0};
    std::atomic<bool> go{false};
};

ws::testing::DetachedCall start_held_wait(ThreadPool& pool, std::shared_ptr<HeldWait> wait) {
    return ws::testing::DetachedCall([&pool, wait] {
        wait->tid = ws::testing::current_thread_id();
        if (wait_until([&] { return wait->go.load(); }, 10s * slowdown())) pool.wait_idle();
    });
}
}  // namespace

namespace {
// The body of the two tests below, with `num_waiters` wait_idle callers on threads of their own.
// A spawn from outside counts its task (pending_ 0 -> 1), takes the pool's mutex, and its push
// throws. A wait_idle that reads pending_ in between sees 1 and goes to sleep; taking the count
// back takes pending_ to zero, and must then wake every such caller (under the mutex), as the
// last task to finish does, or they sleep forever. Forced, with no help from the scheduler:
// spawn A is held inside its failing allocation, the mutex held; then the wait_idle callers
// block on the mutex, one after another, then spawn B, counted (pending_ 2), behind them: the
// kernel wakes a futex's waiters in the order they came, and /proc shows all of them blocked on
// the same futex word. Released, A unlocks, which wakes the first caller, and takes its count
// back (2 -> 1); each caller in turn gets the mutex, sees B's unit and sleeps on the condition
// variable, which lets the next in, and the last lets B in; B's push throws too, and whichever
// of A and B takes back the last unit must wake them all. While B is held, /proc shows whether
// every caller sleeps on another futex word than the mutex's (the condition variable's): if not
// (the worker took the mutex in between, and so B got it before a caller), the test tries
// again, up to 5 times.
void expect_a_failed_spawn_to_wake_every_wait_idle_asleep_on_its_count(int num_waiters) {
    auto pool = std::make_unique<ThreadPool>(1);
    // First a failed spawn from this thread: the shared queue's deque then needs a new block for
    // its next push, and still does after each failed push (a failed push leaves it unchanged).
    SpawnRecord probe;
    spawn_until_one_throws(*pool, probe);
    ASSERT_TRUE(probe.threw_bad_alloc.load())
        << (probe.threw_other.load() ? "spawn threw something other than std::bad_alloc"
                                     : "no spawn threw (did any push allocate?)");
    {
        ws::testing::DetachedCall wait([p = pool.get()] { p->wait_idle(); });
        if (!wait.wait_for(2s * slowdown())) {
            (void)pool.release();  // the call still uses it: leak the pool
            FAIL() << kCountLeft;
        }
    }

    int forced = 0;
    for (int attempt = 1; attempt <= 5 && forced == 0; ++attempt) {
        auto a = std::make_shared<HeldSpawn>(), b = std::make_shared<HeldSpawn>();
        std::vector<std::shared_ptr<HeldWait>> waits;
        std::vector<ws::testing::DetachedCall> wait_calls;
        ws::testing::DetachedCall a_call = start_held_spawn(*pool, a);
        ws::testing::DetachedCall b_call = start_held_spawn(*pool, b);
        for (int i = 0; i < num_waiters; ++i) {
            waits.push_back(std::make_shared<HeldWait>());
            wait_calls.push_back(start_held_wait(*pool, waits.back()));
        }
        ASSERT_TRUE(wait_until(
            [&] {
                return a->tid.load() != 0 && b->tid.load() != 0 &&
                       std::all_of(waits.begin(), waits.end(),
                                   [](const auto& w) { return w->tid.load() != 0; });
            },
            10s * slowdown()));
        a->go = true;
        if (!wait_until([&] { return a->held.load(); }, 10s * slowdown())) {
            (void)pool.release();  // the threads of the test may still use it: leak the pool
            FAIL() << "a spawn from outside did not fail, although the shared queue's last push "
                      "had failed for want of memory and nothing was pushed since";
        }
        // Each caller in turn, so that they queue on the mutex in this order.
        std::uintptr_t mutex_word = 0;
        bool queued = true;
        for (const auto& w : waits) {
            w->go = true;
            const std::uintptr_t word =
                wait_until_blocked(w->tid.load(), 10s * slowdown(), mutex_word);
            if (mutex_word == 0) mutex_word = word;
            queued = queued && word != 0;
        }
        b->go = true;
        queued = queued && wait_until_blocked(b->tid.load(), 10s * slowdown(), mutex_word) != 0;
        a->release = true;
        if (!wait_until([&] { return b->held.load(); }, 10s * slowdown())) {
            (void)pool.release();
            FAIL() << "the second spawn from outside did not fail";
        }
        bool this_forced = queued;
        for (const auto& w : waits) {
            const std::uintptr_t wait_word =
                this_forced ? wait_until_blocked(w->tid.load(), 2s * slowdown()) : 0;
            this_forced = wait_word != 0 && wait_word != mutex_word;
        }
        b->release = true;
        if (!a_call.wait_for(10s * slowdown()) || !b_call.wait_for(10s * slowdown())) {
            (void)pool.release();
            FAIL() << "a spawn whose push threw did not return";
        }
        if (const auto error = a_call.error()) std::rethrow_exception(error);
        if (const auto error = b_call.error()) std::rethrow_exception(error);
        ASSERT_TRUE(a->threw_bad_alloc.load() && b->threw_bad_alloc.load())
            << "a spawn whose push failed did not throw std::bad_alloc";
        int returned = 0;
        for (auto& call : wait_calls) {
            if (call.wait_for(2s * slowdown())) ++returned;
        }
        if (returned < num_waiters) {
            (void)pool.release();  // wait_idle still uses it: leak the pool
            FAIL() << returned << " of " << num_waiters << " wait_idle calls returned (attempt "
                   << attempt << ", " << (this_forced ? "forced" : "not forced")
                   << "): a caller went to sleep while a failed spawn's count was in pending_, "
                      "and the spawn took its count back, leaving pending_ at zero, without "
                      "waking "
                   << (num_waiters == 1 ? "it" : "every caller")
                   << ". Taking back the last unit ends a wait, exactly as the last task to "
                      "finish does: notify idle_, under the mutex, and wake every thread "
                      "asleep in wait_idle";
        }
        for (auto& call : wait_calls) {
            if (const auto error = call.error()) std::rethrow_exception(error);
        }
        if (this_forced) ++forced;
    }
    EXPECT_TRUE(ws::testing::run_within(2s * slowdown(), [p = pool.release()] { delete p; }))
        << "the pool's destructor did not return after failed spawns";
    if (forced == 0) GTEST_SKIP() << "wait_idle could not be made to sleep between two spawns";
}
}  // namespace

TEST(Lesson02Ex2, AFailedSpawnWakesAWaitIdleAsleepOnItsCount) {
    // One wait_idle caller asleep on the count a failed spawn takes back (see above).
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    expect_a_failed_spawn_to_wake_every_wait_idle_asleep_on_its_count(1);
}

TEST(Lesson02Ex2, AFailedSpawnWakesEveryWaitIdleAsleepOnItsCount) {
    // Two wait_idle callers asleep on it at once: taking back the last unit must wake both
    // (notify_all), not one.
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    expect_a_failed_spawn_to_wake_every_wait_idle_asleep_on_its_count(2);
}
