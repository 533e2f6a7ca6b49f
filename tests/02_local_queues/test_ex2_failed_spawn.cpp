// Lesson 02, exercise 2: a spawn whose push fails. A queue's std::deque allocates a new block
// every few pushes, and that allocation may throw std::bad_alloc: then spawn throws it on, and
// the task was never queued, so no worker will ever take its count off pending_ again. A spawn
// that throws must leave nothing counted, or wait_idle and the destructor wait forever for a
// task that does not exist. Three ways in: from outside (the shared queue), and from inside a
// task onto the worker's own queue, counted in pending_ or against the worker's tally of
// finished tasks.
//
// Deterministic: this file replaces the global operator new and delete, so that a thread can
// make its next allocation throw. The tests arm the spawning thread just before each spawn (the
// task is built by then, and a small task allocates nothing) and spawn one task after another
// until a push needs a new block and throws. Not under the sanitizers: their runtimes own
// operator new.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>

#include <ws/task.hpp>
#include <ws/testing/sanitizer.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson02::ThreadPool;
using ws::testing::slowdown;

#if defined(__linux__) && !defined(WS_SANITIZER_ALLOCATOR)
namespace {
// Armed on one thread only; every other allocation of the test program goes straight to malloc.
thread_local bool tl_fail_next_allocation = false;

// More than any deque needs before its next block: a block holds 8 tasks in libstdc++.
constexpr int kMaxTries = 1000;

// What a spawning thread saw: how many spawns succeeded before one threw, and what it threw.
struct SpawnRecord {
    std::atomic<int> succeeded{0};
    std::atomic<bool> threw_bad_alloc{false};
    std::atomic<bool> threw_other{false};
    std::atomic<int> ran{0};  // tasks of those spawns that ran
    std::atomic<bool> done{false};
};

// Spawns tasks into `pool` from the calling thread, each spawn with the thread's next
// allocation armed to fail, until one throws.
void spawn_until_one_throws(ThreadPool& pool, SpawnRecord& record) {
    struct Done {
        SpawnRecord& record;
        ~Done() { record.done = true; }
    } done{record};
    for (int i = 0; i < kMaxTries; ++i) {
        ws::Task task([&record] { record.ran.fetch_add(1); });
        tl_fail_next_allocation = true;
        try {
            pool.spawn(std::move(task));
        } catch (const std::bad_alloc&) {
            tl_fail_next_allocation = false;
            record.threw_bad_alloc = true;
            return;
        } catch (...) {
            tl_fail_next_allocation = false;
            record.threw_other = true;
            return;
        }
        tl_fail_next_allocation = false;
        record.succeeded.fetch_add(1);
    }
}

// After the failed spawn: wait_idle returns within 2 s, every task that was queued ran, and the
// pool is destroyed within 2 s. A call that does not return leaves the pool leaked, not
// destroyed (its workers still use it).
void expect_the_pool_recovers(std::unique_ptr<ThreadPool> pool, const SpawnRecord& record) {
    if (!ws::testing::wait_until([&] { return record.done.load(); }, 10s * slowdown())) {
        (void)pool.release();
        FAIL() << "the task that spawns never finished";
    }
    ASSERT_TRUE(record.threw_bad_alloc.load())
        << (record.threw_other.load() ? "spawn threw something other than std::bad_alloc"
                                      : "no spawn threw (did any push allocate?)");
    ws::testing::DetachedCall wait([p = pool.get()] { p->wait_idle(); });
    if (!wait.wait_for(2s * slowdown())) {
        (void)pool.release();
        FAIL() << "wait_idle did not return after a spawn whose push threw std::bad_alloc: the "
                  "failed spawn left its task counted in pending_ (or took a unit of the "
                  "worker's tally and never gave it back). Take the count back before the "
                  "exception leaves spawn";
    }
    if (const auto error = wait.error()) std::rethrow_exception(error);
    EXPECT_EQ(record.ran.load(), record.succeeded.load())
        << "every task whose spawn succeeded runs once";
    EXPECT_TRUE(ws::testing::run_within(2s * slowdown(), [p = pool.release()] { delete p; }))
        << "the pool's destructor did not return after a failed spawn";
}
}  // namespace

// Through pointers: g++ 12 takes a replacement operator delete that calls free() for a
// mismatched new/delete pair (-Wmismatched-new-delete) once it sees the malloc behind this
// operator new, although both are ours.
void* (*volatile g_acquire)(std::size_t) = std::malloc;
void (*volatile g_release)(void*) = std::free;

void* operator new(std::size_t size) {
    if (tl_fail_next_allocation) {
        tl_fail_next_allocation = false;
        throw std::bad_alloc();
    }
    if (void* p = g_acquire(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    g_release(p);
}
void operator delete(void* p, std::size_t) noexcept {
    g_release(p);
}

TEST(Lesson02Ex2, AFailedSpawnFromOutsideLeavesNothingCounted) {
    // Onto the shared queue, counted in pending_: with nothing else counted, taking the count
    // back takes pending_ to zero.
    auto pool = std::make_unique<ThreadPool>(2);
    SpawnRecord record;
    spawn_until_one_throws(*pool, record);
    expect_the_pool_recovers(std::move(pool), record);
}

TEST(Lesson02Ex2, AFailedSpawnOntoTheWorkersOwnQueueLeavesNothingCounted) {
    // The pool's first task spawns: its worker has finished nothing yet, so each spawn adds
    // one to pending_.
    auto pool = std::make_unique<ThreadPool>(1);
    SpawnRecord record;
    pool->spawn([&record, p = pool.get()] { spawn_until_one_throws(*p, record); });
    expect_the_pool_recovers(std::move(pool), record);
}

TEST(Lesson02Ex2, AFailedSpawnAgainstTheWorkersTallyLeavesNothingCounted) {
    // The first task spawns kSiblings tasks onto its worker's own queue (the only worker); they
    // run newest first, so the oldest runs last, after kSiblings tasks finished on that worker
    // without its running out of work: each of its spawns cancels against that tally, until
    // one throws (within a deque block, far fewer than kSiblings).
    constexpr int kSiblings = 200;
    auto pool = std::make_unique<ThreadPool>(1);
    SpawnRecord record;
    std::atomic<int> siblings_ran{0};
    pool->spawn([&record, &siblings_ran, p = pool.get()] {
        p->spawn([&record, p] { spawn_until_one_throws(*p, record); });
        for (int i = 1; i < kSiblings; ++i)
            p->spawn([&siblings_ran] { siblings_ran.fetch_add(1); });
    });
    expect_the_pool_recovers(std::move(pool), record);
    EXPECT_EQ(siblings_ran.load(), kSiblings - 1);
    EXPECT_LT(record.succeeded.load(), kSiblings)
        << "test setup: more spawns succeeded than the worker's tally held, so the failed one "
           "did not cancel against the tally";
}
#else
TEST(Lesson02Ex2, AFailedSpawnFromOutsideLeavesNothingCounted) {
    GTEST_SKIP() << "replaces operator new: not under a sanitizer's allocator";
}
TEST(Lesson02Ex2, AFailedSpawnOntoTheWorkersOwnQueueLeavesNothingCounted) {
    GTEST_SKIP() << "replaces operator new: not under a sanitizer's allocator";
}
TEST(Lesson02Ex2, AFailedSpawnAgainstTheWorkersTallyLeavesNothingCounted) {
    GTEST_SKIP() << "replaces operator new: not under a sanitizer's allocator";
}
#endif
