// Lesson 02, exercise 2: whoever takes pending_'s last unit off wakes wait_idle under the pool's
// mutex. wait_idle reads pending_ under the mutex and, seeing work left, sleeps on idle_; the
// condition variable lets the mutex go only once the caller is waiting. A thread that takes the
// last unit off and notifies idle_ without taking the mutex may do both between wait_idle's read
// and its sleep: the notification finds nobody waiting, and wait_idle sleeps on with pending_ at
// zero (a lost wake-up). Two threads take a last unit off: a worker that ran out of work
// (report_finished), and a spawn from outside whose push threw (the take-back).
//
// The window holds no code of the test's own, so the tests hold each thread at its exact place
// with hardware watchpoints (<ws/testing/write_watch.hpp>): the thread that will take the last
// unit off is held just before it does (a worker right after it zeroes its tally, a spawn right
// after it unlocks the mutex its failed push held); then the wait_idle caller is held right
// after its first read of pending_ (a read watch: it still holds the mutex). The finisher goes
// on until it has taken the unit off and is seen blocked on the mutex (it notifies under it) or
// gone past; only then does the waiter go on, and it must return within 1 s.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <utility>

#include <ws/task.hpp>
#include <ws/testing/failing_new.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>
#include <ws/testing/write_watch.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson02::ThreadPool;
using ws::testing::futex_word_of;
using ws::testing::slowdown;
using ws::testing::ThreadId;
using ws::testing::wait_until;
using ws::testing::WatchAccess;
using ws::testing::WriteWatch;

