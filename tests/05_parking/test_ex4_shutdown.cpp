// Lesson 05, exercise 4: shutdown wakes everyone, for good.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include <ws/testing/harness.hpp>
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
            p.notify_one();  // let it go, so the test can end
        }
    }
}
