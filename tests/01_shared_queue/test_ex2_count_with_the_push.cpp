// Lesson 01, exercise 2: spawn counts the task pending in the critical section that queues it.
// Counted in a critical section of its own (after the push's, before or after the notify), the
// count comes too late: between the push's unlock and the count's lock, a worker that is awake
// anyway (it has just finished a task and takes the mutex to look at the queue) can take the
// task, run it and count it finished first. The window holds no code of the test's own, so the
// test holds the spawning thread there with a hardware watchpoint (<ws/testing/write_watch.hpp>)
// on the pool's mutex: armed while the task is moved into the queue (under the mutex; ws::Task
// moves a small callable with the callable's own move constructor), it stops the thread right
// after its next store to the mutex's futex word, the unlock. The word's address comes from
// /proc: a thread blocked on the mutex shows it (ws::testing::futex_word_of). Where no watchpoint
// can be armed (under ThreadSanitizer, or where perf events are forbidden) the scheduler holds
// the spawning thread instead, less surely (see run_push_count_round).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <ws/task.hpp>
#include <ws/testing/harness.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>
#include <ws/testing/write_watch.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson01::ThreadPool;

namespace {

// A spawn's task whose callable, on the thread `spawner`, counts its moves; at the move numbered
// `hold_at` (the last one a spawn makes, found by counting a spawn first: the one into the
// queue, under the pool's mutex) it either waits there until `release` (mutex_word 0), or arms
// a write watch on `mutex_word` for its thread, so that the thread stops right after its next
// store there, the unlock, until `go`.
struct UnlockHold {
    std::atomic<ws::testing::ThreadId> spawner{0};
    std::atomic<int> hold_at{0};  // 0: hold no move
    std::atomic<int> moves{0};
    std::atomic<bool> holding{false};  // in the move, or stopped after the unlock
    std::atomic<bool> release{false};
    std::uintptr_t mutex_word = 0;                 // set before the spawn starts
    std::optional<ws::testing::WriteWatch> watch;  // only the spawning thread touches it
    std::string why_unavailable;                   // written before arm_failed is set
    std::atomic<bool> arm_failed{false};
    std::atomic<bool> go{false};
    std::chrono::nanoseconds bound{0};
    std::atomic<bool> spawn_returned{false};
    std::atomic<bool> ran{false};                // the task has run
    std::atomic<bool> ran_before_return{false};  // ... before its spawn returned

    void moved() noexcept {
        if (ws::testing::current_thread_id() != spawner.load()) return;
        if (moves.fetch_add(1) + 1 != hold_at.load()) return;
        if (mutex_word == 0) {
            holding = true;
            ws::testing::wait_until([&] { return release.load(); }, 10s * ws::testing::slowdown());
            return;
        }
        watch.emplace(reinterpret_cast<const volatile void*>(mutex_word), sizeof(std::uint32_t),
                      &UnlockHold::stop_once, this);
        if (!watch->available()) {
            why_unavailable = watch->why_unavailable();
            arm_failed = true;
            watch.reset();
        }
    }

    // The watch's on_write: runs in the SIGTRAP handler, so lock-free atomics and
    // ws::testing::wait_for_flag only. Its atomics are seq_cst, as are the test's loads and
    // stores of them: flags that order nothing else. Stops the thread at the first store only
    // (a spawn that locks the mutex again stores there again).
    static void stop_once(void* context) noexcept {
        auto& self = *static_cast<UnlockHold*>(context);
        if (self.holding.exchange(true)) return;
        (void)ws::testing::wait_for_flag(self.go, self.bound);
    }
};
static_assert(std::atomic<bool>::is_always_lock_free);

class StoppedWhereMoved {
  public:
    explicit StoppedWhereMoved(std::shared_ptr<UnlockHold> hold) : hold_(std::move(hold)) {}
    StoppedWhereMoved(StoppedWhereMoved&& other) noexcept : hold_(std::move(other.hold_)) {
        if (hold_) hold_->moved();
    }
    StoppedWhereMoved(const StoppedWhereMoved&) = delete;
    StoppedWhereMoved& operator=(const StoppedWhereMoved&) = delete;
    StoppedWhereMoved& operator=(StoppedWhereMoved&&) = delete;
    ~StoppedWhereMoved() = default;
    void operator()() const {
        hold_->ran_before_return = !hold_->spawn_returned.load();
        hold_->ran = true;
    }