namespace {

// The pool's private members the tests watch, named in explicit instantiations, where C++ does
// not check access (as in tests/04_chase_lev/test_ex5_count_before_push.cpp). The names are the
// given ones, which the learner keeps.
template <typename Tag, auto Member>
struct Grant {
    friend constexpr auto member_of(Tag) { return Member; }
};
struct PoolPending {
    friend constexpr auto member_of(PoolPending);
};
struct PoolMutex {
    friend constexpr auto member_of(PoolMutex);
};
struct PoolWorkers {
    friend constexpr auto member_of(PoolWorkers);
};
struct WorkerUnreported {
    friend constexpr auto member_of(WorkerUnreported);
};
template struct Grant<PoolPending, &ThreadPool::pending_>;
template struct Grant<PoolMutex, &ThreadPool::mutex_>;
template struct Grant<PoolWorkers, &ThreadPool::workers_>;
template struct Grant<WorkerUnreported, &ThreadPool::Worker::unreported>;

std::atomic<std::size_t>& pending_of(ThreadPool& pool) {
    return pool.*member_of(PoolPending{});
}
// The futex word of the pool's mutex (glibc: a pthread_mutex_t starts with it), as a thread
// blocked on the mutex shows it in /proc.
std::uintptr_t mutex_word_of(ThreadPool& pool) {
    return reinterpret_cast<std::uintptr_t>(&(pool.*member_of(PoolMutex{})));
}

// Holds a thread in a watch's on_write, once, until `go` (at most `bound`): at the first access
// once `armed` is true and, if `zero` is set, the access left *zero at 0.
struct Hold {
    std::atomic<bool> armed{true};
    const volatile std::size_t* zero = nullptr;  // never the watched bytes of a read watch
    std::atomic<bool> paused{false};
    std::atomic<bool> go{false};
    std::chrono::nanoseconds bound{0};
};
static_assert(std::atomic<bool>::is_always_lock_free);

// A WriteWatch's on_write: runs in the SIGTRAP handler, so lock-free atomics, a read of the
// thread's own plain variable and ws::testing::wait_for_flag only. Its atomics are seq_cst, as
// are the test's loads and stores of them: flags that order nothing else.
void hold_once(void* context) noexcept {
    auto& hold = *static_cast<Hold*>(context);
    if (hold.paused.load() || !hold.armed.load()) return;
    if (hold.zero != nullptr && *hold.zero != 0) return;
    hold.paused.store(true);
    (void)ws::testing::wait_for_flag(hold.go, hold.bound);
}

// Why watchpoints (a write one and a read one) cannot be armed here; empty if they can.
std::string why_no_watchpoints() {
    std::int64_t probe = 0;
    Hold unused;
    for (WatchAccess access : {WatchAccess::writes, WatchAccess::reads_and_writes}) {
        WriteWatch watch(&probe, sizeof(probe), &hold_once, &unused, access);
        if (!watch.available()) return watch.why_unavailable();
    }
    return {};
}

// A wait_idle call on a thread of its own, held right after its first read of pending_ (a read
// watch on pending_ for that thread, armed just before the call: nothing else of that thread
// reads pending_ before wait_idle's check).
struct HeldWaiter {
    Hold hold;
    std::atomic<ThreadId> tid{0};
    std::atomic<bool> arm_failed{false};
    std::string why;  // written before arm_failed is set
    std::atomic<bool> returned{false};
};

ws::testing::DetachedCall start_held_wait(ThreadPool& pool, std::shared_ptr<HeldWaiter> waiter) {
    return ws::testing::DetachedCall([&pool, waiter] {
        waiter->tid = ws::testing::current_thread_id();
        {
            std::atomic<std::size_t>& pending = pending_of(pool);
            WriteWatch watch(&pending, sizeof(pending), &hold_once, &waiter->hold,
                             WatchAccess::reads_and_writes);
            if (!watch.available()) {
                waiter->why = watch.why_unavailable();
                waiter->arm_failed = true;
                return;
            }
            pool.wait_idle();
        }
        waiter->returned = true;
    });
}

// What the shared part of the tests saw.
enum class Outcome { waiter_could_not_arm, waiter_not_held, returned, stuck };

// The shared part. `finisher` is held just before it takes pending_'s last unit off (pending_
// is 1). Holds a wait_idle caller right after its first read of pending_, under the mutex; lets
// the finisher go on until pending_ is zero and `past()` says the finisher is blocked on the
// mutex or gone past it (at most 10 s); lets the waiter go on, and waits 1 s for its return.
// Afterwards the caller must make the pool run a task, which wakes a stuck waiter, and then wait
// for `call`.
template <typename Past>
Outcome hold_the_waiter_then_let_the_finisher_go(ThreadPool& pool, Hold& finisher, Past past,
                                                 std::shared_ptr<HeldWaiter> waiter,
                                                 ws::testing::DetachedCall& call) {
    waiter->hold.bound = 20s * slowdown();
    call = start_held_wait(pool, waiter);
    const bool held = wait_until(
        [&] { return waiter->hold.paused.load() || waiter->arm_failed.load(); }, 10s * slowdown());
    finisher.go = true;
    if (waiter->arm_failed.load()) return Outcome::waiter_could_not_arm;
    if (!held) return Outcome::waiter_not_held;
    std::atomic<std::size_t>& pending = pending_of(pool);
    int polls = 0;
    wait_until(
        [&] {
            polls = pending.load() == 0 && past() ? polls + 1 : 0;
            return polls >= 10;  // 0.2 ms apart: a state it stays in, not one it passes
        },
        10s * slowdown());
    waiter->hold.go = true;
    return call.wait_for(1s * slowdown()) ? Outcome::returned : Outcome::stuck;
}

constexpr const char* kLostWakeUp =
    "it read pending_ (1) under the pool's mutex, and before it went to sleep on idle_ the last "
    "unit was taken off pending_ and idle_ notified without the mutex held: the notification "
    "found nobody waiting (a lost wake-up), and wait_idle sleeps on with pending_ at zero. Take "
    "the mutex to notify: a condition variable's wait lets the mutex go only once it waits, so "
    "a notification under the mutex cannot fall between wait_idle's check and its sleep";

}  // namespace

