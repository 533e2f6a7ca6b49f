// Lesson 04, exercise 5: a spawn from a worker counts its task before it pushes it. Once the
// push has stored bottom, a thief may take the task, run it and subtract it from pending_; if
// the spawn counted it only afterwards, pending_ can reach zero while the spawning task still
// runs. No code of the test runs in that window (the deque holds Task*, and push calls
// nothing), so the test holds the spawning thread there with a hardware write watchpoint on its
// deque's bottom index (<ws/testing/write_watch.hpp>).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>
#include <ws/testing/write_watch.hpp>

#include "exercises.hpp"
#include "thread_pool.hpp"

using namespace std::chrono_literals;
using ws::lesson04::ThreadPool;
using ws::testing::slowdown;
using ws::testing::wait_until;

namespace {

// The test needs the address of each worker's deque's bottom_, which the pool keeps private.
// Rather than add an accessor to the learner's classes, it names the members in an explicit
// instantiation, where C++ does not check access ([temp.spec.general]: "the usual access
// checking rules do not apply to names used to specify explicit instantiations"): Grant's
// friend function member_of(Tag) returns the pointer to member. The names are the given ones
// (ThreadPool::workers_, Worker::deque, ChaseLevDeque::bottom_), which the learner keeps.
template <typename Tag, auto Member>
struct Grant {
    friend constexpr auto member_of(Tag) { return Member; }
};
struct PoolWorkers {
    friend constexpr auto member_of(PoolWorkers);
};
struct DequeBottom {
    friend constexpr auto member_of(DequeBottom);
};
template struct Grant<PoolWorkers, &ThreadPool::workers_>;
template struct Grant<DequeBottom, &ws::lesson04::ChaseLevDeque<ws::Task*>::bottom_>;

// Where each worker's deque keeps its bottom index, and how many bytes it has.
struct Bottom {
    const volatile void* address;
    std::size_t length;
};
std::vector<Bottom> deque_bottoms(ThreadPool& pool) {
    std::vector<Bottom> bottoms;
    for (auto& worker : pool.*member_of(PoolWorkers{})) {
        const auto& bottom = worker->deque.*member_of(DequeBottom{});
        bottoms.push_back({&bottom, sizeof(bottom)});
    }
    return bottoms;
}

// Holds the writing thread after its first watched write until `go` (at most `bound`).
struct Hold {
    std::atomic<bool> paused{false};
    std::atomic<bool> go{false};
    std::chrono::nanoseconds bound{0};
};
static_assert(std::atomic<bool>::is_always_lock_free);

// A WriteWatch's on_write: runs in the SIGTRAP handler, so lock-free atomics and
// ws::testing::wait_for_flag only.
void hold_after_first_write(void* context) noexcept {
    auto& hold = *static_cast<Hold*>(context);
    if (hold.paused.exchange(true)) return;  // only the first write (a trap tells every watch)
    (void)ws::testing::wait_for_flag(hold.go, hold.bound);
}

}  // namespace

