// Lesson 02, exercise 2: a worker spawns onto its own queue and runs its own newest task first.
// Tasks from outside still go through the shared queue, and lesson 01's contract still holds.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/pool_checks.hpp>
#include <ws/testing/task_trees.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson02::ThreadPool;
using ws::testing::slowdown;
using ws::testing::wait_until;

TEST(Lesson02Ex2, ZeroWorkersIsAnError) {
    EXPECT_THROW(ThreadPool pool(0), std::invalid_argument);
}

TEST(Lesson02Ex2, OnOneWorkerTasksSpawnedByATaskRunNewestFirst) {
    std::vector<int> log;  // only the one worker writes it; wait_idle orders the reads after
    ThreadPool pool(1);
    pool.spawn([&] {
        for (int i = 1; i <= 5; ++i)
            pool.spawn([&log, i] { log.push_back(i); });
    });
    pool.wait_idle();
    EXPECT_EQ(log, (std::vector<int>{5, 4, 3, 2, 1}))
        << "a task spawned by a worker goes to the back of that worker's own queue, and the "
           "worker pops its newest task first";
}

TEST(Lesson02Ex2, OnOneWorkerTasksFromOutsideRunOldestFirst) {
    std::vector<int> log;
    ThreadPool pool(1);
    for (int i = 1; i <= 5; ++i)
        pool.spawn([&log, i] { log.push_back(i); });
    pool.wait_idle();
    EXPECT_EQ(log, (std::vector<int>{1, 2, 3, 4, 5}))
        << "tasks from outside go through the shared queue, oldest first";
}

TEST(Lesson02Ex2, EveryOneOf200000TasksRunsExactlyOnce) {
    // 1,000 parents from two outside threads (shared queue), each spawning 199 children from
    // inside the pool (local queues): 200,000 tasks.
    constexpr std::size_t kParents = 1000, kChildren = 199, kPerParent = 1 + kChildren;
    ws::testing::ExactlyOnce seen(kParents * kPerParent);
    ThreadPool pool(2);
    auto spawn_parents = [&](std::size_t from, std::size_t to) {
        for (std::size_t p = from; p < to; ++p) {
            pool.spawn([&, p] {
                seen.mark(p * kPerParent);
                for (std::size_t c = 1; c <= kChildren; ++c)
                    pool.spawn([&seen, id = p * kPerParent + c] { seen.mark(id); });
            });
        }
    };
    std::thread a(spawn_parents, 0, kParents / 2), b(spawn_parents, kParents / 2, kParents);
    a.join();
    b.join();
    pool.wait_idle();
    EXPECT_TRUE(seen.verify());
    EXPECT_EQ(pool.stats().executed(), kParents * kPerParent);
}

TEST(Lesson02Ex2, TheSpawnTreeCountsExactly) {
    constexpr unsigned kDepth = 15;  // 65,535 tasks
    for (std::size_t workers : {1, 2, 4}) {
        EXPECT_EQ(ws::testing::count_binary_tree<ThreadPool>(workers, kDepth),
                  ws::testing::binary_tree_nodes(kDepth))
            << "with " << workers << " workers";
    }
}

TEST(Lesson02Ex2, WaitIdleWaitsForAChainOfTasksEachSpawningTheNext) {
    // At most one task exists at any moment, and while it runs every queue is empty: only the
    // pending count knows that more is coming.
    constexpr int kLinks = 20;
    std::atomic<int> ran{0};
    ThreadPool pool(2);
    std::function<void(int)> link = [&](int i) {
        std::this_thread::sleep_for(1ms);
        ran.fetch_add(1);
        if (i + 1 < kLinks) pool.spawn([&link, i] { link(i + 1); });
    };
    pool.spawn([&] { link(0); });
    pool.wait_idle();
    EXPECT_EQ(ran.load(), kLinks) << "wait_idle returned before the last task of the chain ran";
}

TEST(Lesson02Ex2, WaitIdleWaitsForAParentThatOutlivesItsChild) {
    for (std::size_t workers : {2, 3}) {
        ThreadPool pool(workers);
        for (int round = 0; round < 20; ++round) {
            EXPECT_TRUE(ws::testing::wait_idle_waits_for_a_parent_that_outlives_its_child(
                pool, 5ms, round % 2 == 1))
                << "wait_idle returned while a task was still running (" << workers
                << " workers): its child finished first, and the parent was no longer counted";
        }
    }
}