TEST(Lesson02Ex2, TheLastTaskToFinishWakesAWaitIdleThatHasJustSeenItCounted) {
    // One worker runs a task from outside (pending_ 1), then, out of work, is held in
    // report_finished right after it zeroed its tally, before it subtracts the tally from
    // pending_ (a write watch on its tally, which the task arms for its own thread). A wait_idle
    // caller is held right after it read pending_ (1) under the mutex. The worker takes pending_
    // to zero: with the notification under the mutex it blocks on the mutex, and the waiter,
    // let go, sleeps and is woken; without, the notification comes too early and wait_idle
    // sleeps on. Then a task spawned by the test wakes it, so that nothing hangs.
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    if (const std::string why = why_no_watchpoints(); !why.empty()) WS_SKIP_NOT_AVAILABLE_HERE(why);
    struct Shared {
        Hold worker;
        std::atomic<ThreadId> worker_tid{0};
        std::atomic<bool> arm_failed{false};
        std::string why;                    // written before arm_failed is set
        std::unique_ptr<WriteWatch> watch;  // armed and disarmed on the worker's thread
    };
    auto shared = std::make_shared<Shared>();
    shared->worker.bound = 20s * slowdown();
    auto owned_pool = std::make_unique<ThreadPool>(1);
    ThreadPool& pool = *owned_pool;
    std::size_t& tally = (*(pool.*member_of(PoolWorkers{}))[0]).*member_of(WorkerUnreported{});
    shared->worker.zero = &tally;
    auto waiter = std::make_shared<HeldWaiter>();
    ws::testing::DetachedCall call([] {});

    // On every way out: let every held thread go, disarm the worker's watch (a task, on the
    // worker's thread), which also wakes a stuck waiter, and leak the pool (and what its threads
    // use) if it does not come back.
    struct Cleanup {
        std::shared_ptr<Shared>& shared;
        std::shared_ptr<HeldWaiter>& waiter;
        ws::testing::DetachedCall& call;
        std::unique_ptr<ThreadPool>& pool;
        ~Cleanup() {
            shared->worker.go = true;
            waiter->hold.go = true;
            if (shared->worker_tid.load() != 0) pool->spawn([s = shared] { s->watch.reset(); });
            const bool back =
                call.wait_for(10s * slowdown()) &&
                ws::testing::run_within(10s * slowdown(), [p = pool.get()] { p->wait_idle(); });
            if (!back) {
                (void)pool.release();
                (void)new std::shared_ptr<Shared>(shared);
            }
        }
    } cleanup{shared, waiter, call, owned_pool};

    pool.spawn([shared, &tally] {
        shared->worker_tid = ws::testing::current_thread_id();
        shared->watch =
            std::make_unique<WriteWatch>(&tally, sizeof(tally), &hold_once, &shared->worker);
        if (!shared->watch->available()) {
            shared->why = shared->watch->why_unavailable();
            shared->watch.reset();
            shared->arm_failed = true;
        }
    });
    ASSERT_TRUE(
        wait_until([&] { return shared->worker.paused.load() || shared->arm_failed.load(); },
                   10s * slowdown()))
        << "the worker, out of work after its task, never zeroed its tally of finished tasks "
           "(report_finished)";
    if (shared->arm_failed.load()) WS_SKIP_NOT_AVAILABLE_HERE("on a worker: " << shared->why);
    ASSERT_EQ(pending_of(pool).load(), 1u)
        << "test setup: the worker's one finished task should still be counted";

    const ThreadId worker = shared->worker_tid.load();
    const std::uintptr_t mutex_word = mutex_word_of(pool);
    const Outcome outcome = hold_the_waiter_then_let_the_finisher_go(
        pool, shared->worker, [&] { return futex_word_of(worker) == mutex_word; }, waiter, call);
    if (outcome == Outcome::waiter_could_not_arm)
        WS_SKIP_NOT_AVAILABLE_HERE("on the waiting thread: " << waiter->why);
    ASSERT_NE(outcome, Outcome::waiter_not_held) << "wait_idle never read pending_";
    EXPECT_EQ(outcome, Outcome::returned)
        << "wait_idle did not return within 1 s after the last task finished: " << kLostWakeUp;
}

