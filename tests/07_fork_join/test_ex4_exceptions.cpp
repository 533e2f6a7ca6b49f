// Lesson 07, exercise 4: exceptions in join. If a throws while b was stolen, join waits for b,
// then rethrows a's exception.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson07_test::on_worker;
using lesson07_test::spin_until;
using ws::lesson07::join;
using ws::lesson07::ThreadPool;

namespace {
// What a test saw: join's exception (if any) and whether b had finished when join ended.
struct Outcome {
    std::string caught;
    bool b_finished_first = false;
};
}  // namespace

TEST(Lesson07Ex4, IfAThrowsWhileBWasStolenJoinWaitsForBThenRethrows) {
    ThreadPool pool(2);
    std::atomic<bool> b_started{false}, b_finished{false};
    Outcome out;
    on_worker(pool, [&] {
        try {
            join(
                pool,
                [&] {
                    spin_until(b_started);  // b runs on the other worker now
                    throw std::runtime_error("a failed");
                },
                [&] {
                    b_started = true;
                    std::this_thread::sleep_for(std::chrono::milliseconds(50));
                    b_finished = true;
                });
        } catch (const std::runtime_error& e) {
            out.caught = e.what();
        }
        out.b_finished_first = b_finished.load();
    });
    EXPECT_EQ(out.caught, "a failed") << "join must rethrow a's exception";
    EXPECT_TRUE(out.b_finished_first)
        << "join let a's exception out while b was still running on another worker (and b's "
           "job lives in join's stack frame)";
}

TEST(Lesson07Ex4, IfAThrowsAndBWasNotStolenBStillRuns) {
    ThreadPool pool(1);
    bool b_ran = false;
    Outcome out;
    on_worker(pool, [&] {
        try {
            join(
                pool, [] { throw std::runtime_error("a failed"); }, [&] { b_ran = true; });
        } catch (const std::runtime_error& e) {
            out.caught = e.what();
        }
    });
    EXPECT_EQ(out.caught, "a failed");
    EXPECT_TRUE(b_ran) << "b was joined: it must run even though a threw";
}

TEST(Lesson07Ex4, IfBThrowsJoinRethrowsIt) {
    for (std::size_t workers : {1, 2}) {
        ThreadPool pool(workers);
        Outcome out;
        on_worker(pool, [&] {
            try {
                join(
                    pool, [] {}, [] { throw std::logic_error("b failed"); });
            } catch (const std::logic_error& e) {
                out.caught = e.what();
            }
        });
        EXPECT_EQ(out.caught, "b failed") << "with " << workers << " worker(s)";
    }
}

TEST(Lesson07Ex4, IfBothThrowAsExceptionWins) {
    ThreadPool pool(2);
    Outcome out;
    on_worker(pool, [&] {
        try {
            join(
                pool, [] { throw std::runtime_error("a"); }, [] { throw std::runtime_error("b"); });
        } catch (const std::runtime_error& e) {
            out.caught = e.what();
        }
    });
    EXPECT_EQ(out.caught, "a");
}

TEST(Lesson07Ex4, AnExceptionReachesTheCallerOutsideThePoolAndThePoolGoesOn) {
    ThreadPool pool(2);
    EXPECT_THROW(join(
                     pool, [] {}, [] { throw std::runtime_error("b failed"); }),
                 std::runtime_error);
    EXPECT_EQ(lesson07_test::fib(pool, 15), 610u) << "the pool must keep working";
    EXPECT_NO_THROW(pool.wait_idle()) << "join's exception is the caller's, not the pool's";
}

namespace {
// Runs join(pool, a, b) on one of the pool's workers; returns what it threw ("" if nothing).
template <typename A, typename B>
std::string what_join_threw(ThreadPool& pool, A a, B b) {
    std::string caught;
    on_worker(pool, [&] {
        try {
            join(pool, a, b);
        } catch (const std::exception& e) {
            caught = e.what();
        }
    });
    return caught;
}
}  // namespace

TEST(Lesson07Ex4, WhenBWasStolenItsExceptionStillCountsAndAsStillWins) {
    // a waits until b has started on the other worker, so b is stolen every time and join learns
    // of b's exception only from b's job. b alone throws: join rethrows it. Both throw: a's wins.
    ThreadPool pool(2);
    for (const bool a_throws : {false, true}) {
        std::atomic<bool> b_started{false};
        bool b_was_stolen = false;
        const std::string caught = what_join_threw(
            pool,
            [&] {
                b_was_stolen = spin_until(b_started);
                if (a_throws) throw std::runtime_error("a failed");
            },
            [&] {
                b_started = true;
                throw std::logic_error("b failed");
            });
        ASSERT_TRUE(b_was_stolen) << "b never started on the other worker while a ran";
        if (a_throws) {
            EXPECT_EQ(caught, "a failed")
                << "a and a stolen b both threw: join must rethrow a's exception";
        } else {
            EXPECT_EQ(caught, "b failed")
                << "b threw on the worker that stole it, and join did not rethrow it: a stolen "
                   "b's exception is kept in its job";
        }
    }
}
