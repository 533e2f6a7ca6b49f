// Lesson 09, exercise 3: co_await of a child Task — the child runs, the parent resumes with its
// value or its exception, by symmetric transfer, so awaiting never grows the stack.
#include <gtest/gtest.h>

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson09_test::run;
using lesson09_test::Tracked;
using ws::lesson09::Event;
using ws::lesson09::schedule;
using ws::lesson09::Task;
using ws::lesson09::ThreadPool;

namespace {

Task<int> leaf(int v) {
    co_return v;
}

Task<int> sum_of_leaves() {
    const int a = co_await leaf(1);
    Task<int> b = leaf(2);
    const int two = co_await b;  // an lvalue Task can be awaited too
    co_return a + two + co_await leaf(3);
}

Task<int> level3() {
    throw std::runtime_error("from three levels down");
    co_return 0;
}
Task<int> level2() {
    co_return 1 + co_await level3();
}
Task<int> level1() {
    co_return 1 + co_await level2();
}
Task<std::string> catches_level1() {
    try {
        co_return std::to_string(co_await level1());
    } catch (const std::runtime_error& e) {
        co_return std::string("caught: ") + e.what();
    }
}

// The child finishes synchronously: without symmetric transfer, each await nests a call to
// resume() inside the last one, and a loop of them overflows the stack.
Task<void> record_frame(std::uintptr_t& frame) {
    frame = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    co_return;
}

Task<std::uintptr_t> deepest_frame_change(std::size_t awaits) {
    std::uintptr_t first = 0, frame = 0, spread = 0;
    for (std::size_t i = 0; i < awaits; ++i) {
        co_await record_frame(frame);
        if (i == 0) first = frame;
        const std::uintptr_t d = first > frame ? first - frame : frame - first;
        if (d > spread) spread = d;
        if (spread > (std::uintptr_t{1} << 20)) break;  // growing: stop before it overflows
    }
    co_return spread;
}

// Each level awaits the next one down: by symmetric transfer the deepest runs where the first
// child ran, at the same depth of the stack. An awaiter that runs its child by calling resume()
// (even one that then skips the suspension when the child has finished) leaves a call per level.
Task<void> record_deepest_frame(std::size_t depth, std::uintptr_t& deepest) {
    if (depth == 0) {
        deepest = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
        co_return;
    }
    co_await record_deepest_frame(depth - 1, deepest);
}

Task<std::uintptr_t> nested_frame_change(std::size_t depth) {
    std::uintptr_t first = 0, deepest = 0;
    co_await record_frame(first);
    co_await record_deepest_frame(depth, deepest);
    co_return first > deepest ? first - deepest : deepest - first;
}

Task<std::uint64_t> chain(std::size_t depth) {
    if (depth == 0) co_return 1;
    co_return 1 + co_await chain(depth - 1);
}

Task<int> hop_and_answer(ThreadPool& pool) {
    co_await schedule(pool);
    co_return 5;
}
Task<int> awaits_a_hopping_child(ThreadPool& pool) {
    co_return 2 * co_await hop_and_answer(pool);
}

Task<void> waits_for(Event& event, Tracked) {
    co_await event;
}
Task<void> middle(Event& event, Tracked t) {
    co_await waits_for(event, t);
}
Task<void> top(Event& event, Tracked t) {
    co_await middle(event, t);
}

}  // namespace

TEST(Lesson09Ex3, AwaitingAChildGivesItsValue) {
    ThreadPool pool(2);
    EXPECT_EQ(run(pool, sum_of_leaves()), 6);
}

TEST(Lesson09Ex3, AwaitingRunsTheChildWithoutAPool) {
    Task<int> task = sum_of_leaves();
    task.handle().resume();  // leaves finish at once: the whole tree runs inside this call
    ASSERT_TRUE(task.handle().done());
    EXPECT_EQ(task.handle().promise().result(), 6);
}

TEST(Lesson09Ex3, AnExceptionTravelsThroughThreeLevels) {
    ThreadPool pool(2);
    EXPECT_EQ(run(pool, catches_level1()), "caught: from three levels down");
    EXPECT_THROW(run(pool, level1()), std::runtime_error);
}

TEST(Lesson09Ex3, AMillionAwaitsInALoopDoNotGrowTheStack) {
    ThreadPool pool(1);
    const std::uintptr_t spread = run(pool, deepest_frame_change(1'000'000));
    EXPECT_LT(spread, std::uintptr_t{64} << 10)
        << "the stack grew by " << spread << " bytes over the awaits: does the awaiter return "
        << "the child's handle (and the final awaiter the parent's) instead of calling resume()?";
}

TEST(Lesson09Ex3, AChainOfNestedAwaitsOfAHundredThousandLevels) {
    ThreadPool pool(1);
    EXPECT_EQ(run(pool, chain(100'000)), 100'001u);
}

TEST(Lesson09Ex3, ANestedChainOfAwaitsKeepsTheStackFlat) {
    ThreadPool pool(1);
    const std::uintptr_t spread = run(pool, nested_frame_change(10'000));
    EXPECT_LT(spread, std::uintptr_t{64} << 10)
        << "ten thousand nested awaits moved the stack by " << spread << " bytes: does the "
        << "awaiter call resume() on the child instead of returning its handle?";
}

TEST(Lesson09Ex3, TheParentResumesWhereTheChildFinished) {
    ThreadPool pool(2);
    EXPECT_EQ(run(pool, awaits_a_hopping_child(pool)), 10);
}

TEST(Lesson09Ex3, DestroyingATaskSuspendedThreeLevelsDownFreesEveryFrame) {
    ThreadPool pool(1);
    Event never(pool);
    std::atomic<int> live{0};
    {
        Task<void> task = top(never, Tracked(live));
        task.handle().resume();  // runs down to the event and suspends there, for ever
        EXPECT_FALSE(task.handle().done());
        EXPECT_GE(live.load(), 3) << "each level's frame holds (at least) a Tracked";
    }
    EXPECT_EQ(live.load(), 0) << "the top frame owns the middle one's Task, which owns the last";
}
