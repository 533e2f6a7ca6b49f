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
#include <ws/testing/wait.hpp>

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
    Parker p(4);
    std::atomic<bool> work{false};
    std::vector<std::unique_ptr<IdleWorker<Parker>>> workers;
    for (int i = 0; i < 4; ++i)
        workers.push_back(std::make_unique<IdleWorker<Parker>>(p, work));
    ASSERT_TRUE(wait_for_sleepers(p, 4));
    EXPECT_FALSE(p.stopping());
    p.notify_all();
    EXPECT_TRUE(p.stopping()) << "after notify_all, stopping() must report the shutdown";
    for (auto& w : workers)
        EXPECT_TRUE(wait_until([&] { return w->returned(); }, 1s * slowdown()));
    EXPECT_EQ(p.sleepers(), 0u);
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

TEST(Lesson05Ex4, DestroyingAParkedPoolReturnsWithin100ms) {
    const auto took = ws::testing::parking::time_to_destroy_parked<lesson05_test::Pool>(
        lesson05_test::pool_config(2, false));
    ASSERT_TRUE(took.has_value()) << "the workers never parked";
    EXPECT_LT(*took, 100ms * slowdown())
        << "destroying a parked pool took "
        << std::chrono::duration_cast<std::chrono::milliseconds>(*took).count() << " ms";
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
