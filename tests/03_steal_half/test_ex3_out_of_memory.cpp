// Lesson 03, exercise 3: a worker whose steal runs out of memory goes on working, and the pool
// loses no task. <ws/testing/failing_new.hpp> arms one worker's thread, from inside a task it
// runs, so that its next steal cannot grow its queue for the batch (and, in the second test,
// cannot put the batch back into the victim's queue either).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include <ws/testing/failing_new.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson03::ThreadPool;
using ws::testing::slowdown;
using ws::testing::wait_until;

namespace {

// The thief's steal runs out of memory `failures` times; `arm` arms the thief's thread, from its
// own task, for them.
void a_worker_whose_steal_runs_out_of_memory(std::uint64_t failures, void (*arm)()) {
    // Two tasks from outside meet, so each has a worker of its own. The victim's task queues 64
    // children, which wait for the test's signal, on its own queue; the thief's task waits for
    // them, arms its worker's thread to fail its second allocation from now on, and returns. The
    // thief's next steal gets its batch (the vector is the first allocation), but its own queue
    // cannot grow for it: the batch must go back, and the thief steal again later.
    constexpr int kChildren = 64;
    struct Shared {
        std::atomic<int> started{0};
        std::atomic<bool> spawned{false};
        std::atomic<bool> release{false};
        std::atomic<int> ran{0};
    };
    auto shared = std::make_shared<Shared>();  // shared with the tasks: a leaked pool's outlive us
    struct Release {  // whatever happens below, the children do not wait for good
        Shared& shared;
        ~Release() { shared.release = true; }
    } release_at_exit{*shared};
    auto meet = [shared] {
        shared->started.fetch_add(1);
        return wait_until([&] { return shared->started.load() == 2; }, 10s * slowdown());
    };
    auto pool = std::make_unique<ThreadPool>(2);
    const std::uint64_t failed_before = ws::testing::failed_allocations();
    pool->spawn([shared, meet, p = pool.get()] {
        if (!meet()) return;
        for (int i = 0; i < kChildren; ++i) {
            p->spawn([shared] {
                wait_until([&] { return shared->release.load(); }, 10s * slowdown());
                shared->ran.fetch_add(1);
            });
        }
        shared->spawned = true;
    });
    pool->spawn([shared, meet, arm] {
        if (!meet()) return;
        if (wait_until([&] { return shared->spawned.load(); }, 10s * slowdown())) arm();
    });
    const bool failed =
        wait_until([&] { return ws::testing::failed_allocations() - failed_before >= failures; },
                   2s * slowdown());
    shared->release = true;
    if (!failed) {
        (void)pool.release();  // its thief may still be armed: leak it rather than wait
        FAIL() << "the thief's steal never ran out of memory, so the test proves nothing: does "
                  "ThreadPool::steal move half of the victim's queue with steal_half_into?";
    }
    ws::testing::DetachedCall wait([p = pool.get()] { p->wait_idle(); });
    if (!wait.wait_for(2s * slowdown())) {
        (void)pool.release();  // wait_idle still uses it: leak the pool
        FAIL() << "wait_idle did not return after a steal ran out of memory: tasks of the batch "
                  "were lost while the pool still counts them";
    }
    if (const auto error = wait.error()) std::rethrow_exception(error);
    EXPECT_EQ(shared->ran.load(), kChildren) << "every child runs exactly once";
    EXPECT_EQ(pool->stats().executed(), kChildren + 2u)
        << "wait_idle returned before every task (the 64 children and the 2 from outside) ran "
           "exactly once: the pool's count of pending tasks is off";
    EXPECT_TRUE(ws::testing::run_within(2s * slowdown(), [p = pool.release()] { delete p; }))
        << "the pool's destructor did not return after a steal ran out of memory";
}

// before_each_allocation_failure's hook on the thief's thread: at its first failure (its queue
// growing for the batch), arms it to fail the next allocation too (the victim's queue growing to
// take the batch back); then nothing.
void fail_the_next_allocation_too(void*) noexcept {
    thread_local int failures_seen = 0;  // the pool's threads are new in each test
    if (++failures_seen == 1) ws::testing::fail_allocation_after(0);
}

}  // namespace

TEST(Lesson03Ex3, AWorkerWhoseStealRunsOutOfMemoryGoesOnAndNothingIsLost) {
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    a_worker_whose_steal_runs_out_of_memory(1, [] { ws::testing::fail_allocation_after(1); });
}

TEST(Lesson03Ex3, AWorkerWhoseStolenBatchCannotGoBackEitherGoesOnAndNothingIsLost) {
    // As above, and the batch the thief has no room for cannot go back to the victim either:
    // the steal must keep it and try again, not drop it (pending_ still counts it) or throw.
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    a_worker_whose_steal_runs_out_of_memory(2, [] {
        ws::testing::before_each_allocation_failure(&fail_the_next_allocation_too);
        ws::testing::fail_allocation_after(1);
    });
}
