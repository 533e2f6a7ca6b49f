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
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

#include "exercises.hpp"
#include "numbered_tasks.hpp"
#include "worker_queue.hpp"

using namespace std::chrono_literals;
using lesson03_tests::push_numbered;
using ws::Task;
using ws::lesson03::WorkerQueue;
using ws::testing::slowdown;

namespace {

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

namespace {

// A task that does nothing, but whose move constructor, the first time it runs on the chosen
// thread, stops there until released: inside a WorkerQueue operation, that holds the queue's
// lock for as long as the test wants.
struct HoldState {
    std::atomic<ws::testing::ThreadId> thread{0};  // the thread whose move stops
    std::atomic<bool> holding{false};
    std::atomic<bool> release{false};
};

struct HoldOnMove {
    std::shared_ptr<HoldState> state;

    explicit HoldOnMove(std::shared_ptr<HoldState> s) : state(std::move(s)) {}
    HoldOnMove(HoldOnMove&& other) noexcept : state(std::move(other.state)) {
        if (state && state->thread.load() == ws::testing::current_thread_id() &&
            !state->holding.exchange(true)) {
            ws::testing::wait_until([&] { return state->release.load(); },
                                    10s * ws::testing::slowdown());
        }
    }
    HoldOnMove& operator=(HoldOnMove&&) = delete;
    void operator()() const {}
};

}  // namespace

TEST(Lesson03Ex2, CrossedStealsThatMeetAtTheWorstMomentDoNotDeadlock) {
    // The deadlock of two queues stealing from each other, forced instead of hoped for: the
    // owner of A holds A's lock (its pop is stopped inside, by the task it moves); then thread 1
    // starts A.steal_half_into(B) and blocks on A's lock, and thread 2 starts
    // B.steal_half_into(A) (both checked asleep in /proc); then the owner lets go. Thread 1, the
    // first to wait, gets A's lock. If it now also wants B's while thread 2 holds B's and waits
    // for A's, neither ever returns.
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    using ws::testing::DetachedCall;
    using ws::testing::ThreadId;
    struct Queues {
        WorkerQueue a, b;
        std::atomic<ThreadId> thief[2]{};
    };
    auto q = std::make_shared<Queues>();  // shared with the threads: a thread that never
                                          // returns keeps them alive
    auto hold = std::make_shared<HoldState>();
    for (int i = 0; i < 2; ++i) {
        q->a.push([] {});
        q->b.push([] {});
    }
    q->a.push(HoldOnMove(hold));  // A's newest task: the owner's pop moves it first
    struct Release {  // whatever happens below, the owner lets go before the test returns
        HoldState& hold;
        ~Release() { hold.release = true; }
    } release_at_exit{*hold};

    DetachedCall owner([q, hold] {
        hold->thread = ws::testing::current_thread_id();
        (void)q->a.pop();
    });
    ASSERT_TRUE(ws::testing::wait_until([&] { return hold->holding.load(); }, 10s * slowdown()))
        << "the owner's pop did not move its task";
    auto steal = [q](int me) {
        return [q, me] {
            q->thief[me] = ws::testing::current_thread_id();
            if (me == 0) {
                q->a.steal_half_into(q->b);
            } else {
                q->b.steal_half_into(q->a);
            }
        };
    };
    DetachedCall first(steal(0));
    ASSERT_TRUE(ws::testing::wait_until([&] { return q->thief[0].load() != 0; }, 10s * slowdown()));
    ASSERT_TRUE(ws::testing::wait_until_all({q->thief[0].load()}, ws::testing::blocked_on_futex,
                                            10s * slowdown()))
        << "A.steal_half_into(B) did not wait for A's lock, which A's owner holds";
    DetachedCall second(steal(1));
    ASSERT_TRUE(ws::testing::wait_until([&] { return q->thief[1].load() != 0; }, 10s * slowdown()));
    ASSERT_TRUE(ws::testing::wait_until_all({q->thief[1].load()}, ws::testing::blocked_on_futex,
                                            10s * slowdown()))
        << "B.steal_half_into(A) did not wait for A's lock, which A's owner holds";
    hold->release = true;
    ASSERT_TRUE(owner.wait_for(10s * slowdown())) << "the owner's pop never returned";
    const bool returned = first.wait_for(2s * slowdown()) && second.wait_for(2s * slowdown());
    ASSERT_TRUE(returned) << "deadlock: A.steal_half_into(B) and B.steal_half_into(A) never "
                             "returned. Never hold both locks at once (take the batch out, "
                             "unlock, then add it), or take them in one fixed order";
    if (const auto error = first.error()) std::rethrow_exception(error);
    if (const auto error = second.error()) std::rethrow_exception(error);
    EXPECT_EQ(q->a.size() + q->b.size(), 4u) << "the four plain tasks are all still queued";
}
