// Lesson 00 tests, grouped by exercise: Lesson00Ex1 = spawn, Ex2 = run, Ex3 = exceptions.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <ws/testing/harness.hpp>

#include "serial_executor.hpp"

using ws::lesson00::SerialExecutor;

WS_EXERCISE(Lesson00Ex1, "lesson 00, exercise 1 (spawn)", "spawn should only queue the task");
WS_EXERCISE(Lesson00Ex2, "lesson 00, exercise 2 (run until empty)",
            "run() loops while the queue is not empty: does it remove each task before running "
            "it, so the queue shrinks?");
WS_EXERCISE(Lesson00Ex3, "lesson 00, exercise 3 (a throwing task)",
            "after a task throws, run() must go on with the next task");

// ---- exercise 1: spawn ----------------------------------------------------------------------

TEST(Lesson00Ex1, SpawnQueuesWithoutRunning) {
    SerialExecutor ex;
    int ran = 0;
    for (int i = 0; i < 3; ++i)
        ex.spawn([&ran] { ++ran; });
    EXPECT_EQ(ex.pending(), 3u) << "spawn must queue the task";
    EXPECT_EQ(ran, 0) << "spawn must not run the task: run() does";
}

TEST(Lesson00Ex1, SpawnRejectsAnEmptyTask) {
    SerialExecutor ex;
    EXPECT_THROW(ex.spawn(ws::Task{}), std::invalid_argument);
    EXPECT_EQ(ex.pending(), 0u);
}

// ---- exercise 2: run until empty ------------------------------------------------------------

TEST(Lesson00Ex2, RunsTasksInSpawnOrder) {
    SerialExecutor ex;
    std::vector<int> order;
    for (int i = 0; i < 5; ++i)
        ex.spawn([&order, i] { order.push_back(i); });
    ex.run();
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
    EXPECT_EQ(ex.pending(), 0u);
}

TEST(Lesson00Ex2, RunsTasksSpawnedByRunningTasks) {
    SerialExecutor ex;
    std::vector<std::string> order;
    ex.spawn([&] {
        order.push_back("parent");
        ex.spawn([&] {
            order.push_back("child");
            ex.spawn([&] { order.push_back("grandchild"); });
        });
    });
    ex.spawn([&] { order.push_back("sibling"); });
    ex.run();
    EXPECT_EQ(order, (std::vector<std::string>{"parent", "sibling", "child", "grandchild"}));
}

TEST(Lesson00Ex2, RunOnAnEmptyExecutorReturns) {
    SerialExecutor ex;
    EXPECT_NO_THROW(ex.run());
}

TEST(Lesson00Ex2, TasksMayOwnMoveOnlyValues) {
    SerialExecutor ex;
    int seen = 0;
    auto value = std::make_unique<int>(42);
    ex.spawn([&seen, v = std::move(value)] { seen = *v; });
    ex.run();
    EXPECT_EQ(seen, 42);
}

TEST(Lesson00Ex2, ARunningTaskIsNoLongerPending) {
    // A task is taken out of the queue before it runs: while it runs, pending() counts only the
    // tasks still waiting, and a run() called from inside it could not find it again.
    SerialExecutor ex;
    std::vector<std::size_t> seen;
    for (int i = 0; i < 3; ++i)
        ex.spawn([&] { seen.push_back(ex.pending()); });
    ex.run();
    EXPECT_EQ(seen, (std::vector<std::size_t>{2, 1, 0}))
        << "pending() inside a task counted the running task: take it out of the queue before "
           "running it";
}

TEST(Lesson00Ex2, ManySpawnsFromTasksAllRun) {
    SerialExecutor ex;
    long count = 0;
    // A chain 100,000 long: recursion would overflow the stack, a queue does not.
    struct Chain {
        SerialExecutor* ex;
        long* count;
        int left;
        void operator()() const {
            ++*count;
            if (left > 0) ex->spawn(Chain{ex, count, left - 1});
        }
    };
    ex.spawn(Chain{&ex, &count, 99'999});
    ex.run();
    EXPECT_EQ(count, 100'000);
}

// ---- exercise 3: a throwing task ------------------------------------------------------------

TEST(Lesson00Ex3, ThrowingTaskIsRethrownAfterTheOthersRan) {
    SerialExecutor ex;
    int ran = 0;
    ex.spawn([&] { ++ran; });
    ex.spawn([] { throw std::runtime_error("task 2 failed"); });
    ex.spawn([&] { ++ran; });
    try {
        ex.run();
        FAIL() << "run() must rethrow the task's exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "task 2 failed");
    }
    EXPECT_EQ(ran, 2) << "the tasks after the throwing one must still run";
    EXPECT_EQ(ex.pending(), 0u);
}

TEST(Lesson00Ex3, ATaskMayThrowWhatIsNoStdException) {
    // C++ lets a task throw anything, an int as well as a std::exception.
    SerialExecutor ex;
    int ran = 0;
    ex.spawn([] { throw 42; });
    ex.spawn([&] { ++ran; });
    try {
        ex.run();
        FAIL() << "run() must rethrow the task's exception";
    } catch (int e) {
        EXPECT_EQ(e, 42);
    }
    EXPECT_EQ(ran, 1) << "a task that throws an int stopped the others: catch everything "
                         "(catch (...)), not only std::exception";
    EXPECT_EQ(ex.pending(), 0u);
}

TEST(Lesson00Ex3, FirstExceptionWinsAndIsThenForgotten) {
    SerialExecutor ex;
    ex.spawn([] { throw std::runtime_error("first"); });
    ex.spawn([] { throw std::logic_error("second"); });
    EXPECT_THROW(ex.run(), std::runtime_error);
    int ran = 0;
    ex.spawn([&] { ++ran; });
    EXPECT_NO_THROW(ex.run()) << "an exception is rethrown once, not on every later run()";
    EXPECT_EQ(ran, 1);
}

TEST(Lesson00Ex3, AnExceptionIsNotLostToARunCalledFromATask) {
    // A task may call run() (wait_idle()) itself, to finish what is still queued before it goes
    // on. An exception an earlier task threw is then still kept, and it must come out of one of
    // the two runs: the inner run() throws it into the task, which lets it go on to the outer.
    SerialExecutor ex;
    ex.spawn([] { throw std::runtime_error("first"); });
    ex.spawn([&ex] { ex.wait_idle(); });
    try {
        ex.run();
        FAIL() << "the first task's exception was lost: the run() called from inside the second "
                  "task forgot it as it started. Forget an exception when run() rethrows it, not "
                  "when a run() begins";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "first");
    }
    EXPECT_EQ(ex.pending(), 0u);
}
