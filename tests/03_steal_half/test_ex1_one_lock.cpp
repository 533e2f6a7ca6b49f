// Lesson 03, exercise 1, the rule "one visit, one lock": a batch leaves the victim's queue under
// one lock, so no other thief can take a task from the middle of it. A steal_half that calls
// steal_one() once per task locks once per task, and returns a batch with a hole in it whenever
// another thief gets the lock in between; here that moment is forced instead of hoped for. A
// lock_guard inside the loop lets go of the lock between two tasks too, but takes it back at
// once, mostly before the other thief runs: the letting go is seen instead, as the other thief's
// wake-up (in /proc).
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