TEST(Lesson02Ex2, WaitIdleFromInsideATaskIsALogicError) {
    ThreadPool pool(2);
    EXPECT_EQ(ws::testing::call_wait_idle_from_a_task(pool),
              ws::testing::WaitIdleFromTask::kLogicError)
        << "wait_idle on a worker must throw std::logic_error";
}

TEST(Lesson02Ex2, AnExceptionFromASpawnedTaskIsRethrownAfterTheOthersRan) {
    std::atomic<int> ran{0};
    ThreadPool pool(2);
    pool.spawn([&] {
        for (int i = 0; i < 1000; ++i) {
            pool.spawn([&ran, i] {
                if (i == 500) throw std::runtime_error("task 500 failed");
                ran.fetch_add(1);
            });
        }
    });
    EXPECT_THROW(pool.wait_idle(), std::runtime_error);
    EXPECT_EQ(ran.load(), 999);
    EXPECT_NO_THROW(pool.wait_idle()) << "the exception was already reported";
}

TEST(Lesson02Ex2, TheDestructorRunsTasksStillOnLocalQueues) {
    std::atomic<int> ran{0};
    {
        ThreadPool pool(2);
        pool.spawn([&] {
            for (int i = 0; i < 1000; ++i)
                pool.spawn([&] { ran.fetch_add(1); });
        });
    }  // ~ThreadPool
    EXPECT_EQ(ran.load(), 1000) << "the destructor must run every task already spawned";
}

TEST(Lesson02Ex2, ATaskCanSpawnIntoAnotherPool) {
    // A worker of `a` is not a worker of `b`: its spawns into `b` go to b's shared queue, not
    // to a queue of b picked by a's worker index.
    ThreadPool a(3), b(1);
    const auto seen = ws::testing::spawn_from_one_pool_into_another(a, b, 300);
    EXPECT_EQ(seen.ran, 300);
    EXPECT_EQ(seen.b_threads, 1u) << "b has one worker; all of b's tasks run on it";
}

TEST(Lesson02Ex2, ASpawnFromAnotherPoolsWorkerWaitsInTheSharedQueue) {
    // b's only worker is held up. Then this thread spawns x into b, and a task of pool a spawns
    // y into b: both come from outside b, so both wait in b's shared queue and run oldest first,
    // x then y. A spawn that took a's worker 0 for b's worker 0 would push y onto b's own queue,
    // which b's worker looks at first. Last, the task holding b's worker spawns z: that one is
    // b's own, so it goes to the worker's own queue and runs before x and y. (Without z, a pool
    // that sends every spawn to the shared queue, as the starter does, would pass.)
    std::mutex m;
    std::vector<char> order;
    std::atomic<bool> started{false};
    std::atomic<bool> release{false};
    ThreadPool a(1), b(1);
    auto log = [&](char c) {
        return [&m, &order, c] {
            std::lock_guard lock(m);
            order.push_back(c);
        };
    };
    b.spawn([&] {
        started = true;
        wait_until([&] { return release.load(); }, 10s * slowdown());
        b.spawn(log('z'));
    });
    ASSERT_TRUE(wait_until([&] { return started.load(); }, 10s * slowdown()));
    b.spawn(log('x'));
    a.spawn([&] { b.spawn(log('y')); });
    a.wait_idle();  // y is in b now
    release = true;
    b.wait_idle();
    const std::vector<char> all_shared{'x', 'y', 'z'};
    ASSERT_NE(order, all_shared)
        << "z, spawned by b's own worker, waited behind x and y: a task spawned by a worker of "
           "the pool goes to that worker's own queue, which it looks at first";
    EXPECT_EQ(order, (std::vector<char>{'z', 'x', 'y'}))
        << "a task of another pool spawned y onto one of b's own queues: only b's own workers "
           "(tl_worker.pool == this) use their queues; everyone else goes through the shared one";
}

TEST(Lesson02Ex2, StatsCountEveryExecutedTaskPerWorker) {
    ThreadPool pool(3);
    for (int i = 0; i < 5000; ++i)
        pool.spawn([] {});
    pool.wait_idle();
    const ws::PoolStats s = pool.stats();
    ASSERT_EQ(s.executed_per_worker.size(), 3u);
    EXPECT_EQ(s.executed(), 5000u);
}

