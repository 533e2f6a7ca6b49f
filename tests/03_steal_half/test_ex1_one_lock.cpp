// Lesson 03, exercise 1, the rule "one visit, one lock": a batch leaves the victim's queue under
// one lock, so no other thief can take a task from the middle of it. A steal_half that calls
// steal_one() once per task locks once per task, and returns a batch with a hole in it whenever
// another thief gets the lock in between; here that moment is forced instead of hoped for. A
// lock_guard inside the loop lets go of the lock between two tasks too, but takes it back at
// once, mostly before the other thief runs: the letting go is seen instead, as the other thief's
// wake-up (in /proc). And the half is counted under the same lock as the batch is taken: a count
// read through size(), which takes the lock and lets go of it, may be stale by the time the
// batch is taken; that letting go wakes a thief waiting for the lock, and is seen the same way.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

#include "exercises.hpp"
#include "worker_queue.hpp"

using namespace std::chrono_literals;
using ws::Task;
using ws::lesson03::WorkerQueue;
using ws::testing::slowdown;
using ws::testing::ThreadId;

namespace {

// What the test shares with its two thieves and with the task whose moves it watches. Shared
// through a shared_ptr: a thread that never returns keeps it alive.
struct CutIn {
    WorkerQueue queue;
    std::vector<int> log;  // what the tasks ran, in order
    std::vector<Task> batch;
    std::optional<Task> cut;  // what the second thief's steal_one took
    std::atomic<ThreadId> thief{0};
    std::atomic<ThreadId> other{0};
    std::atomic<long> other_sleeps{-1};    // the second thief's sleeps, once blocked on the lock
    std::atomic<int> moves{0};             // moves of the watched task on the thief's thread
    std::atomic<bool> next_moved{false};   // task 1 moved on the thief's thread after task 0
    std::atomic<bool> other_woken{false};  // ... and by then the second thief had been woken
    std::atomic<bool> first_move{false};
    std::atomic<bool> go_on{false};
    std::atomic<bool> other_done{false};
};

// The oldest task. Its first move on the thief's thread (out of the queue, under the queue's
// lock in any steal_half) waits until the test lets it go on, with the second thief blocked on
// that lock by then. Each later move there waits until the second thief is either blocked on the
// lock (the thief still holds it) or done (the thief let go of it in the middle of its batch).
// It points to the state it lives in (in the queue, then in a batch): no shared_ptr cycle.
struct WatchedTask {
    CutIn* state;

    explicit WatchedTask(CutIn* s) : state(s) {}
    WatchedTask(WatchedTask&& other) noexcept : state(std::exchange(other.state, nullptr)) {
        if (!state || state->thief.load() != ws::testing::current_thread_id()) return;
        if (state->moves.fetch_add(1) == 0) {
            state->first_move = true;
            ws::testing::wait_until([&] { return state->go_on.load(); }, 10s * slowdown());
            return;
        }
        ws::testing::wait_until(
            [&] { return state->other_done.load() || ws::testing::blocked_on_futex(state->other); },
            10s * slowdown());
    }
    WatchedTask& operator=(WatchedTask&&) = delete;
    void operator()() const { state->log.push_back(0); }
};

// The second oldest task. Its first move on the thief's thread after task 0's first one takes it
// out of the queue: with one lock for the batch, the lock task 0 was taken under is still held,
// and the second thief, blocked on it since, has not been woken. Had the thief let go of the
// lock in between, however briefly, the unlock would have woken the second thief: it is then
// runnable, or has taken the lock (and task 1: the batch has a hole), or has gone back to sleep
// on it, one sleep more.
struct NextTask {
    CutIn* state;

    explicit NextTask(CutIn* s) : state(s) {}
    NextTask(NextTask&& other) noexcept : state(std::exchange(other.state, nullptr)) {
        if (!state || state->thief.load() != ws::testing::current_thread_id()) return;
        if (!state->go_on.load() || state->next_moved.exchange(true)) return;
        state->other_woken =
            !ws::testing::still_asleep_since(state->other.load(), state->other_sleeps.load());
    }
    NextTask& operator=(NextTask&&) = delete;
    void operator()() const { state->log.push_back(1); }
};

}  // namespace

