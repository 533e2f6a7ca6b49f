// Lesson 05, exercise 4: shutdown wakes everyone, for good.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <ws/testing/harness.hpp>
#include <ws/testing/stress.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

#include "exercises.hpp"
#include "parker.hpp"
#include "parking_helpers.hpp"

using namespace std::chrono_literals;
using lesson05_test::IdleWorker;
using lesson05_test::wait_for_sleepers;
using ws::lesson05::Parker;
using ws::testing::slowdown;
using ws::testing::wait_until;

TEST(Lesson05Ex4, NotifyAllWakesEveryParkedThread) {
    // On the heap: a worker that sleeps through notify_all cannot be woken any more, so it and
    // what it uses are left behind (leaked) rather than joined, and the test fails at once.
    auto p = std::make_unique<Parker>(4);
    auto work = std::make_unique<std::atomic<bool>>(false);
    std::vector<std::unique_ptr<IdleWorker<Parker>>> workers;
    for (int i = 0; i < 4; ++i)
        workers.push_back(std::make_unique<IdleWorker<Parker>>(*p, *work));
    ASSERT_TRUE(wait_for_sleepers(*p, 4));
    EXPECT_FALSE(p->stopping());
    p->notify_all();
    EXPECT_TRUE(p->stopping()) << "after notify_all, stopping() must report the shutdown";
    // One deadline for all four (not 1 s each), so that a failure shows within 1 s.
    const bool all = wait_until(
        [&] {
            for (auto& w : workers)
                if (!w->returned()) return false;
            return true;
        },
        1s * slowdown());
    int returned = 0;
    for (auto& w : workers)
        returned += w->returned() ? 1 : 0;
    EXPECT_TRUE(all) << 4 - returned << " of the 4 parked threads slept through notify_all";
    EXPECT_EQ(p->sleepers(), 0u);
    if (!all) {
        for (auto& w : workers)
            (void)w.release();
        (void)p.release();
        (void)work.release();
    }
}

TEST(Lesson05Ex4, NobodySleepsAfterNotifyAll) {
    // Workers that park after the shutdown began (more of them than there are workers, as
    // happens when workers leave and others still look around) must not sleep.
    Parker p(1);
    p.notify_all();
    std::atomic<bool> work{false};
    for (int i = 0; i < 3; ++i) {
        IdleWorker w(p, work);
        if (!wait_until([&] { return w.returned(); }, 1s * slowdown())) {
            ADD_FAILURE() << "park() number " << i + 1
                          << " after notify_all slept: shutdown must stop every later park";
            p.notify_all();  // let it go, so the test can end
        }
    }
}

TEST(Lesson05Ex4, AWorkerWokenByTheShutdownDoesNotSleepAgain) {
    // A worker woken by notify_all looks at stopping() and, not seeing it, parks again: it must
    // not sleep. Forced: the thread calling notify_all is pinned to the worker's CPU with
    // SCHED_IDLE, so the worker it wakes runs before notify_all goes on. If the stop flag is
    // raised after the wake-up rather than in the same step, the worker sleeps for good. Up to
    // 8 attempts (the scheduler does not always switch at once on a busy machine).
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc, sched_setscheduler)";
    const int cpu = ws::testing::a_cpu_of_this_thread();
    for (int attempt = 1; attempt <= 8; ++attempt) {
        auto p = std::make_shared<Parker>(1);
        auto tid = std::make_shared<std::atomic<ws::testing::ThreadId>>(0);
        auto left = std::make_shared<std::atomic<bool>>(false);
        std::thread worker([p, tid, left, cpu] {
            const auto me = ws::testing::current_thread_id();
            ws::testing::pin_to_cpu(me, cpu);
            ws::testing::request_short_slice(me);
            *tid = me;
            p->begin_search();
            while (!p->stopping())
                p->park([] { return false; });  // nothing to find: only the shutdown ends it
            *left = true;
        });
        ASSERT_TRUE(
            wait_until([&] { return tid->load() != 0 && p->sleepers() == 1; }, 5s * slowdown()));
        ASSERT_TRUE(ws::testing::wait_until_asleep({tid->load()}, 10s * slowdown()));
        ws::testing::DetachedCall stopper(
            [p, cpu] { ws::testing::call_born_idle_on(cpu, [&] { p->notify_all(); }); });
        ASSERT_TRUE(stopper.wait_for(10s * slowdown())) << "notify_all did not return";
        const bool ok = wait_until([&] { return left->load(); }, 1s * slowdown());
        if (!ok) p->notify_all();  // let it go, so the test can end
        worker.join();
        ASSERT_TRUE(ok) << "a worker woken by notify_all parked again and slept through the "
                           "shutdown (attempt "
                        << attempt
                        << "): set the stop flag and claim the sleepers in one step (one CAS)";
    }
}

TEST(Lesson05Ex4, DestroyingAParkedPoolReturnsWithin100ms) {
    ws::testing::parking::check_prompt_destruction<lesson05_test::Pool>(
        lesson05_test::pool_config(2, false), 100ms);
}

TEST(Lesson05Ex4, DestroyingABusyPoolRunsEveryTaskStress) {
    // Pools destroyed while their workers are anywhere: running, searching, parking, asleep.
    const auto rounds =
        ws::testing::stress(300, 10s * slowdown(), [](std::mt19937_64& rng, std::uint64_t) {
            std::atomic<int> ran{0};
            const int n = static_cast<int>(rng() % 50);
            {
                ws::lesson05::ThreadPool pool(lesson05_test::pool_config(2, false));
                if (rng() % 2 == 0)
                    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 500));
                for (int i = 0; i < n; ++i) {
                    pool.spawn([&pool, &ran] {
                        ran.fetch_add(1);
                        pool.spawn([&ran] { ran.fetch_add(1); });
                    });
                }
            }
            ASSERT_EQ(ran.load(), 2 * n) << "the destructor must run every task spawned before";
        });
    EXPECT_GT(rounds, 0u);
}
