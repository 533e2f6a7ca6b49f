// Lesson 09, exercise 2: sync_wait frees the frame it makes. Its frame (detail::SyncWaitFrame)
// stays suspended at its end, so that the caller can read the outcome, and then only the
// caller can destroy it. One that never does leaks a frame per call and nothing else: its
// parameters are references, so no destructor of the test's is left unrun (a Tracked parameter
// of the task would not tell: the task's own frame is freed by its Task). Only LeakSanitizer
// (the asan build) would report it, so this test counts instead: <ws/testing/failing_new.hpp>
// (ld --wrap, set by the root CMakeLists.txt for this program) counts the calling thread's
// operator new calls against its operator delete calls, and sync_wait makes and destroys both
// frames, the task's and its own, on the calling thread.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include <ws/testing/failing_new.hpp>

#include "exercises.hpp"
#include "helpers.hpp"

using ws::lesson09::sync_wait;
using ws::lesson09::Task;
using ws::lesson09::ThreadPool;
using ws::testing::allocations_not_freed_here;

namespace {

Task<int> answer() {
    co_return 42;
}

Task<int> throws_for_sync_wait() {
    throw std::runtime_error("sync_wait must rethrow this, and still free its frame");
    co_return 0;
}

}  // namespace

TEST(Lesson09Ex2, SyncWaitDestroysItsFrame) {
    if (!ws::testing::kCanFailAllocations)
        GTEST_SKIP() << "allocations cannot be counted here: <ws/testing/failing_new.hpp> needs "
                        "ld --wrap (Linux)";
    ThreadPool pool(1);
    ASSERT_EQ(sync_wait(pool, answer()), 42);  // the pool's first blocks for this thread
    constexpr int kCalls = 64;
    const std::int64_t before = allocations_not_freed_here();
    int answers = 0;
    for (int i = 0; i < kCalls; ++i)
        answers += sync_wait(pool, answer()) == 42;
    const std::int64_t left = allocations_not_freed_here() - before;
    EXPECT_EQ(answers, kCalls);
    // A frame per call leaves kCalls. The pool may keep, or free on its worker, the few blocks
    // it allocated on this thread meanwhile (task nodes, 64 to a block; an injector block every
    // 63 pushes).
    EXPECT_LT(left, kCalls / 2) << kCalls << " calls of sync_wait left " << left
                                << " allocations of this thread unfreed: does sync_wait destroy "
                                   "its frame once it has read the outcome?";
}

// The same count when the task throws: sync_wait rethrows the exception, and must have destroyed
// its frame by then (a frame destroyed only on the way that returns a value leaks on this one).
TEST(Lesson09Ex2, SyncWaitDestroysItsFrameWhenTheTaskThrows) {
    if (!ws::testing::kCanFailAllocations)
        GTEST_SKIP() << "allocations cannot be counted here: <ws/testing/failing_new.hpp> needs "
                        "ld --wrap (Linux)";
    ThreadPool pool(1);
    ASSERT_THROW((void)sync_wait(pool, throws_for_sync_wait()), std::runtime_error);
    constexpr int kCalls = 64;
    const std::int64_t before = allocations_not_freed_here();
    int rethrown = 0;
    for (int i = 0; i < kCalls; ++i) {
        try {
            (void)sync_wait(pool, throws_for_sync_wait());
        } catch (const std::runtime_error&) {
            ++rethrown;
        }
    }
    const std::int64_t left = allocations_not_freed_here() - before;
    EXPECT_EQ(rethrown, kCalls);
    EXPECT_LT(left, kCalls / 2) << kCalls << " calls of sync_wait whose task threw left " << left
                                << " allocations of this thread unfreed: does sync_wait destroy "
                                   "its frame before it rethrows the task's exception?";
}