  private:
    std::shared_ptr<UnlockHold> hold_;
};
static_assert(ws::Task::fits_inline<StoppedWhereMoved>(),
              "moving the Task must move the callable, with its move constructor");

// Spawns a StoppedWhereMoved from the calling thread; returns how many moves of it the spawn
// made there. The watch, if one was armed, is disarmed on this thread once spawn has returned.
int spawn_stopped_where_moved(ThreadPool& pool, const std::shared_ptr<UnlockHold>& hold) {
    ws::Task task{StoppedWhereMoved{hold}};
    hold->spawner = ws::testing::current_thread_id();
    hold->moves = 0;  // count from here: the moves of spawn itself
    pool.spawn(std::move(task));
    hold->spawn_returned = true;
    hold->watch.reset();
    return hold->moves.load();
}

// Why a write watchpoint cannot be armed here; empty if it can.
std::string why_no_write_watch() {
    std::uint32_t probe = 0;
    UnlockHold unused;
    ws::testing::WriteWatch watch(&probe, sizeof(probe), &UnlockHold::stop_once, &unused);
    return watch.available() ? std::string{} : watch.why_unavailable();
}

// What one round saw.
struct PushCountRound {
    std::string failure;        // why the round could not be set up; empty if it could
    bool leak = false;          // a thread may still use the pool: the caller must leak it
    std::string not_available;  // the watch could not be armed: why
    bool forced = false;        // the new task ran before its spawn returned
    bool early = false;         // wait_idle returned while the first task still ran
};

// One round: one worker runs a task until the round ends it, the other a task that waits for a
// flag, and a thread sleeps in wait_idle (pinned to `cpu`, with a short slice). Then a spawn
// from outside queues a third task, and the second task ends while that spawn is held between
// the push's critical section and whatever comes after: with `watch`, stopped right after its
// store to the mutex's word `mutex_word` (the unlock), before the second task ends; without,
// held inside the task's move (under the mutex) until the second task's worker, pinned to `cpu`
// with a short slice, is blocked on the mutex, the spawning thread born SCHED_IDLE on `cpu` and
// a thread spinning there while it goes on, so that the worker its unlock wakes runs first.
PushCountRound run_push_count_round(ThreadPool& pool, std::uintptr_t mutex_word, int moves,
                                    bool watch, int cpu) {
    using ws::testing::DetachedCall;
    using ws::testing::slowdown;
    using ws::testing::ThreadId;
    using ws::testing::wait_until;
    PushCountRound round;
    pool.wait_idle();
    struct Shared {
        std::atomic<ThreadId> busy{0}, finisher{0}, waiter{0};
        std::atomic<bool> end_busy{false}, end_finisher{false}, returned{false};
    };
    auto shared = std::make_shared<Shared>();
    auto on_another_word = [mutex_word](ThreadId tid) {
        const std::uintptr_t word = ws::testing::futex_word_of(tid);
        return word != 0 && word != mutex_word;  // asleep on a condition variable
    };
    pool.spawn([shared] {
        shared->busy = ws::testing::current_thread_id();
        wait_until([&] { return shared->end_busy.load(); }, 10s * slowdown());
    });
    const bool busy_started =
        wait_until([&] { return shared->busy.load() != 0; }, 10s * slowdown());
    pool.spawn([shared] {
        shared->finisher = ws::testing::current_thread_id();
        wait_until([&] { return shared->end_finisher.load(); }, 10s * slowdown());
    });
    const bool both_started =
        busy_started && wait_until([&] { return shared->finisher.load() != 0; }, 10s * slowdown());
    const ThreadId finisher = shared->finisher.load();
    if (both_started) {
        ws::testing::pin_to_cpu(finisher, cpu);  // a worker of the pool: it ends with the pool
        ws::testing::request_short_slice(finisher);
    }
    DetachedCall waiter([&pool, shared, cpu] {
        const auto me = ws::testing::current_thread_id();
        ws::testing::pin_to_cpu(me, cpu);
        ws::testing::request_short_slice(me);
        shared->waiter = me;
        pool.wait_idle();
        shared->returned = true;
    });
    const bool waiting =
        both_started && wait_until([&] { return shared->waiter.load() != 0; }, 10s * slowdown()) &&
        ws::testing::wait_until_all({shared->waiter.load()}, on_another_word, 10s * slowdown());

    auto hold = std::make_shared<UnlockHold>();
    hold->hold_at = moves;
    hold->mutex_word = watch ? mutex_word : 0;
    hold->bound = 20s * slowdown();
    std::optional<DetachedCall> spawner;
    bool held = false;
    if (waiting) {
        if (watch) {
            spawner.emplace([&pool, hold] { (void)spawn_stopped_where_moved(pool, hold); });
        } else {
            spawner.emplace([&pool, hold, cpu] {
                ws::testing::call_born_idle_on(
                    cpu, [&] { (void)spawn_stopped_where_moved(pool, hold); });
            });
        }
        held = wait_until([&] { return hold->holding.load() || hold->arm_failed.load(); },
                          10s * slowdown()) &&
               hold->holding.load();
    }
    if (held) {
        shared->end_finisher = true;
        std::optional<ws::testing::SpinnerOnCpu> spinner;
        if (!watch) {
            // The second task's worker blocks on the mutex the spawn holds; then the spawn goes
            // on, and its unlock wakes that worker, which runs before the spawning thread.
            wait_until([&] { return ws::testing::futex_word_of(finisher) == mutex_word; },
                       10s * slowdown());
            spinner.emplace(cpu);
            hold->release = true;
        }
        // That worker runs the new task and goes to sleep on the condition variable.
        wait_until([&] { return hold->ran.load(); }, 10s * slowdown());
        (void)ws::testing::wait_until_all({finisher}, on_another_word, 10s * slowdown());
        // Whether wait_idle has returned, once it has either returned or slept on for 50 polls
        // in a row: if the count reached zero, it was woken before that worker went to sleep.
        int asleep_polls = 0;
        wait_until(
            [&] {
                if (shared->returned.load()) return true;
                asleep_polls = on_another_word(shared->waiter.load()) ? asleep_polls + 1 : 0;
                return asleep_polls >= 50;
            },
            10s * slowdown());
        round.early = shared->returned.load();
    }
    // On every path: the spawn goes on, both tasks end, and wait_idle returns.
    hold->go = true;
    hold->release = true;
    shared->end_finisher = true;
    shared->end_busy = true;
    if ((spawner && !spawner->wait_for(10s * slowdown())) || !waiter.wait_for(10s * slowdown())) {
        round.leak = true;
        round.failure = "a spawn, or wait_idle, did not return";
        return round;
    }
    if (spawner) {
        if (const auto error = spawner->error()) std::rethrow_exception(error);
    }
    if (const auto error = waiter.error()) std::rethrow_exception(error);
    round.forced = hold->ran_before_return.load();
    if (!both_started) {
        round.failure = "the two tasks did not run at the same time on the two workers";
    } else if (!waiting) {
        round.failure = "wait_idle did not go to sleep while two tasks ran";
    } else if (hold->arm_failed.load()) {
        round.not_available = hold->why_unavailable;
    } else if (!held) {
        round.failure = watch ? "the spawn was not seen unlocking the pool's mutex after it "
                                "queued the task"
                              : "the spawn never moved its task into the queue";
    }
    return round;
}

}  // namespace

