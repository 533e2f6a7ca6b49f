// Lesson 05, exercise 2: the pool with the event count — idle workers sleep, and a spawn from
// outside wakes one, every time.
#include <gtest/gtest.h>

#include "exercises.hpp"
#include "parking_helpers.hpp"

using lesson05_test::pool_config;

TEST(Lesson05Ex2, PoolRunsEveryTaskExactlyOnce) {
    ws::testing::parking::check_exactly_once<lesson05_test::Pool>(pool_config(2, false));
}

TEST(Lesson05Ex2, AnIdlePoolUsesUnderTwoPercentOfACore) {
    ws::testing::parking::check_idle_cpu<lesson05_test::Pool>(pool_config(2, false));
}

TEST(Lesson05Ex2, TwentyThousandIdleToSpawnRoundsWithoutAMiss) {
    ws::testing::parking::check_wake_rounds<lesson05_test::Pool>(pool_config(2, false), 20'000);
}

TEST(Lesson05Ex2, TwoLongTasksSpawnedTogetherRunAtTheSameTime) {
    ws::testing::parking::check_two_long_tasks<lesson05_test::Pool>(pool_config(2, false));
}

TEST(Lesson05Ex2, ParksAndWakeupsAreCounted) {
    ws::lesson05::ThreadPool pool(pool_config(2, false));
    ASSERT_TRUE(ws::testing::parking::wait_until_all_asleep(pool));
    const auto before = pool.stats();
    EXPECT_GE(before.parks, 2u);
    pool.spawn([] {});
    pool.wait_idle();
    ASSERT_TRUE(ws::testing::parking::wait_until_all_asleep(pool));
    const auto after = pool.stats();
    EXPECT_GE(after.wakeups, before.wakeups + 1);
    EXPECT_GE(after.parks, before.parks + 1);
}
