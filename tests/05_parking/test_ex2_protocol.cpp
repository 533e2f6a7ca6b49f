// Lesson 05, exercise 2: announce, recheck, sleep — the Parker on its own, without a pool.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <ws/testing/harness.hpp>
#include <ws/testing/stress.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>

#include "exercises.hpp"
#include "parker.hpp"
#include "parking_helpers.hpp"

using namespace std::chrono_literals;
using lesson05_test::IdleWorker;
using lesson05_test::wait_for_sleepers;
using ws::lesson05::Parker;
using ws::testing::slowdown;
using ws::testing::wait_until;

TEST(Lesson05Ex2, ParkReturnsAtOnceWhenTheRecheckFindsWork) {
    Parker p(1);
    p.begin_search();
    EXPECT_FALSE(p.park([] { return true; })) << "park() slept although the recheck found work";
    EXPECT_EQ(p.parks(), 0u);
    EXPECT_EQ(p.sleepers(), 0u) << "a cancelled park must take back its announcement";
}

TEST(Lesson05Ex2, AParkedThreadSleepsUntilNotified) {
    Parker p(1);
    std::atomic<bool> work{false};
    IdleWorker w(p, work);
    ASSERT_TRUE(wait_for_sleepers(p, 1)) << "park() never announced a sleeper";
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(w.returned()) << "park() returned without a notify: does it poll?";
    work = true;  // publish, then notify: the protocol's spawner side
    p.notify_one();
    ASSERT_TRUE(wait_until([&] { return w.returned(); }, 1s * slowdown()))
        << "notify_one did not wake the sleeper within 1 s";
    w.join();
    EXPECT_TRUE(w.slept());
    EXPECT_EQ(p.parks(), 1u);
    EXPECT_EQ(p.wakeups(), 1u);
}

TEST(Lesson05Ex2, ANotifyWithNobodyAsleepIsNotStored) {
    // A notify that found nobody asleep must not leave a wake-up behind for a later sleeper:
    // the spawner's task was published before, and a later sleeper's recheck sees it.
    Parker p(1);
    for (int i = 0; i < 3; ++i)
        p.notify_one();
    std::atomic<bool> work{false};
    IdleWorker w(p, work);
    ASSERT_TRUE(wait_for_sleepers(p, 1));
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(w.returned()) << "a notify with nobody asleep woke a later sleeper";
    work = true;
    p.notify_one();
    EXPECT_TRUE(wait_until([&] { return w.returned(); }, 1s * slowdown()));
}

TEST(Lesson05Ex2, ANotifyDuringTheRecheckWakesTheSleeper) {
    // A task published while a worker rechecks, forced: the recheck has read "no work" and
    // holds until the spawner has published and notified. The announcement came first, so the
    // notify must see a sleeper and wake it.
    Parker p(1);
    std::atomic<bool> work{false}, in_recheck{false}, notified{false}, returned{false};
    std::thread sleeper([&] {
        p.begin_search();
        p.park([&] {
            const bool seen = work.load(std::memory_order_seq_cst);
            in_recheck = true;
            wait_until([&] { return notified.load(); }, 5s * slowdown());
            return seen;
        });
        returned = true;
    });
    ASSERT_TRUE(wait_until([&] { return in_recheck.load(); }, 5s * slowdown()));
    work.store(true, std::memory_order_seq_cst);  // publish, then notify
    p.notify_one();
    notified = true;
    const bool woke = wait_until([&] { return returned.load(); }, 1s * slowdown());
    EXPECT_TRUE(woke) << "a task published during the recheck, and its notify, were both missed "
                         "(a lost wake-up): does park() announce before it rechecks?";
    if (!woke) p.notify_all();  // let it go, so the test can end
    sleeper.join();
}

TEST(Lesson05Ex2, ACancelledParkThatAWakerClaimedTakesItsToken) {
    // A waker claims a worker whose recheck is finding work, forced: the recheck holds until
    // the notify has returned, then says "work". The cancel finds itself claimed and must take
    // the token handed to it; a token left over would wake the next park for nothing.
    Parker p(2);
    std::atomic<bool> in_recheck{false}, notified{false};
    bool slept = true;
    std::thread canceller([&] {
        p.begin_search();
        slept = p.park([&] {
            in_recheck = true;
            wait_until([&] { return notified.load(); }, 5s * slowdown());
            return true;  // found work
        });
        p.end_search([] { return false; });  // ran it; nothing left
    });
    ASSERT_TRUE(wait_until([&] { return in_recheck.load(); }, 5s * slowdown()));
    p.notify_one();  // claims the announced worker (nobody else sleeps or searches)
    notified = true;
    canceller.join();
    EXPECT_FALSE(slept) << "the recheck found work: park() must not sleep";
    EXPECT_EQ(p.sleepers(), 0u);
    std::atomic<bool> work{false};
    IdleWorker w(p, work);
    ASSERT_TRUE(wait_for_sleepers(p, 1));
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(w.returned()) << "a later park() returned without a notify: the cancelled park "
                                  "left its wake token behind (a claimed canceller must take it)";
    work = true;
    p.notify_all();  // let it go
}