TEST(Lesson01Ex2, WaitIdleWaitsForATaskWhoseSiblingRanBetweenThePushAndTheCount) {
    // One worker runs a task that goes on until the test ends it, another a task that waits for
    // a flag, and a thread sleeps in wait_idle (3 tasks pending, counting the one to come). A
    // spawn from outside is stopped right after it unlocks the mutex under which it queued its
    // task. Then the second task finishes: its worker, awake, takes the mutex, counts it
    // finished, finds the new task, runs it and counts it finished too, and goes to sleep, all
    // while the spawn is stopped. Counted with the push, the count is still 1 (the first task);
    // counted only afterwards, it reaches 0 and wait_idle returns while the first task runs.
    // Where no watchpoint can be armed (under ThreadSanitizer, or where perf events are
    // forbidden) the scheduler holds the spawn instead (see run_push_count_round): up to 6
    // rounds, until 3 were forced (the new task ran before its spawn returned).
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc, sched_setscheduler)";
    using ws::testing::DetachedCall;
    using ws::testing::slowdown;
    using ws::testing::ThreadId;
    using ws::testing::wait_until;
    const bool watch = why_no_write_watch().empty();
    const int cpu = ws::testing::a_cpu_of_this_thread();
    ASSERT_GE(cpu, 0);
    auto pool = std::make_unique<ThreadPool>(2);

    // How many moves a spawn from outside makes of its task: the last is the one to hold.
    const int moves = spawn_stopped_where_moved(*pool, std::make_shared<UnlockHold>());
    pool->wait_idle();
    ASSERT_GT(moves, 0);
    // The mutex's futex word: a stats() call blocks on the mutex while a spawn holds it.
    std::uintptr_t mutex_word = 0;
    {
        auto hold = std::make_shared<UnlockHold>();
        hold->hold_at = moves;
        DetachedCall spawner(
            [&pool = *pool, hold] { (void)spawn_stopped_where_moved(pool, hold); });
        auto reader = std::make_shared<std::atomic<ThreadId>>(0);
        const bool held = wait_until([&] { return hold->holding.load(); }, 10s * slowdown());
        DetachedCall stats([&pool = *pool, reader] {
            *reader = ws::testing::current_thread_id();
            (void)pool.stats();
        });
        if (held && wait_until([&] { return reader->load() != 0; }, 10s * slowdown()) &&
            ws::testing::wait_until_all({reader->load()}, ws::testing::blocked_on_futex,
                                        10s * slowdown())) {
            mutex_word = ws::testing::futex_word_of(reader->load());
        }
        hold->release = true;
        if (!spawner.wait_for(10s * slowdown()) || !stats.wait_for(10s * slowdown())) {
            (void)pool.release();  // a thread still uses it: leak the pool
            FAIL() << "a spawn, or stats(), did not return";
        }
        if (const auto error = spawner.error()) std::rethrow_exception(error);
        ASSERT_TRUE(held) << "the spawn never moved its task into the queue";
        ASSERT_NE(mutex_word, 0u)
            << "stats() was not seen blocked on the pool's mutex while a spawn moved its task "
               "into the queue: queue_ is touched only under mutex_";
    }

    int forced = 0;
    for (int attempt = 1; attempt <= (watch ? 1 : 6) && forced < 3; ++attempt) {
        const PushCountRound round = run_push_count_round(*pool, mutex_word, moves, watch, cpu);
        if (round.leak) (void)pool.release();  // a thread still uses it: leak the pool
        ASSERT_TRUE(round.failure.empty()) << round.failure;
        if (!round.not_available.empty()) WS_SKIP_NOT_AVAILABLE_HERE(round.not_available);
        ASSERT_FALSE(round.early)
            << "wait_idle returned while a task still ran (round " << attempt
            << "): a worker took the new task as soon as the push's critical section ended, ran "
               "it and counted it finished before spawn counted it pending. Count the task in "
               "the same critical section that queues it, before any worker can take it";
        if (round.forced) ++forced;
        if (watch) {
            ASSERT_TRUE(round.forced)
                << "the task was not run while its spawn was stopped after queuing it";
        }
    }
    if (forced == 0) GTEST_SKIP() << "no spawned task ran before its spawn returned";
}