TEST(Lesson02Ex2, TheDestructorRunsEveryTaskQueuedWhenItStarts) {
    // When the destructor starts (its thread asleep in join, checked in /proc), both workers
    // are busy in a task, each with ten children on its own queue, and one task from outside
    // waits in the shared queue. A worker may leave only once nothing is queued or running
    // anywhere: not when its own queue is empty. That the children really wait on the workers'
    // own queues is checked too: the first child to run after the release is the newest child
    // of the parent that ran on the same worker (before the release no worker looks for work,
    // so the first to look finds its own queue whole, and takes its newest task). The parents
    // spawn their children only once both are running: a child spawned while the other worker
    // still looked for its parent could be stolen by it (seen under load: child 0, stolen).
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    constexpr int kChildren = 10;
    struct Shared {
        std::atomic<int> arrived{0};  // parents running, before spawning their children
        std::atomic<int> started{0};
        std::atomic<bool> release{false};
        std::atomic<int> ran{0};
        std::atomic<ws::testing::ThreadId> destroyer{0};
        std::thread::id parent_thread[2];  // published to the children by the queue's lock
        std::atomic<int> first_child{-1};  // the index, 0..kChildren-1, of the first to run
        std::atomic<bool> first_on_parents_worker{false};
    };
    auto shared = std::make_shared<Shared>();
    auto pool = std::make_unique<ThreadPool>(2);
    for (int b = 0; b < 2; ++b) {
        pool->spawn([&pool = *pool, shared, b] {
            shared->arrived.fetch_add(1);
            // Each parent blocks its worker here until the other arrives: then both workers are
            // busy in a parent, and none looks for work while the children are spawned.
            wait_until([&] { return shared->arrived.load() == 2; }, 10s * slowdown());
            shared->parent_thread[b] = std::this_thread::get_id();
            for (int i = 0; i < kChildren; ++i) {
                pool.spawn([shared, b, i] {
                    int none = -1;
                    if (shared->first_child.compare_exchange_strong(none, i)) {
                        shared->first_on_parents_worker =
                            shared->parent_thread[b] == std::this_thread::get_id();
                    }
                    shared->ran.fetch_add(1);
                });
            }
            shared->started.fetch_add(1);
            wait_until([&] { return shared->release.load(); }, 10s * slowdown());
            shared->ran.fetch_add(1);
        });
    }
    ASSERT_TRUE(wait_until([&] { return shared->started.load() == 2; }, 10s * slowdown()))
        << "the two tasks did not run at the same time on the two workers";
    pool->spawn([shared] { shared->ran.fetch_add(1); });  // waits in the shared queue
    ws::testing::DetachedCall destroy([shared, p = pool.release()] {
        shared->destroyer = ws::testing::current_thread_id();
        delete p;
    });
    ASSERT_TRUE(wait_until([&] { return shared->destroyer.load() != 0; }, 10s * slowdown()));
    ASSERT_TRUE(ws::testing::wait_until_asleep({shared->destroyer.load()}, 10s * slowdown()))
        << "the destructor did not start waiting for the workers";
    shared->release = true;
    ASSERT_TRUE(destroy.wait_for(10s * slowdown())) << "the destructor never returned";
    EXPECT_TRUE(shared->first_child.load() == kChildren - 1 &&
                shared->first_on_parents_worker.load())
        << "the first child to run after the release was child " << shared->first_child.load()
        << " of 0.." << kChildren - 1 << " ("
        << (shared->first_on_parents_worker.load() ? "on" : "not on")
        << " its parent's worker): a worker spawns onto its own queue and runs its newest task "
           "first, so the children must wait on their workers' own queues for this test to "
           "check that the destructor drains them";
    EXPECT_EQ(shared->ran.load(), 2 + 2 * kChildren + 1)
        << "the destructor must run every task queued when it started, on any queue; a worker "
           "may leave only when nothing is queued or running anywhere";
}