TEST(Lesson03Ex1, NoOtherThiefTakesATaskFromTheMiddleOfABatch) {
    // Four tasks, 0 the oldest. The thief's steal_half stops inside the move of task 0; a second
    // thief's steal_one then waits for the queue's lock; the thief goes on. One lock for the
    // whole batch: the thief takes 0 and 1, the second thief then 2. A lock per task: the second
    // thief takes 1 between the thief's two visits, and the batch is 0 and 2; or the thief takes
    // the lock back first, and the second thief was woken for nothing (see NextTask).
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    using ws::testing::DetachedCall;
    auto state = std::make_shared<CutIn>();
    state->queue.push(WatchedTask(state.get()));
    state->queue.push(NextTask(state.get()));
    for (int i = 2; i <= 3; ++i)
        state->queue.push([log = &state->log, i] { log->push_back(i); });
    struct GoOnAtExit {  // whatever happens below, the thief is let go before the test returns
        CutIn& state;
        ~GoOnAtExit() { state.go_on = true; }
    } go_on_at_exit{*state};

    DetachedCall thief([state] {
        state->thief = ws::testing::current_thread_id();
        state->batch = state->queue.steal_half();
    });
    ASSERT_TRUE(ws::testing::wait_until(
        [&] { return state->first_move.load() || thief.wait_for(0ms); }, 10s * slowdown()));
    if (!state->first_move.load()) {
        if (const auto error = thief.error()) std::rethrow_exception(error);
        FAIL() << "steal_half returned without moving the oldest task";
    }
    DetachedCall other([state] {
        state->other = ws::testing::current_thread_id();
        state->cut = state->queue.steal_one();
        state->other_done = true;
    });
    ASSERT_TRUE(
        ws::testing::wait_until([&] { return state->other.load() != 0; }, 10s * slowdown()));
    ASSERT_TRUE(ws::testing::wait_until_all({state->other.load()}, ws::testing::blocked_on_futex,
                                            10s * slowdown()))
        << "steal_one did not wait for the queue's lock while steal_half was moving a task out: "
           "is that move made under the lock?";
    state->other_sleeps = ws::testing::sleeps_so_far(state->other.load());
    state->go_on = true;
    ASSERT_TRUE(thief.wait_for(10s * slowdown())) << "steal_half never returned";
    ASSERT_TRUE(other.wait_for(10s * slowdown())) << "steal_one never returned";
    if (const auto error = thief.error()) std::rethrow_exception(error);

    EXPECT_FALSE(state->other_woken.load())
        << "the second thief, waiting for the queue's lock, was woken while steal_half was still "
           "taking its batch out: the lock was let go between two tasks (a lock_guard inside "
           "the loop?). One visit, one lock: take the whole batch out under a single lock";
    for (Task& task : state->batch)
        task();
    EXPECT_EQ(state->log, (std::vector<int>{0, 1}))
        << "the batch is not the two oldest tasks: another thief took one from the middle of it. "
           "One visit, one lock: take the whole batch out under a single lock";
    state->log.clear();
    ASSERT_TRUE(state->cut.has_value());
    (*state->cut)();
    EXPECT_EQ(state->log, (std::vector<int>{2})) << "the second thief must get the next oldest";
    EXPECT_EQ(state->queue.size(), 1u);
}

namespace {

// What the test below shares with its three threads and with the two tasks whose moves it
// watches. Shared through a shared_ptr: a thread that never returns keeps it alive.
struct Recount {
    WorkerQueue queue;
    std::vector<int> log;  // what the tasks ran, in order
    std::vector<Task> batch;
    std::optional<Task> cut;  // what the second thief's steal_one took
    std::atomic<ThreadId> owner{0};
    std::atomic<ThreadId> thief{0};
    std::atomic<ThreadId> other{0};
    std::atomic<bool> holding{false};  // the owner's pop is stopped inside a move, under the lock
    std::atomic<bool> release{false};
    std::atomic<long> other_sleeps{-1};    // the second thief's sleeps, once blocked on the lock
    std::atomic<bool> first_moved{false};  // the oldest task moved on the thief's thread
    std::atomic<bool> other_woken{false};  // ... and by then the second thief had been woken
};

// The newest task: the owner's pop moves it out under the queue's lock, and waits inside that
// move until the test releases it.
struct HeldByTheOwner {
    Recount* state;

    explicit HeldByTheOwner(Recount* s) : state(s) {}
    HeldByTheOwner(HeldByTheOwner&& other) noexcept : state(std::exchange(other.state, nullptr)) {
        if (!state || state->owner.load() != ws::testing::current_thread_id() ||
            state->holding.exchange(true)) {
            return;
        }
        ws::testing::wait_until([&] { return state->release.load(); }, 10s * slowdown());
    }
    HeldByTheOwner& operator=(HeldByTheOwner&&) = delete;
    void operator()() const {}
};

// The oldest task. Its first move on the thief's thread is the first move of the batch, under
// the lock the batch is taken under: whether the second thief has been woken since it was seen
// waiting for the lock says whether the thief let go of the lock after it got it.
struct FirstOfTheBatch {
    Recount* state;

