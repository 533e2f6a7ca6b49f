// Lesson 09, exercise 1: the promise type and Task<T> — a lazy coroutine that keeps its value
// or its exception for whoever awaits it, and owns its frame. These tests drive the coroutine
// by hand (handle().resume()), with no pool.
#include <gtest/gtest.h>

#include <atomic>
#include <coroutine>
#include <memory>
#include <stdexcept>
#include <string>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson09_test::Tracked;
using ws::lesson09::Task;

namespace {

Task<int> answer(bool& ran) {
    ran = true;
    co_return 42;
}

Task<int> failing() {
    throw std::runtime_error("the body failed");
    co_return 0;
}

Task<void> holds(Tracked) {
    co_return;
}

Task<void> suspends_forever(Tracked parameter) {
    const Tracked local = parameter;  // a local lives in the frame too
    co_await std::suspend_always{};
}

Task<void> sets(bool& flag) {
    flag = true;
    co_return;
}

Task<std::unique_ptr<int>> boxed(int v) {
    co_return std::make_unique<int>(v);
}

}  // namespace

TEST(Lesson09Ex1, ATaskIsLazy) {
    bool ran = false;
    Task<int> task = answer(ran);
    EXPECT_FALSE(ran) << "calling a coroutine must not run its body (initial_suspend)";
    ASSERT_TRUE(task.handle());
    EXPECT_FALSE(task.handle().done());
}

TEST(Lesson09Ex1, ResumingRunsTheBodyAndKeepsTheValue) {
    bool ran = false;
    Task<int> task = answer(ran);
    task.handle().resume();
    EXPECT_TRUE(ran);
    ASSERT_TRUE(task.handle().done()) << "after co_return the coroutine is at its final suspend";
    EXPECT_EQ(task.handle().promise().result(), 42);
}

TEST(Lesson09Ex1, AVoidTaskFinishes) {
    bool ran = false;
    Task<void> task = sets(ran);
    task.handle().resume();
    EXPECT_TRUE(ran);
    ASSERT_TRUE(task.handle().done());
    EXPECT_NO_THROW(task.handle().promise().result());
}

TEST(Lesson09Ex1, AMoveOnlyValueIsMovedOut) {
    Task<std::unique_ptr<int>> task = boxed(7);
    task.handle().resume();
    const std::unique_ptr<int> value = task.handle().promise().result();
    ASSERT_TRUE(value);
    EXPECT_EQ(*value, 7);
}

TEST(Lesson09Ex1, AnExceptionIsKeptForTheAwaiter) {
    Task<int> task = failing();
    EXPECT_NO_THROW(task.handle().resume()) << "the exception must stay in the promise";
    ASSERT_TRUE(task.handle().done());
    try {
        (void)task.handle().promise().result();
        ADD_FAILURE() << "result() must rethrow the body's exception";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "the body failed");
    }
}

TEST(Lesson09Ex1, DestroyingAnUnstartedTaskFreesItsFrame) {
    std::atomic<int> live{0};
    {
        Task<void> task = holds(Tracked(live));
        EXPECT_EQ(live.load(), 1) << "the frame holds its copy of the parameter";
    }
    EXPECT_EQ(live.load(), 0) << "destroying the Task must destroy its frame";
}

TEST(Lesson09Ex1, DestroyingAFinishedTaskFreesItsFrame) {
    std::atomic<int> live{0};
    {
        Task<void> task = holds(Tracked(live));
        task.handle().resume();
        EXPECT_TRUE(task.handle().done());
        EXPECT_EQ(live.load(), 1) << "a finished task keeps its frame until the Task goes";
    }
    EXPECT_EQ(live.load(), 0);
}

TEST(Lesson09Ex1, DestroyingASuspendedTaskFreesItsFrame) {
    std::atomic<int> live{0};
    {
        Task<void> task = suspends_forever(Tracked(live));
        task.handle().resume();
        EXPECT_FALSE(task.handle().done());
        EXPECT_EQ(live.load(), 2);
    }
    EXPECT_EQ(live.load(), 0);
}

TEST(Lesson09Ex1, MovingATaskMovesItsFrame) {
    std::atomic<int> live_a{0}, live_b{0};
    Task<void> a = holds(Tracked(live_a));
    Task<void> moved(std::move(a));
    EXPECT_FALSE(a) << "a moved-from Task is empty";  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(live_a.load(), 1);
    Task<void> b = holds(Tracked(live_b));
    b = std::move(moved);
    EXPECT_EQ(live_b.load(), 0) << "assigning over a Task destroys the frame it owned";
    EXPECT_EQ(live_a.load(), 1);
    b = Task<void>();
    EXPECT_EQ(live_a.load(), 0);
}