namespace {

// A task's callable that watches where it is moved: on the thread `spawner` it counts its moves,
// and the move numbered `hold_at` (the last one a spawn makes, found by counting a spawn first:
// the one into the queue, under the queue's lock) waits until the thread `taker` is blocked on a
// futex, that is, on that lock. Then, as the lock is released, the taker is woken, and with the
// spawning thread at SCHED_IDLE on the taker's CPU it takes the task and runs it before spawn
// returns.
struct MoveWatch {
    std::atomic<ws::testing::ThreadId> spawner{0};
    std::atomic<ws::testing::ThreadId> taker{0};
    std::atomic<int> hold_at{0};  // 0: hold no move
    std::atomic<int> moves{0};
    std::atomic<bool> held{false};  // the taker was seen blocked while the move waited
    std::atomic<ws::testing::ThreadId> ran_on{0};

    void moved() noexcept {
        if (ws::testing::current_thread_id() != spawner.load()) return;
        if (moves.fetch_add(1) + 1 == hold_at.load()) {
            const auto taker_tid = taker.load();
            held = wait_until([&] { return ws::testing::blocked_on_futex(taker_tid); },
                              1s * slowdown());
        }
    }
};

class Watched {
  public:
    explicit Watched(std::shared_ptr<MoveWatch> watch) : watch_(std::move(watch)) {}
    Watched(Watched&& other) noexcept : watch_(std::move(other.watch_)) {
        if (watch_) watch_->moved();
    }
    Watched(const Watched&) = delete;
    Watched& operator=(const Watched&) = delete;
    Watched& operator=(Watched&&) = delete;
    ~Watched() = default;
    void operator()() const { watch_->ran_on = ws::testing::current_thread_id(); }

  private:
    std::shared_ptr<MoveWatch> watch_;
};
static_assert(ws::Task::fits_inline<Watched>(), "moving the Task must move the callable");

// Spawns a Watched from the calling thread; returns how many moves of it the spawn made there.
int spawn_watched(ThreadPool& pool, const std::shared_ptr<MoveWatch>& watch) {
    ws::Task task{Watched{watch}};
    watch->spawner = ws::testing::current_thread_id();
    watch->moves = 0;  // count from here: the moves of spawn itself
    pool.spawn(std::move(task));
    return watch->moves.load();
}

// A two-worker pool whose workers run on one CPU, the CPU of the calling thread.
struct PoolOnOneCpu {
    std::vector<ws::testing::ThreadId> before = ws::testing::thread_ids();
    std::unique_ptr<ThreadPool> pool = std::make_unique<ThreadPool>(2);
    std::vector<ws::testing::ThreadId> workers = ws::testing::new_threads(before);
    int cpu = ws::testing::a_cpu_of_this_thread();

    PoolOnOneCpu() {
        for (const auto tid : workers)
            ws::testing::pin_to_cpu(tid, cpu);
    }
};

// A thread on `cpu` that calls pool.wait_idle(), with a short time slice, so that when a worker
// on that CPU wakes it, it runs before a SCHED_IDLE thread there goes on.
class Waiter {
  public:
    Waiter(ThreadPool& pool, int cpu)
        : call_([&pool, cpu, returned = returned_, tid = tid_] {
              const auto me = ws::testing::current_thread_id();
              ws::testing::pin_to_cpu(me, cpu);
              ws::testing::request_short_slice(me);
              *tid = me;
              pool.wait_idle();
              *returned = true;
          }) {}

    // Whether it went to sleep in wait_idle.
    bool asleep() {
        return wait_until([&] { return tid_->load() != 0; }, 10s * slowdown()) &&
               ws::testing::wait_until_all({tid_->load()}, ws::testing::blocked_on_futex,
                                           10s * slowdown());
    }

    // Whether wait_idle has returned, once it has either returned or slept on (blocked on a
    // futex) for 50 polls in a row: if it was woken, it has seen what it was woken for.
    bool returned_by_now() {
        int asleep_polls = 0;
        wait_until(
            [&] {
                if (returned_->load()) return true;
                asleep_polls = ws::testing::blocked_on_futex(tid_->load()) ? asleep_polls + 1 : 0;
                return asleep_polls >= 50;
            },
            10s * slowdown());
        return returned_->load();
    }

    bool finished() { return call_.wait_for(10s * slowdown()); }

