// Lesson 01, exercise 3: orderly shutdown. These tests do not use wait_idle.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include <ws/testing/latency.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson01::ThreadPool;
using ws::testing::slowdown;
using ws::testing::wait_until;

TEST(Lesson01Ex3, DestructorRunsEveryQueuedTask) {
    std::atomic<int> ran{0};
    std::atomic<bool> gate{false};
    std::atomic<bool> blocker_started{false};
    {
        ThreadPool pool(1);
        // The only worker is held up, so the next 1000 tasks are still queued at destruction.
        pool.spawn([&] {
            blocker_started = true;
            wait_until([&] { return gate.load(); }, 10s * slowdown());
            ran.fetch_add(1);
        });
        ASSERT_TRUE(wait_until([&] { return blocker_started.load(); }, 10s * slowdown()));
        for (int i = 0; i < 1000; ++i)
            pool.spawn([&] { ran.fetch_add(1); });
        gate = true;
    }  // ~ThreadPool
    EXPECT_EQ(ran.load(), 1001) << "the destructor must run every task queued before it";
}

TEST(Lesson01Ex3, TasksSpawnedWhileDrainingAlsoRun) {
    std::atomic<int> ran{0};
    std::atomic<bool> gate{false};
    std::atomic<bool> blocker_started{false};
    {
        ThreadPool pool(1);
        pool.spawn([&] {
            blocker_started = true;
            wait_until([&] { return gate.load(); }, 10s * slowdown());
        });
        ASSERT_TRUE(wait_until([&] { return blocker_started.load(); }, 10s * slowdown()));
        for (int i = 0; i < 100; ++i) {
            pool.spawn([&] {
                ran.fetch_add(1);
                pool.spawn([&] { ran.fetch_add(1); });
            });
        }
        gate = true;
    }
    EXPECT_EQ(ran.load(), 200);
}

TEST(Lesson01Ex3, DestroyingAnIdlePoolIsPrompt) {
    // The pool first runs a task on each worker, then its workers go to sleep (checked in /proc
    // where there is one): only then is "destroyed at once" about waking sleepers, not about
    // workers that left or never started. Under 100 ms, timed from the call to the destructor's
    // return, less the time the worker that ended last, and then this thread, waited, runnable,
    // for a core (<ws/testing/latency.hpp>): beside busy processes a worker woken at once can
    // wait longer than that for a core. A worker left asleep is all counted. The two tasks leave
    // a probe in their workers (EndProbes) that reads those figures as each worker ends.
    const auto bound = 100ms * slowdown();
    const auto took =
        ws::testing::measure_until_clear(bound, [&]() -> std::optional<ws::testing::Latency> {
            const auto before = ws::testing::thread_ids();
            std::optional<ThreadPool> pool(std::in_place, 2);
            const auto workers = ws::testing::new_threads(before);
            ws::testing::EndProbes probes;
            if (!probes.arm(*pool, 2)) {
                ADD_FAILURE() << "two tasks that wait for each other did not both run, each on a "
                                 "worker of its own (exercise 1)";
                return std::nullopt;
            }
            if (ws::testing::kCanSteerThreads) {
                if (workers.size() != 2 ||
                    !ws::testing::wait_until_asleep(workers, 10s * slowdown())) {
                    ADD_FAILURE() << "the 2 workers of the idle pool did not go to sleep, or left "
                                     "(exercise 1): a worker waits for work while the pool is "
                                     "not stopping";
                    return std::nullopt;
                }
            } else {
                std::this_thread::sleep_for(20ms);  // let the workers go to sleep
            }
            return ws::testing::time_to_destroy(probes, [&] { pool.reset(); });
        });
    ASSERT_TRUE(took.has_value());
    ws::testing::LatencyRecord().add(*took);
    EXPECT_LT(took->left(), bound)
        << "destroying a pool whose workers slept took " << describe(*took)
        << ": sleeping workers must wake as soon as the pool stops (woken by the destructor, "
           "their wait looking at stopping_), not be waited out";
}