TEST(Lesson02Ex2, AFailedSpawnsTakeBackWakesAWaitIdleThatHasJustSeenItCounted) {
    // A spawn from outside into an idle pool counts its task (pending_ 1), and its push, under
    // the pool's mutex, throws std::bad_alloc (<ws/testing/failing_new.hpp>); it is held right
    // after it unlocks the mutex, before it takes its count back (a write watch on the mutex's
    // futex word, for the spawning thread, that holds at its first write after the failing
    // allocation). A wait_idle caller is held right after it read pending_ (1) under the mutex.
    // The take-back takes pending_ to zero: with the notification under the mutex the spawn
    // blocks on the mutex, and the waiter, let go, sleeps and is woken; without, wait_idle
    // sleeps on. Then a task spawned by the test wakes it, so that nothing hangs.
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    if (const std::string why = why_no_watchpoints(); !why.empty()) WS_SKIP_NOT_AVAILABLE_HERE(why);
#if !defined(__GLIBC__)
    // The spawner is held at its unlock through the mutex's futex word, where glibc keeps it.
    WS_SKIP_NOT_AVAILABLE_HERE("needs glibc's mutex (its futex word first)");
#endif
    auto owned_pool = std::make_unique<ThreadPool>(1);
    ThreadPool& pool = *owned_pool;
    // First a failed spawn from this thread: the shared queue's deque then needs a new block for
    // its next push, and still does after each failed push (a failed push leaves it unchanged).
    bool threw = false;
    for (int i = 0; i < 1000 && !threw; ++i) {
        ws::Task task([] {});
        ws::testing::fail_allocation_after(0);
        try {
            pool.spawn(std::move(task));
        } catch (const std::bad_alloc&) {
            threw = true;
        }
        ws::testing::disarm_allocation_failures();
    }
    ASSERT_TRUE(threw) << "no spawn from outside threw (did any push allocate?)";
    if (!ws::testing::run_within(2s * slowdown(), [p = owned_pool.get()] { p->wait_idle(); })) {
        (void)owned_pool.release();  // the call still uses it: leak the pool
        FAIL() << "wait_idle did not return after a spawn whose push threw: the failed spawn "
                  "left its task counted in pending_";
    }

    struct Spawner {
        Hold hold;
        std::atomic<ThreadId> tid{0};
        std::atomic<bool> arm_failed{false};
        std::string why;  // written before arm_failed is set
        std::atomic<bool> threw_bad_alloc{false};
        std::atomic<bool> returned{false};
    };
    auto spawner = std::make_shared<Spawner>();
    spawner->hold.armed = false;  // set just before the allocation throws, the mutex held
    spawner->hold.bound = 20s * slowdown();
    auto waiter = std::make_shared<HeldWaiter>();
    ws::testing::DetachedCall call([] {});
    ws::testing::DetachedCall spawn_call([&pool, spawner] {
        spawner->tid = ws::testing::current_thread_id();
        {
            // The pool's mutex is a glibc mutex: its futex word (4 bytes) at its start.
            const auto* word = reinterpret_cast<const volatile std::uint32_t*>(mutex_word_of(pool));
            WriteWatch watch(word, sizeof(*word), &hold_once, &spawner->hold);
            if (!watch.available()) {
                spawner->why = watch.why_unavailable();
                spawner->arm_failed = true;
                return;
            }
            ws::Task task([] {});
            ws::testing::before_each_allocation_failure(
                [](void* hold) noexcept { static_cast<Hold*>(hold)->armed = true; },
                &spawner->hold);
            ws::testing::fail_allocation_after(0);
            try {
                pool.spawn(std::move(task));
            } catch (const std::bad_alloc&) {
                spawner->threw_bad_alloc = true;
            }
            ws::testing::disarm_allocation_failures();
            ws::testing::before_each_allocation_failure(nullptr);
        }
        spawner->returned = true;
    });

    // As in the first test; a spawn (from this thread, which allocates normally) wakes a stuck
    // waiter.
    struct Cleanup {
        std::shared_ptr<Spawner>& spawner;
        std::shared_ptr<HeldWaiter>& waiter;
        ws::testing::DetachedCall& spawn_call;
        ws::testing::DetachedCall& call;
        std::unique_ptr<ThreadPool>& pool;
        ~Cleanup() {
            spawner->hold.go = true;
            waiter->hold.go = true;
            const bool spawned = spawn_call.wait_for(10s * slowdown());
            pool->spawn([] {});
            const bool back =
                spawned && call.wait_for(10s * slowdown()) &&
                ws::testing::run_within(10s * slowdown(), [p = pool.get()] { p->wait_idle(); });
            if (!back) (void)pool.release();
        }
    } cleanup{spawner, waiter, spawn_call, call, owned_pool};

    ASSERT_TRUE(wait_until(
        [&] {
            return spawner->hold.paused.load() || spawner->returned.load() ||
                   spawner->arm_failed.load();
        },
        10s * slowdown()))
        << "the spawn from outside never returned";
    if (spawner->arm_failed.load())
        WS_SKIP_NOT_AVAILABLE_HERE("on the spawning thread: " << spawner->why);
    ASSERT_TRUE(spawner->hold.paused.load())
        << "the spawn from outside returned without unlocking the pool's mutex after its "
           "allocation failed"
        << (spawner->threw_bad_alloc.load() ? "" : " (and did not throw std::bad_alloc)");
    ASSERT_EQ(pending_of(pool).load(), 1u)
        << "test setup: the failed spawn's task should still be counted";

    const ThreadId spawning = spawner->tid.load();
    const std::uintptr_t mutex_word = mutex_word_of(pool);
    const Outcome outcome = hold_the_waiter_then_let_the_finisher_go(
        pool, spawner->hold,
        [&] { return spawner->returned.load() || futex_word_of(spawning) == mutex_word; }, waiter,
        call);
    if (outcome == Outcome::waiter_could_not_arm)
        WS_SKIP_NOT_AVAILABLE_HERE("on the waiting thread: " << waiter->why);
    ASSERT_NE(outcome, Outcome::waiter_not_held) << "wait_idle never read pending_";
    EXPECT_EQ(outcome, Outcome::returned)
        << "wait_idle did not return within 1 s after a spawn whose push threw took its count "
           "back: "
        << kLostWakeUp;
    ASSERT_TRUE(spawn_call.wait_for(10s * slowdown())) << "the failed spawn did not return";
    EXPECT_TRUE(spawner->threw_bad_alloc.load()) << "the failed spawn did not throw std::bad_alloc";
}
