// Lesson 02, exercise 4: an idle worker backs off (spin, yield, short sleeps): it burns almost
// no CPU, yet still notices new work soon.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <optional>
#include <thread>
#include <vector>

#include <ws/testing/pool_checks.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson02::ThreadPool;
using ws::testing::slowdown;
using ws::testing::wait_until;

namespace {
// Whether every one of `workers` has been seen asleep in /proc at five polls in a row (1 ms
// apart) within 5 s: true for workers that sleep between short looks, never for workers that
// spin or yield (always runnable, however little CPU time a busy machine leaves them). The
// tests below check it too, so that "idle is cheap" or "new work is noticed soon" is about
// sleeping workers; without /proc (kCanSteerThreads false) it is not checked and is true.
bool workers_sleep(const std::vector<ws::testing::ThreadId>& workers, std::size_t expected) {
    if (!ws::testing::kCanSteerThreads) return true;
    return workers.size() == expected &&
           ws::testing::wait_until_asleep(workers, 5s * slowdown(), 5);
}

constexpr const char* kNeverSlept =
    "the idle workers never went to sleep (always runnable in /proc): an idle worker must "
    "sleep, briefly, between looks for work, not spin or yield forever";
}  // namespace

TEST(Lesson02Ex4, AnIdlePoolSleeps) {
    // Two idle workers: under 2 % of one core over 500 ms (the bound this lesson promises;
    // sanitizers make every wake-up dearer, hence the slowdown factor), in the least of three
    // windows. The 50 ms before take the workers past their spinning and yielding. (On a busy
    // machine a yielding worker gets little CPU time too: hence the check that they sleep.)
    const auto before = ws::testing::thread_ids();
    ThreadPool pool(2);
    const auto workers = ws::testing::new_threads(before);
    const auto used = ws::testing::idle_cpu_seconds(pool, 50ms, 500ms);
    ASSERT_TRUE(used.has_value()) << "a spawned task never ran";
    RecordProperty("idle_cpu_us", static_cast<int>(*used * 1e6));
    EXPECT_LT(*used, 0.02 * 0.5 * slowdown())
        << "the idle pool used " << *used * 1000
        << " ms of CPU in 500 ms: an idle worker spins or yields instead of sleeping";
    EXPECT_TRUE(workers_sleep(workers, 2)) << kNeverSlept;
}

TEST(Lesson02Ex4, AnIdleWorkerIsSeenAsleep) {
    // What AnIdlePoolSleeps measures in CPU time, seen in each worker's state instead: a worker
    // that yields instead of sleeping is always runnable ('R' in /proc), however little CPU time
    // it gets (at most a futex wait of microseconds on the shared queue's lock shows as 'S'); one
    // that sleeps is asleep ('S') for its 8 ms sleeps. On a quiet machine that is nearly every
    // sample; beside busy processes the sleeper also waits, runnable, for a core after every
    // sleep (66 and 96 of 200 samples asleep at load average 7 on 2 cores), so the bar is 1 in 10,
    // which a yielder never reaches. Sampled every millisecond for 200 ms, after 50 ms idle (past
    // spinning and yielding).
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    const auto before = ws::testing::thread_ids();
    ThreadPool pool(2);
    const auto workers = ws::testing::new_threads(before);
    ASSERT_EQ(workers.size(), 2u);
    std::atomic<bool> ran{false};
    pool.spawn([&] { ran = true; });
    ASSERT_TRUE(wait_until([&] { return ran.load(); }, 10s * slowdown()));
    std::this_thread::sleep_for(50ms);
    constexpr int kSamples = 200;
    int asleep[2] = {0, 0};
    for (int i = 0; i < kSamples; ++i) {
        for (int w = 0; w < 2; ++w)
            asleep[w] += ws::testing::asleep(workers[w]) ? 1 : 0;
        std::this_thread::sleep_for(1ms);
    }
    for (int w = 0; w < 2; ++w) {
        EXPECT_GE(asleep[w], kSamples / 10)
            << "idle worker " << w << " was asleep in only " << asleep[w] << " of " << kSamples
            << " samples: an idle worker must sleep (briefly), not spin or yield";
    }
}

TEST(Lesson02Ex4, AnIdlePoolStillNoticesNewWorkSoon) {
    const auto before = ws::testing::thread_ids();
    ThreadPool pool(2);
    const auto workers = ws::testing::new_threads(before);
    std::this_thread::sleep_for(100ms);  // every worker is deep in its backoff now
    ASSERT_TRUE(workers_sleep(workers, 2)) << kNeverSlept;
    for (int i = 0; i < 5; ++i) {
        std::atomic<bool> ran{false};
        const auto t0 = std::chrono::steady_clock::now();
        pool.spawn([&] { ran = true; });
        ASSERT_TRUE(wait_until([&] { return ran.load(); }, 10s * slowdown()));
        const auto took = std::chrono::steady_clock::now() - t0;
        EXPECT_LT(took, 50ms * slowdown()) << "a sleeping worker must wake up to look again soon";
        std::this_thread::sleep_for(20ms);
    }
}

TEST(Lesson02Ex4, DestroyingAnIdlePoolIsPrompt) {
    const auto before = ws::testing::thread_ids();
    std::optional<ThreadPool> pool(std::in_place, 2);
    const auto workers = ws::testing::new_threads(before);
    std::this_thread::sleep_for(50ms);  // past spinning and yielding
    ASSERT_TRUE(workers_sleep(workers, 2)) << kNeverSlept;
    const auto t0 = std::chrono::steady_clock::now();
    pool.reset();
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_LT(took, 100ms * slowdown())
        << "destroying the idle pool took "
        << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
        << " ms: a sleeping worker must notice stopping soon (sleep only briefly between looks)";
}

TEST(Lesson02Ex4, ALoneIdleWorkerNoticesNewWorkSoon) {
    // One worker, so no other one can hide a long sleep. Each round leaves it idle for a while,
    // then spawns a task just as it goes to sleep again (its count of sleeps, in /proc, goes up):
    // the task must start within 50 ms, so no sleep may be longer. The last round idles for
    // 700 ms: a sleep that keeps doubling without a cap is long by then.
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    const auto before = ws::testing::thread_ids();
    ThreadPool pool(1);
    const auto workers = ws::testing::new_threads(before);
    ASSERT_EQ(workers.size(), 1u);
    const auto worker = workers[0];
    for (const auto idle : {110ms, 110ms, 700ms}) {
        std::atomic<bool> ran{false};
        pool.spawn([&] { ran = true; });
        ASSERT_TRUE(wait_until([&] { return ran.load(); }, 10s * slowdown()));
        std::this_thread::sleep_for(idle);
        // The moment a new sleep begins (bounded: a worker that never sleeps has no such moment).
        const long sleeps = ws::testing::sleeps_so_far(worker);
        ASSERT_TRUE(wait_until([&] { return ws::testing::sleeps_so_far(worker) != sleeps; },
                               3s * slowdown()))
            << "after " << idle.count()
            << " ms idle, the worker did not go to sleep once in 3 s: " << kNeverSlept;
        std::atomic<bool> noticed{false};
        const auto t0 = std::chrono::steady_clock::now();
        pool.spawn([&] { noticed = true; });
        ASSERT_TRUE(wait_until([&] { return noticed.load(); }, 10s * slowdown()));
        const auto took = std::chrono::steady_clock::now() - t0;
        EXPECT_LT(took, 50ms * slowdown())
            << "after " << idle.count() << " ms idle, a new task waited "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
            << " ms for the sleeping worker: sleep only briefly (a few ms at most) between looks";
    }
}
