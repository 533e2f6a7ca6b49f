// Lesson 03, exercise 1: a thief takes the oldest half of a queue (rounded up), in order, under
// one lock. No threads here: the queue is tested on its own.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "exercises.hpp"
#include "numbered_tasks.hpp"
#include "worker_queue.hpp"

using lesson03_tests::push_numbered;
using ws::Task;
using ws::lesson03::WorkerQueue;

namespace {

std::vector<int> numbers(int first, int last, int step = 1) {
    std::vector<int> out;
    for (int i = first; step > 0 ? i <= last : i >= last; i += step)
        out.push_back(i);
    return out;
}

}  // namespace

TEST(Lesson03Ex1, AVictimWithFiftyTasksLosesTheOldestTwentyFive) {
    WorkerQueue victim;
    std::vector<int> log;
    push_numbered(victim, log, 0, 50);
    std::vector<Task> batch = victim.steal_half();
    EXPECT_EQ(batch.size(), 25u) << "half of 50";
    EXPECT_EQ(victim.size(), 25u) << "the victim keeps the other half";
    for (Task& task : batch)
        task();
    EXPECT_EQ(log, numbers(0, 24)) << "the batch holds the 25 oldest tasks, oldest first";
    log.clear();
    while (std::optional<Task> task = victim.pop())
        (*task)();
    EXPECT_EQ(log, numbers(49, 25, -1)) << "the victim keeps its 25 newest tasks";
}

TEST(Lesson03Ex1, HalfIsRoundedUp) {
    for (int n : {1, 2, 3, 4, 7, 8, 9}) {
        WorkerQueue victim;
        std::vector<int> log;
        push_numbered(victim, log, 0, n);
        const std::size_t expected = static_cast<std::size_t>((n + 1) / 2);
        EXPECT_EQ(victim.steal_half().size(), expected) << "of " << n << " tasks";
        EXPECT_EQ(victim.size(), static_cast<std::size_t>(n) - expected) << "of " << n << " tasks";
    }
}

TEST(Lesson03Ex1, AnEmptyVictimGivesAnEmptyBatch) {
    WorkerQueue victim;
    EXPECT_TRUE(victim.steal_half().empty());
    EXPECT_EQ(victim.size(), 0u);
}

TEST(Lesson03Ex1, RepeatedStealsHalveTheQueue) {
    WorkerQueue victim;
    std::vector<int> log;
    push_numbered(victim, log, 0, 100);
    std::vector<std::size_t> sizes;
    while (victim.size() > 0)
        sizes.push_back(victim.steal_half().size());
    EXPECT_EQ(sizes, (std::vector<std::size_t>{50, 25, 13, 6, 3, 2, 1}));
}