  private:
    std::shared_ptr<std::atomic<bool>> returned_ = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<std::atomic<ws::testing::ThreadId>> tid_ =
        std::make_shared<std::atomic<ws::testing::ThreadId>>(0);
    ws::testing::DetachedCall call_;
};

}  // namespace

TEST(Lesson02Ex2, WaitIdleWaitsForAParentWhoseChildIsStolenAsItIsQueued) {
    // A task counts as pending from before it is queued: once it is in a queue, another worker
    // may take it, run it and subtract it at once. Forced here: the parent's worker is at
    // SCHED_IDLE on one CPU with the other worker and with a thread asleep in wait_idle, and its
    // spawn of the child is held inside the push, under its queue's lock, until the other worker
    // is blocked on that lock trying to steal. Released, the thief runs the child and, out of
    // work, subtracts it, all before the parent's spawn goes on; the parent still runs. If the
    // child was counted only after the push, that subtraction takes pending_ to zero and
    // wait_idle returns while the parent runs. A thread of the test spins on that CPU meanwhile,
    // so that the parent's worker gets no turn before the woken waiter has looked (without it,
    // the waiter lost that race in 1 of 6 quiet runs). Up to 5 attempts: on a busy machine the
    // scheduler does not always switch at once.
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc, sched_setscheduler)";
    PoolOnOneCpu p;
    ThreadPool& pool = *p.pool;
    ASSERT_EQ(p.workers.size(), 2u);
    const ws::testing::ThreadId parents_worker = p.workers[0], thief = p.workers[1];
    ws::testing::make_idle_priority(parents_worker);  // the pool's worker ends with the pool
    ws::testing::request_short_slice(thief);

    // How many moves a spawn from a worker makes of its task: the last is the one to hold.
    auto moves = std::make_shared<std::atomic<int>>(0);
    pool.spawn([&pool, moves] { *moves = spawn_watched(pool, std::make_shared<MoveWatch>()); });
    pool.wait_idle();
    ASSERT_GT(moves->load(), 0);

    int forced = 0;
    for (int attempt = 1; attempt <= 5; ++attempt) {
        pool.wait_idle();  // every worker has subtracted what it ran
        struct Shared {
            std::atomic<ws::testing::ThreadId> tid[2]{};
            std::atomic<int> role[2]{};  // 0: wait, 1: leave, 2: be the parent
            std::atomic<bool> spawned{false};
            std::atomic<bool> release{false};
            std::shared_ptr<MoveWatch> watch = std::make_shared<MoveWatch>();
        };
        auto shared = std::make_shared<Shared>();
        // Two tasks from outside, one on each worker; the one on parents_worker is the parent.
        for (int i = 0; i < 2; ++i) {
            pool.spawn([&pool, shared, i] {
                shared->tid[i] = ws::testing::current_thread_id();
                wait_until([&] { return shared->role[i].load() != 0; }, 10s * slowdown());
                if (shared->role[i].load() != 2) return;
                spawn_watched(pool, shared->watch);
                shared->spawned = true;
                wait_until([&] { return shared->release.load(); }, 10s * slowdown());
            });
        }
        ASSERT_TRUE(
            wait_until([&] { return shared->tid[0].load() != 0 && shared->tid[1].load() != 0; },
                       10s * slowdown()))
            << "the two tasks did not run at the same time on the two workers";
        const int parent = shared->tid[0].load() == parents_worker ? 0 : 1;
        ASSERT_EQ(shared->tid[parent].load(), parents_worker);
        shared->role[1 - parent] = 1;

        Waiter waiter(pool, p.cpu);
        ASSERT_TRUE(waiter.asleep()) << "wait_idle did not go to sleep while a task ran";
        const auto steals_before = pool.stats().steals;
        shared->watch->taker = thief;
        shared->watch->hold_at = moves->load();
        bool early = false;
        {
            ws::testing::SpinnerOnCpu spinner(p.cpu);
            shared->role[parent] = 2;
            if (!wait_until([&] { return shared->spawned.load(); }, 10s * slowdown())) {
                (void)p.pool.release();  // the waiter may still be in wait_idle: leak the pool
                FAIL() << "the parent's spawn did not return";
            }
            early = waiter.returned_by_now();
        }
        shared->release = true;
        if (!waiter.finished()) {
            (void)p.pool.release();  // the waiter is still in wait_idle: leak the pool
            FAIL() << "wait_idle did not return";
        }
        ASSERT_FALSE(early)
            << "wait_idle returned while the parent still ran (attempt " << attempt
            << "): another worker stole its child as it was pushed, ran it and subtracted it "
               "from pending_ before the parent's spawn counted it. Count a task before it is "
               "queued, on every path of spawn";
        if (shared->watch->held.load()) {
            ++forced;
            ASSERT_TRUE(
                wait_until([&] { return shared->watch->ran_on.load() != 0; }, 10s * slowdown()));
            ASSERT_NE(pool.stats().steals, steals_before)
                << "the other worker took the child without stealing it: a task spawned by a "
                   "worker goes to that worker's own queue, not to the shared one";
        } else if (pool.stats().steals == 0) {
            GTEST_SKIP() << "no worker stole the child: this test needs exercise 3 (steal)";
        }
    }
    if (forced == 0) GTEST_SKIP() << "the child's push could not be held while a thief waited";
}