TEST(Lesson01Ex3, DestroyingAPoolWakesEverySleepingWorker) {
    // Three workers, all asleep (checked in /proc): the destructor must wake every one of them.
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    const auto before = ws::testing::thread_ids();
    auto pool = std::make_unique<ThreadPool>(3);
    const auto workers = ws::testing::new_threads(before);
    ASSERT_EQ(workers.size(), 3u);
    ASSERT_TRUE(ws::testing::wait_until_asleep(workers, 10s * slowdown()))
        << "the workers of an idle pool did not go to sleep";
    // On a thread of its own: if it hangs, it hangs there, and the pool is never freed.
    const bool destroyed =
        ws::testing::run_within(2s * slowdown(), [p = pool.release()] { delete p; });
    EXPECT_TRUE(destroyed) << "the destructor of a pool whose workers slept did not return: wake "
                              "every sleeping worker (notify_all), not one";
}

TEST(Lesson01Ex3, AWorkerWokenByTheDestructorSeesThePoolStopping) {
    // The destructor must set stopping_ before it wakes the workers: a worker woken first looks
    // at what it waits for, finds nothing changed and sleeps again, and nobody wakes it a second
    // time. Forced: the destroying thread runs at SCHED_IDLE on the worker's CPU, so the woken
    // worker looks the moment the destructor wakes it. On a busy machine the scheduler does not
    // always switch at once, so the test tries up to 8 times. A hang is seen as it happens: the
    // destroying thread asleep in join and the worker asleep in its wait, neither woken for
    // 100 ms (at SCHED_IDLE on a busy CPU, the destructor of a correct pool may take a while).
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc, sched_setscheduler)";
    using ws::testing::ThreadId;
    const int cpu = ws::testing::a_cpu_of_this_thread();
    for (int attempt = 1; attempt <= 8; ++attempt) {
        const auto before = ws::testing::thread_ids();
        auto pool = std::make_unique<ThreadPool>(1);
        const auto workers = ws::testing::new_threads(before);
        ASSERT_EQ(workers.size(), 1u) << "a pool of one worker must start one thread, and keep it";
        const ThreadId worker = workers[0];
        ASSERT_TRUE(ws::testing::wait_until_asleep(workers, 10s * slowdown()))
            << "the worker of an idle pool did not go to sleep";
        ws::testing::pin_to_cpu(worker, cpu);
        ws::testing::request_short_slice(worker);
        auto destroyer = std::make_shared<std::atomic<ThreadId>>(0);
        // On a thread of its own: if it hangs, it hangs there, and the pool is never freed. Born
        // SCHED_IDLE on the worker's CPU: a thread switched to SCHED_IDLE keeps the lag it had
        // and may still be preferred to the worker it wakes (thread_state.hpp).
        ws::testing::DetachedCall destruction([p = pool.release(), cpu, destroyer] {
            ws::testing::call_born_idle_on(cpu, [&] {
                *destroyer = ws::testing::current_thread_id();
                delete p;
            });
        });
        const auto deadline = std::chrono::steady_clock::now() + 10s * slowdown();
        bool destroyed = false;
        long worker_sleeps = -1, destroyer_sleeps = -1;
        int stuck_polls = 0;  // polls in a row that found both threads asleep, neither woken
        while (!(destroyed = destruction.wait_for(1ms)) && stuck_polls < 100 &&
               std::chrono::steady_clock::now() < deadline) {
            const ThreadId d = destroyer->load();
            if (d == 0) continue;
            const bool stuck = ws::testing::still_asleep_since(worker, worker_sleeps) &&
                               ws::testing::still_asleep_since(d, destroyer_sleeps);
            stuck_polls = stuck ? stuck_polls + 1 : 0;
            worker_sleeps = ws::testing::sleeps_so_far(worker);
            destroyer_sleeps = ws::testing::sleeps_so_far(d);
        }
        ASSERT_TRUE(destroyed) << "the destructor did not return (attempt " << attempt
                               << "): the worker it woke found the pool not yet stopping and "
                                  "slept again. Set stopping_ under the lock, then notify_all";
    }
}
