// Lesson 05's queue for tasks from outside (task_fifo.hpp), given: first in, first out across
// wrap-around and growth, every task exactly once, and no growth in the steady state. Not an
// exercise: these pass in the starter too.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "task_fifo.hpp"

using ws::Task;
using ws::lesson05::TaskFifo;

namespace {

// Pushes a task that appends `id` to `out` when run.
void push_id(TaskFifo& fifo, std::vector<int>& out, int id) {
    fifo.push(Task([&out, id] { out.push_back(id); }));
}

// Pops a task and runs it.
void pop_and_run(TaskFifo& fifo) {
    Task task = fifo.pop();
    ASSERT_TRUE(task) << "pop() returned an empty task";
    task();
}

}  // namespace

TEST(Lesson05TaskFifo, KeepsTheOrderAcrossWrapAroundAndGrowth) {
    TaskFifo fifo;
    std::vector<int> out;
    int next = 0;
    // Move the front along so that the ring wraps around, keeping a few tasks in it...
    for (int round = 0; round < 40; ++round) {
        push_id(fifo, out, next++);
        push_id(fifo, out, next++);
        pop_and_run(fifo);
    }
    // ...then grow it while it is wrapped (40 tasks in 64 slots, starting at slot 40).
    for (int i = 0; i < 60; ++i)
        push_id(fifo, out, next++);
    while (!fifo.empty())
        pop_and_run(fifo);
    ASSERT_EQ(out.size(), static_cast<std::size_t>(next));
    for (int i = 0; i < next; ++i)
        ASSERT_EQ(out[static_cast<std::size_t>(i)], i) << "out of order at position " << i;
}

TEST(Lesson05TaskFifo, EveryTaskIsDestroyedExactlyOnce) {
    auto token = std::make_shared<int>(0);
    {
        TaskFifo fifo;
        for (int i = 0; i < 100; ++i)
            fifo.push(Task([token] { ++*token; }));
        EXPECT_EQ(token.use_count(), 101) << "a push copied or lost a task's captures";
        for (int i = 0; i < 30; ++i)
            pop_and_run(fifo);
        EXPECT_EQ(*token, 30);
        EXPECT_EQ(token.use_count(), 71) << "a popped task's captures outlived it, or died twice";
        EXPECT_EQ(fifo.size(), 70u);
    }
    EXPECT_EQ(token.use_count(), 1) << "tasks left in the queue were not destroyed with it";
}

TEST(Lesson05TaskFifo, DoesNotGrowInTheSteadyState) {
    TaskFifo fifo;
    std::vector<int> out;
    for (int i = 0; i < 10; ++i)
        push_id(fifo, out, i);
    const std::size_t capacity = fifo.capacity();
    ASSERT_GE(capacity, 10u);
    // A queue that stays between 9 and 10 tasks long for 10,000 pushes keeps its ring.
    for (int i = 10; i < 10'010; ++i) {
        pop_and_run(fifo);
        push_id(fifo, out, i);
    }
    EXPECT_EQ(fifo.capacity(), capacity) << "the ring grew although it never held more tasks";
    EXPECT_EQ(out.size(), 10'000u);
}