TEST(Lesson02Ex2, WaitIdleWaitsForATaskWhoseSiblingFromOutsideRanAsItWasQueued) {
    // The same for a spawn from outside: one worker runs a task, a thread sleeps in wait_idle,
    // and another thread, at SCHED_IDLE on the CPU of the other worker and of the waiter, spawns
    // a second task, held inside the push (under the pool's mutex) until that worker is blocked
    // on the mutex. Released, the worker takes the task, runs it and subtracts it before the
    // spawn goes on. If it was counted only after the push, pending_ reaches zero and wait_idle
    // returns while the first task still runs (or, with nothing running, pending_ wraps below
    // zero and the spawn's late increment brings it back to zero without waking anybody).
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc, sched_setscheduler)";
    PoolOnOneCpu p;
    ThreadPool& pool = *p.pool;
    ASSERT_EQ(p.workers.size(), 2u);
    for (const auto tid : p.workers)
        ws::testing::request_short_slice(tid);

    // How many moves a spawn from outside makes of its task: the last is the one to hold.
    const int moves = spawn_watched(pool, std::make_shared<MoveWatch>());
    pool.wait_idle();
    ASSERT_GT(moves, 0);

    int forced = 0;
    for (int attempt = 1; attempt <= 5; ++attempt) {
        pool.wait_idle();  // every worker has subtracted what it ran
        auto busy_tid = std::make_shared<std::atomic<ws::testing::ThreadId>>(0);
        auto release = std::make_shared<std::atomic<bool>>(false);
        pool.spawn([busy_tid, release] {
            *busy_tid = ws::testing::current_thread_id();
            wait_until([&] { return release->load(); }, 10s * slowdown());
        });
        ASSERT_TRUE(wait_until([&] { return busy_tid->load() != 0; }, 10s * slowdown()));

        Waiter waiter(pool, p.cpu);
        ASSERT_TRUE(waiter.asleep()) << "wait_idle did not go to sleep while a task ran";
        auto watch = std::make_shared<MoveWatch>();
        watch->taker = busy_tid->load() == p.workers[0] ? p.workers[1] : p.workers[0];
        watch->hold_at = moves;
        ws::testing::DetachedCall spawner([&pool, cpu = p.cpu, watch] {
            ws::testing::call_born_idle_on(cpu, [&] { spawn_watched(pool, watch); });
        });
        if (!spawner.wait_for(10s * slowdown())) {
            (void)p.pool.release();  // the waiter and the spawner still use it: leak the pool
            FAIL() << "spawn did not return";
        }
        if (const auto error = spawner.error()) std::rethrow_exception(error);
        const bool early = waiter.returned_by_now();
        *release = true;
        if (!waiter.finished()) {
            (void)p.pool.release();  // the waiter is still in wait_idle: leak the pool
            FAIL() << "wait_idle did not return";
        }
        ASSERT_FALSE(early)
            << "wait_idle returned while a task still ran (attempt " << attempt
            << "): a worker took a task from outside as it was pushed, ran it and subtracted it "
               "from pending_ before the spawn counted it. Count a task before it is queued, on "
               "every path of spawn";
        if (watch->held.load()) ++forced;
    }
    if (forced == 0) GTEST_SKIP() << "the push could not be held while a worker waited";
}