TEST(Lesson04Ex5, WaitIdleWaitsForAParentWhoseChildIsStolenAsItIsPushed) {
    // Two workers. A task P, counted in pending_ and alone there, runs on worker A; a thread
    // sleeps in wait_idle. P spawns a child C onto A's deque, and A is held right after its push
    // stored bottom (a hardware write watchpoint that P arms for its own thread, on its own
    // deque's bottom index). Meanwhile the other worker, B, steals C, runs it and, out of work,
    // subtracts it from pending_. If spawn counts C only after the push, that subtraction takes
    // pending_ to zero and wait_idle returns while P still runs. A is let go once wait_idle has
    // returned, or once B and the waiter have both been seen asleep for a while (B has reported
    // what it ran, and nothing woke the waiter).
    if (!ws::testing::kCanSteerThreads) GTEST_SKIP() << "needs Linux (/proc)";
    {
        std::int64_t probe = 0;
        ws::testing::WriteWatch watch(&probe, sizeof(probe), &hold_after_first_write, nullptr);
        if (!watch.available()) WS_SKIP_NOT_AVAILABLE_HERE(watch.why_unavailable());
    }
    struct Shared {
        Hold hold;
        std::atomic<ws::testing::ThreadId> parent_tid{0};
        std::atomic<bool> arm_failed{false};  // why: in `why`, written before this is set
        std::string why;
        std::atomic<bool> child_ran{false};
        std::atomic<bool> spawned{false};  // P's spawn of C returned
        std::atomic<ws::testing::ThreadId> waiter_tid{0};
        std::atomic<bool> returned{false};  // wait_idle returned
    };
    auto shared = std::make_shared<Shared>();
    shared->hold.bound = 10s * slowdown();
    const auto before = ws::testing::thread_ids();
    auto owned_pool = std::make_unique<ThreadPool>(2);
    ThreadPool& pool = *owned_pool;
    const auto workers = ws::testing::new_threads(before);
    ASSERT_EQ(workers.size(), 2u);
    const std::vector<Bottom> bottoms = deque_bottoms(pool);

    pool.spawn([&pool, shared, bottoms] {
        shared->parent_tid = ws::testing::current_thread_id();
        {
            // A watch on every deque's bottom, for this thread only: it writes only its own.
            std::vector<std::unique_ptr<ws::testing::WriteWatch>> watches;
            for (const Bottom& b : bottoms) {
                watches.push_back(std::make_unique<ws::testing::WriteWatch>(
                    b.address, b.length, &hold_after_first_write, &shared->hold));
                if (!watches.back()->available()) {
                    shared->why = watches.back()->why_unavailable();
                    shared->arm_failed = true;
                    return;
                }
            }
            pool.spawn([shared] { shared->child_ran = true; });
        }  // disarmed
        shared->spawned = true;
    });
    ws::testing::DetachedCall waiter([&pool, shared] {
        shared->waiter_tid = ws::testing::current_thread_id();
        pool.wait_idle();
        shared->returned = true;
    });

    // On every way out: let the parent's worker go on, and leak the pool if the waiter is
    // still in wait_idle.
    struct Cleanup {
        Shared& s;
        ws::testing::DetachedCall& waiter;
        std::unique_ptr<ThreadPool>& pool;
        ~Cleanup() {
            // release: pairs with wait_for_flag's acquire load in the held worker (it publishes
            // nothing the worker reads; a flag).
            s.hold.go.store(true, std::memory_order_release);
            if (!waiter.wait_for(10s * slowdown())) (void)pool.release();
        }
    } cleanup{*shared, waiter, owned_pool};

    ASSERT_TRUE(wait_until(
        [&] {
            return shared->hold.paused.load() || shared->spawned.load() ||
                   shared->arm_failed.load();
        },
        10s * slowdown()))
        << "the task never ran or its spawn never returned";
    if (shared->arm_failed.load()) {
        ASSERT_TRUE(waiter.wait_for(10s * slowdown())) << "wait_idle did not return";
        WS_SKIP_NOT_AVAILABLE_HERE("on a worker: " << shared->why);
    }
    ASSERT_TRUE(shared->hold.paused.load())
        << "a task's spawn never wrote its worker's deque's bottom index: a task spawned by a "
           "worker goes onto that worker's own deque";
    const ws::testing::ThreadId thief =
        workers[0] == shared->parent_tid.load() ? workers[1] : workers[0];
    ASSERT_TRUE(wait_until([&] { return shared->child_ran.load(); }, 10s * slowdown()))
        << "the other worker never stole the child while the parent's worker was held after its "
           "push";
    int asleep_polls = 0;
    wait_until(
        [&] {
            if (shared->returned.load()) return true;
            const bool both = ws::testing::blocked_on_futex(shared->waiter_tid.load()) &&
                              ws::testing::asleep(thief);
            asleep_polls = both ? asleep_polls + 1 : 0;
            return asleep_polls >= 50;
        },
        10s * slowdown());
    const bool early = shared->returned.load();
    shared->hold.go.store(true, std::memory_order_release);  // pairs as in Cleanup
    if (!waiter.wait_for(10s * slowdown())) {
        (void)owned_pool.release();  // the waiter is still in wait_idle: leak the pool
        FAIL() << "wait_idle did not return after the parent finished";
    }
    ASSERT_FALSE(early)
        << "wait_idle returned while the parent still ran: another worker stole its child as "
           "it was pushed, ran it and subtracted it from pending_ before the parent's spawn "
           "counted it. Count a task before pushing it (a thief may take it the moment bottom "
           "is stored)";
    EXPECT_TRUE(shared->spawned.load()) << "wait_idle returned before the parent's spawn did";
}
