// Lesson 03, exercise 2: steal_half_into moves the batch into the thief's own queue, keeping
// its order, and two queues stealing from each other at the same moment never deadlock.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include <ws/testing/exactly_once.hpp>
#include <ws/testing/stress.hpp>

#include "exercises.hpp"
#include "worker_queue.hpp"

using namespace std::chrono_literals;
using ws::Task;
using ws::lesson03::WorkerQueue;
using ws::testing::slowdown;

namespace {

void push_numbered(WorkerQueue& q, std::vector<int>& log, int first, int n) {
    for (int i = first; i < first + n; ++i)
        q.push([&log, i] { log.push_back(i); });
}

// Runs the queue's tasks from the front (oldest first); returns what they logged.
std::vector<int> drain_oldest_first(WorkerQueue& q, std::vector<int>& log) {
    log.clear();
    while (std::optional<Task> task = q.steal_one())
        (*task)();
    return log;
}

bool run(std::optional<Task> task) {
    if (!task) return false;
    (*task)();
    return true;
}

}  // namespace

TEST(Lesson03Ex2, AVictimWithFiftyTasksLosesExactlyTwentyFiveToOneSteal) {
    WorkerQueue victim, thief;
    std::vector<int> log;
    push_numbered(victim, log, 0, 50);
    push_numbered(thief, log, 100, 2);  // the thief's own tasks stay in front of the batch
    EXPECT_EQ(victim.steal_half_into(thief), 25u);
    EXPECT_EQ(victim.size(), 25u);
    EXPECT_EQ(thief.size(), 27u);

    std::vector<int> expected{100, 101};
    for (int i = 0; i <= 24; ++i)
        expected.push_back(i);
    EXPECT_EQ(drain_oldest_first(thief, log), expected)
        << "the 25 oldest tasks land at the back of the thief's queue, in their order";
    expected.clear();
    for (int i = 25; i <= 49; ++i)
        expected.push_back(i);
    EXPECT_EQ(drain_oldest_first(victim, log), expected);
}

TEST(Lesson03Ex2, StealingFromAnEmptyQueueMovesNothing) {
    WorkerQueue victim, thief;
    std::vector<int> log;
    push_numbered(thief, log, 0, 3);
    EXPECT_EQ(victim.steal_half_into(thief), 0u);
    EXPECT_EQ(thief.size(), 3u);
}

TEST(Lesson03Ex2, TwoQueuesStealingFromEachOtherAtOnceDoNotDeadlock) {
    // Each of two threads owns one queue: it pushes a few tasks, steals half of the other queue
    // into its own, and runs as many as it pushed, over and over; the pair starts together, and
    // the whole experiment repeats for a while, since the two must meet at the worst moment. A
    // deadlock here is a hang: the watchdog names it.
    ws::testing::set_deadline(std::chrono::milliseconds(10s * slowdown()));
    constexpr std::size_t kRounds = 20'000, kPushes = 16;
    const auto repetitions =
        ws::testing::stress(100, 2s * slowdown(), [&](std::mt19937_64&, std::uint64_t) {
            ws::testing::ExactlyOnce seen(2 * kRounds * kPushes);
            WorkerQueue queues[2];
            std::atomic<int> ready{0};
            auto owner = [&](std::size_t me) {
                WorkerQueue& mine = queues[me];
                WorkerQueue& other = queues[1 - me];
                ready.fetch_add(1);
                while (ready.load() < 2) {
                }  // start together
                for (std::size_t r = 0; r < kRounds; ++r) {
                    for (std::size_t k = 0; k < kPushes; ++k) {
                        mine.push(
                            [&seen, id = (me * kRounds + r) * kPushes + k] { seen.mark(id); });
                    }
                    other.steal_half_into(mine);
                    for (std::size_t k = 0; k < kPushes; ++k)
                        run(mine.pop());
                }
            };
            std::thread a(owner, 0), b(owner, 1);
            a.join();
            b.join();
            for (WorkerQueue& q : queues) {
                while (run(q.pop())) {
                }
            }
            ASSERT_TRUE(seen.verify());
        });
    EXPECT_GT(repetitions, 0u);
}

TEST(Lesson03Ex2, FourQueuesStealingFromEachOtherLoseAndDuplicateNothing) {
    // Four owners; each round every one pushes a few tasks, steals half of a random other queue
    // and runs a few of its own. More threads than cores, random directions, seeded.
    ws::testing::set_deadline(std::chrono::milliseconds(10s * slowdown()));
    constexpr std::size_t kThreads = 4, kRounds = 5'000, kPushes = 3;
    const auto rounds =
        ws::testing::stress(10, 5s * slowdown(), [&](std::mt19937_64& rng, std::uint64_t) {
            ws::testing::ExactlyOnce seen(kThreads * kRounds * kPushes);
            WorkerQueue queues[kThreads];
            std::vector<std::thread> threads;
            for (std::size_t t = 0; t < kThreads; ++t) {
                threads.emplace_back([&, t, seed = rng()] {
                    std::mt19937_64 local(seed);
                    for (std::size_t r = 0; r < kRounds; ++r) {
                        for (std::size_t k = 0; k < kPushes; ++k) {
                            queues[t].push(
                                [&seen, id = (t * kRounds + r) * kPushes + k] { seen.mark(id); });
                        }
                        const std::size_t victim = (t + 1 + local() % (kThreads - 1)) % kThreads;
                        queues[victim].steal_half_into(queues[t]);
                        for (std::size_t k = 0; k < 2; ++k)
                            run(queues[t].pop());
                    }
                });
            }
            for (auto& th : threads)
                th.join();
            for (WorkerQueue& q : queues) {
                while (run(q.pop())) {
                }
            }
            ASSERT_TRUE(seen.verify());
        });
    EXPECT_GT(rounds, 0u);
}
