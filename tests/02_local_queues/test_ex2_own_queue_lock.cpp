// Lesson 02, exercise 2: a spawn onto the worker's own queue takes no lock that the other workers
// share. The pool's mutex guards the shared queue (tasks from outside), the first exception and
// wait_idle's sleep; a worker's spawn that took it too would still be correct, only slower, with
// every worker lining up on that one lock again. So the test holds the pool's mutex, without
// touching the pool's members: a spawn from outside moves its task into the shared queue under
// the mutex (ws::Task moves a small callable with the callable's own move constructor), and the
// test's callable waits in its move constructor until the test lets it go on. Meanwhile a task
// on a worker spawns onto its own queue: that spawn must return while the mutex is held.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <ws/task.hpp>
#include <ws/testing/harness.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson02::ThreadPool;

namespace {

// Where a task's callable is moved: on the thread `spawner` it counts its moves, and the move
// numbered `hold_at` (the last one a spawn from outside makes, found by counting a spawn first:
// the one into the shared queue, under the pool's mutex) waits there until `release`.
struct SharedLockHold {
    std::atomic<ws::testing::ThreadId> spawner{0};
    std::atomic<int> hold_at{0};  // 0: hold no move
    std::atomic<int> moves{0};
    std::atomic<bool> holding{false};
    std::atomic<bool> release{false};

    void moved() noexcept {
        if (ws::testing::current_thread_id() != spawner.load()) return;
        if (moves.fetch_add(1) + 1 != hold_at.load()) return;
        holding = true;
        ws::testing::wait_until([&] { return release.load(); }, 10s * ws::testing::slowdown());
    }
};

class HeldWhereMoved {
  public:
    explicit HeldWhereMoved(std::shared_ptr<SharedLockHold> hold) : hold_(std::move(hold)) {}
    HeldWhereMoved(HeldWhereMoved&& other) noexcept : hold_(std::move(other.hold_)) {
        if (hold_) hold_->moved();
    }
    HeldWhereMoved(const HeldWhereMoved&) = delete;
    HeldWhereMoved& operator=(const HeldWhereMoved&) = delete;
    HeldWhereMoved& operator=(HeldWhereMoved&&) = delete;
    ~HeldWhereMoved() = default;
    void operator()() const {}

  private:
    std::shared_ptr<SharedLockHold> hold_;
};
static_assert(ws::Task::fits_inline<HeldWhereMoved>(),
              "moving the Task must move the callable, with its move constructor");

// Spawns a HeldWhereMoved from the calling thread; returns how many moves of it the spawn made.
int spawn_held_where_moved(ThreadPool& pool, const std::shared_ptr<SharedLockHold>& hold) {
    ws::Task task{HeldWhereMoved{hold}};
    hold->spawner = ws::testing::current_thread_id();
    hold->moves = 0;  // count from here: the moves of spawn itself
    pool.spawn(std::move(task));
    return hold->moves.load();
}

}  // namespace

TEST(Lesson02Ex2, ASpawnOntoTheWorkersOwnQueueTakesNoLockTheOtherWorkersShare) {
    // A task runs on one worker. A spawn from outside is held with the pool's mutex locked (its
    // task's move into the shared queue waits), and the other worker, idle, is seen blocked on
    // that mutex as it looks into the shared queue. Then the task spawns a child onto its own
    // worker's queue: that spawn must return while the mutex is still held. A spawn that takes
    // the pool's mutex as well (one lock around both paths, say) blocks on it until the test
    // lets the spawn from outside go on.
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    using ws::testing::slowdown;
    using ws::testing::ThreadId;
    using ws::testing::wait_until;
    const auto before = ws::testing::thread_ids();
    auto pool = std::make_unique<ThreadPool>(2);
    const auto workers = ws::testing::new_threads(before);
    ASSERT_EQ(workers.size(), 2u);

    // How many moves a spawn from outside makes of its task: the last is the one to hold.
    const int moves = spawn_held_where_moved(*pool, std::make_shared<SharedLockHold>());
    pool->wait_idle();
    ASSERT_GT(moves, 0);

    struct Shared {
        std::atomic<ThreadId> tid{0};
        std::atomic<bool> go{false};
        std::atomic<bool> spawned{false};
        std::atomic<bool> spawn_threw{false};
        std::atomic<bool> child_ran{false};
    };
    auto shared = std::make_shared<Shared>();
    pool->spawn([&pool = *pool, shared] {
        shared->tid = ws::testing::current_thread_id();
        wait_until([&] { return shared->go.load(); }, 10s * slowdown());
        try {
            pool.spawn([shared] { shared->child_ran = true; });
        } catch (...) {
            shared->spawn_threw = true;
            throw;
        }
        shared->spawned = true;
    });
    const bool started = wait_until([&] { return shared->tid.load() != 0; }, 10s * slowdown());
    const ThreadId spawning_worker = shared->tid.load();
    const ThreadId other = spawning_worker == workers[0] ? workers[1] : workers[0];

    auto hold = std::make_shared<SharedLockHold>();
    hold->hold_at = moves;
    ws::testing::DetachedCall outside(
        [&pool = *pool, hold] { (void)spawn_held_where_moved(pool, hold); });
    const bool held = started && wait_until([&] { return hold->holding.load(); }, 10s * slowdown());
    // The other worker finds nothing on its own queue and looks into the shared one: with the
    // pool's mutex held, it blocks there. Its futex word is the mutex's.
    const bool mutex_held = held && ws::testing::wait_until_all(
                                        {other}, ws::testing::blocked_on_futex, 10s * slowdown());
    const std::uintptr_t mutex_word = mutex_held ? ws::testing::futex_word_of(other) : 0;
    shared->go = true;
    // Until the task's spawn has returned, or the task's worker has stayed blocked on the pool's
    // mutex for 20 polls in a row (it would stay so until the spawn from outside goes on).
    int blocked_polls = 0;
    wait_until(
        [&] {
            if (shared->spawned.load() || shared->spawn_threw.load()) return true;
            blocked_polls =
                mutex_word != 0 && ws::testing::futex_word_of(spawning_worker) == mutex_word
                    ? blocked_polls + 1
                    : 0;
            return blocked_polls >= 20;
        },
        10s * slowdown());
    const bool spawned_while_held = shared->spawned.load();
    hold->release = true;  // on every path: the spawn from outside goes on
    if (!outside.wait_for(10s * slowdown())) {
        (void)pool.release();  // the spawn from outside still uses it: leak the pool
        FAIL() << "the spawn from outside did not return";
    }
    if (const auto error = outside.error()) std::rethrow_exception(error);
    ASSERT_NO_THROW(pool->wait_idle());  // what the task's spawn threw, if it did
    ASSERT_TRUE(started) << "the task did not start";
    ASSERT_TRUE(held) << "the spawn from outside never moved its task into the queue";
    ASSERT_TRUE(mutex_held)
        << "while the spawn from outside moved its task into the shared queue, the idle worker "
           "was not seen blocked on the pool's mutex: move the task into shared_ under mutex_";
    EXPECT_TRUE(spawned_while_held)
        << "a task's spawn onto its own worker's queue waited while another thread held the "
           "pool's mutex: a worker's spawn takes no lock that the other workers share (only its "
           "own queue's), or every spawn lines up on that one mutex again (a spawn that sends "
           "the task to the shared queue takes it too)";
    EXPECT_TRUE(shared->child_ran.load());
}