    explicit FirstOfTheBatch(Recount* s) : state(s) {}
    FirstOfTheBatch(FirstOfTheBatch&& other) noexcept : state(std::exchange(other.state, nullptr)) {
        if (!state || state->thief.load() != ws::testing::current_thread_id() ||
            state->first_moved.exchange(true)) {
            return;
        }
        state->other_woken =
            !ws::testing::still_asleep_since(state->other.load(), state->other_sleeps.load());
    }
    FirstOfTheBatch& operator=(FirstOfTheBatch&&) = delete;
    void operator()() const { state->log.push_back(0); }
};

}  // namespace

TEST(Lesson03Ex1, TheHalfIsCountedUnderTheLockTheBatchIsTakenUnder) {
    // Five tasks, 0 the oldest, 4 the newest. The owner's pop of task 4 stops inside its move,
    // holding the queue's lock; the thief's steal_half, then a second thief's steal_one, wait for
    // that lock; the owner lets go. The thief, the first to wait, gets the lock (a mutex's unlock
    // wakes one waiter, the one that has waited longest). One lock from count to batch: the thief
    // counts 4 tasks, takes 0 and 1, and only then wakes the second thief, who takes 2. A count
    // taken under a lock of its own (size()) lets go of the lock before the batch is taken, and
    // that unlock wakes the second thief, free from then on to take tasks the thief has counted:
    // the thief's count is stale, and its batch may be more than half of what is left.
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    using ws::testing::DetachedCall;
    auto state = std::make_shared<Recount>();
    state->queue.push(FirstOfTheBatch(state.get()));
    for (int i = 1; i <= 3; ++i)
        state->queue.push([log = &state->log, i] { log->push_back(i); });
    state->queue.push(HeldByTheOwner(state.get()));
    struct ReleaseAtExit {  // whatever happens below, the owner lets go before the test returns
        Recount& state;
        ~ReleaseAtExit() { state.release = true; }
    } release_at_exit{*state};

    DetachedCall owner([state] {
        state->owner = ws::testing::current_thread_id();
        (void)state->queue.pop();
    });
    ASSERT_TRUE(ws::testing::wait_until([&] { return state->holding.load(); }, 10s * slowdown()))
        << "the owner's pop did not move its task";
    DetachedCall thief([state] {
        state->thief = ws::testing::current_thread_id();
        state->batch = state->queue.steal_half();
    });
    ASSERT_TRUE(ws::testing::wait_until(
        [&] {
            const ThreadId tid = state->thief.load();
            return (tid != 0 && ws::testing::blocked_on_futex(tid)) || thief.wait_for(0ms);
        },
        10s * slowdown()));
    if (thief.wait_for(0ms)) {
        if (const auto error = thief.error()) std::rethrow_exception(error);
        FAIL() << "steal_half returned while the owner held the queue's lock: does it lock it?";
    }
    ASSERT_TRUE(ws::testing::wait_until_all({state->thief.load()}, ws::testing::blocked_on_futex,
                                            10s * slowdown()))
        << "steal_half did not wait for the queue's lock, which the owner holds";
    DetachedCall other([state] {
        state->other = ws::testing::current_thread_id();
        state->cut = state->queue.steal_one();
    });
    ASSERT_TRUE(
        ws::testing::wait_until([&] { return state->other.load() != 0; }, 10s * slowdown()));
    ASSERT_TRUE(ws::testing::wait_until_all({state->other.load()}, ws::testing::blocked_on_futex,
                                            10s * slowdown()))
        << "steal_one did not wait for the queue's lock, which the owner holds";
    state->other_sleeps = ws::testing::sleeps_so_far(state->other.load());
    state->release = true;
    ASSERT_TRUE(owner.wait_for(10s * slowdown())) << "the owner's pop never returned";
    ASSERT_TRUE(thief.wait_for(10s * slowdown())) << "steal_half never returned";
    ASSERT_TRUE(other.wait_for(10s * slowdown())) << "steal_one never returned";
    if (const auto error = thief.error()) std::rethrow_exception(error);

    EXPECT_FALSE(state->other_woken.load())
        << "the second thief, waiting for the queue's lock, was woken before steal_half took its "
           "first task: steal_half let go of the lock after counting (size() takes the lock "
           "itself?), and from then on its count could be stale. Count and take the batch under "
           "one lock";
    for (Task& task : state->batch)
        task();
    EXPECT_EQ(state->log, (std::vector<int>{0, 1}))
        << "the batch is not the two oldest of the four tasks left: the second thief took one "
           "between steal_half's count and its batch. Count and take the batch under one lock";
    state->log.clear();
    ASSERT_TRUE(state->cut.has_value());
    (*state->cut)();
    EXPECT_EQ(state->log, (std::vector<int>{2})) << "the second thief must get the next oldest";
    EXPECT_EQ(state->queue.size(), 1u);
}