TEST(Lesson05Ex2, OneNotifyWakesOneSleeper) {
    Parker p(3);
    std::atomic<bool> work{false};
    std::vector<std::unique_ptr<IdleWorker<Parker>>> workers;
    for (int i = 0; i < 3; ++i)
        workers.push_back(std::make_unique<IdleWorker<Parker>>(p, work));
    ASSERT_TRUE(wait_for_sleepers(p, 3));
    auto returned = [&] {
        int n = 0;
        for (auto& w : workers)
            n += w->returned() ? 1 : 0;
        return n;
    };
    p.notify_one();
    ASSERT_TRUE(wait_until([&] { return returned() >= 1; }, 1s * slowdown()));
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(returned(), 1) << "one notify_one woke " << returned() << " sleepers (a herd)";
    p.notify_all();  // let the others go
    EXPECT_TRUE(wait_until([&] { return returned() == 3; }, 5s * slowdown()));
}

namespace {

// A model of the pool: workers take "tasks" from a counter, a producer publishes one at a time
// and waits until it was taken. The worker loop is the pool's: take, or begin a search, or park.
struct Model {
    Parker parker{2};
    std::atomic<std::uint64_t> available{0};
    std::atomic<std::uint64_t> taken{0};
    std::atomic<bool> stop{false};

    bool try_take() {
        // seq_cst: like a pool's steal, part of the recheck that must see publications.
        std::uint64_t a = available.load(std::memory_order_seq_cst);
        while (a > 0) {
            if (available.compare_exchange_weak(a, a - 1, std::memory_order_seq_cst)) {
                taken.fetch_add(1, std::memory_order_seq_cst);
                return true;
            }
        }
        return false;
    }

    void worker(std::uint64_t seed) {
        std::mt19937_64 rng(seed);
        bool searching = false;
        for (;;) {
            if (try_take()) {
                if (searching) {
                    parker.end_search(
                        [&] { return available.load(std::memory_order_seq_cst) > 0; });
                }
                searching = false;
                continue;
            }
            if (stop.load(std::memory_order_seq_cst)) return;
            if (!searching) {
                parker.begin_search();
                searching = true;
                continue;  // look everywhere once more, as a searcher
            }
            // A real search looks at many queues: between finding nothing and announcing
            // the sleep there is a window in which a task can be published. Widen it.
            const auto until =
                std::chrono::steady_clock::now() + std::chrono::nanoseconds(rng() % 4000);
            while (std::chrono::steady_clock::now() < until) {
            }
            parker.park([&] {
                return stop.load(std::memory_order_seq_cst) ||
                       available.load(std::memory_order_seq_cst) > 0;
            });
        }
    }

    void publish() {
        available.fetch_add(1, std::memory_order_seq_cst);  // publish, then notify
        parker.notify_one();
    }
};

}  // namespace

TEST(Lesson05Ex2, NoLostWakeUpUnderStress) {
    // Each round publishes one task while the workers are somewhere between finishing the last
    // one and sleeping (a random delay moves the publication across that window), then waits
    // up to 1 s for it to be taken. A lost wake-up leaves it untaken.
    Model m;
    const std::uint64_t seed = ws::testing::test_seed();
    std::thread w1([&] { m.worker(seed + 1); });
    std::thread w2([&] { m.worker(seed + 2); });
    std::uint64_t misses = 0;
    const auto rounds =
        ws::testing::stress(20'000, 15s * slowdown(), [&](std::mt19937_64& rng, std::uint64_t r) {
            const auto delay = std::chrono::nanoseconds(rng() % 20'000);
            const auto until = std::chrono::steady_clock::now() + delay;
            while (std::chrono::steady_clock::now() < until) {
            }
            m.publish();
            const auto deadline = std::chrono::steady_clock::now() + 1s * slowdown();
            while (m.taken.load() < r + 1) {
                if (std::chrono::steady_clock::now() > deadline) {
                    ++misses;
                    FAIL() << "round " << r << ": the task was not taken within 1 s (a lost "
                           << "wake-up: both workers sleep, the task waits)";
                }
                std::this_thread::yield();
            }
        });
    m.stop = true;
    m.parker.notify_all();
    w1.join();
    w2.join();
    EXPECT_EQ(misses, 0u);
    EXPECT_GT(rounds, 1000u);
    EXPECT_GT(m.parker.parks(), 0u) << "the workers never slept";
}
