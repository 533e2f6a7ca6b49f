// Lesson 09, exercise 5, under the interleaving explorer: when_all's count-down. The children
// finish on different threads at once; whatever the schedule, exactly one of them resumes the
// parent, and the parent then sees every child's outcome. A count-down in two steps (decrement,
// then a separate load to see whether it reached zero) lets two children both see zero and
// resume the parent twice; a decrement that is not a release and an acquire lets the parent
// miss what a child wrote. Both windows are a few instructions wide: stress tests seldom hit
// them, the explorer tries them all.
//
// The pool is not part of the scenario (its workers are threads the explorer does not run):
// the test sets up the latch as StartAll does and resumes each child on a thread of its own,
// as the worker that took the child's resume job would.
#include <gtest/gtest.h>

#include <array>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <utility>

#include <ws/atomic.hpp>
#include <ws/model/explore.hpp>
#include <ws/testing/harness.hpp>

#include "../exercises.hpp"
#include "coro_task.hpp"
#include "when_all.hpp"

using ws::lesson09::Task;
using ws::lesson09::detail::await_into;
using ws::lesson09::detail::WhenAllChild;
using ws::lesson09::detail::WhenAllLatch;

// A named namespace, not an anonymous one: g++ warns (-Wsubobject-linkage) when a coroutine
// template's frame holds a type from an anonymous namespace.
namespace lesson09_ex5_explorer {

ws::model::Options when_all_options() {
    ws::testing::set_explorer_deadline();  // every test calls this first
    ws::model::Options o;
    o.max_dfs_executions = 20'000;
    o.random_executions = 300 / static_cast<std::uint64_t>(ws::testing::slowdown());
    return o;
}

// What the children write and the parent reads. `values` and `errors` are where when_all's
// children store their outcomes (plain memory, which the explorer does not track); each task
// also writes a `written` flag, relaxed, just before it returns: it stands for the outcome
// where the explorer can see whether the parent reads it without a happens-before.
template <std::size_t N>
struct Outcomes {
    std::array<std::optional<int>, N> values;
    std::array<std::exception_ptr, N> errors;
    std::array<ws::atomic<int>, N> written{};
    int resumes = 0;  // how often the parent was resumed
};

Task<int> child_task(ws::atomic<int>& written, int value) {
    written.store(1, std::memory_order_relaxed);  // ordered by the count-down, if at all
    co_return value;
}

// The parent: a coroutine that checks, each time it is resumed, that this is the first time
// and that every child's outcome is there. It never finishes (a loop of suspensions), so even a
// second resume, the bug this looks for, resumes a suspended coroutine rather than a finished
// one.
class Parent {
  public:
    struct promise_type {
        Parent get_return_object() noexcept {
            return Parent(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        std::suspend_always initial_suspend() const noexcept { return {}; }
        std::suspend_always final_suspend() const noexcept { return {}; }
        void return_void() const noexcept {}
        void unhandled_exception() const noexcept { std::terminate(); }
    };

    explicit Parent(std::coroutine_handle<promise_type> handle) noexcept : handle_(handle) {}
    Parent(Parent&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
    Parent& operator=(Parent&&) = delete;
    ~Parent() {
        if (handle_) handle_.destroy();
    }
    std::coroutine_handle<> handle() const noexcept { return handle_; }

  private:
    std::coroutine_handle<promise_type> handle_;
};

template <std::size_t N>
Parent parent_body(Outcomes<N>& outcomes) {
    for (;;) {
        // Plain: the explorer runs one thread at a time and switches only at atomic operations,
        // so the count is exact. (With the bug a second resume may come while the first waits
        // at one of the loads below; this check reports it all the same.)
        ++outcomes.resumes;
        ws::model::check(outcomes.resumes == 1,
                         "the parent was resumed twice: two children both saw the count at zero");
        for (std::size_t i = 0; i < N; ++i) {
            ws::model::check(outcomes.values[i] == static_cast<int>(i) + 10,
                             "the parent was resumed before every child stored its value");
            ws::model::check(outcomes.written[i].load(std::memory_order_relaxed) == 1,
                             "the parent does not see what a child wrote before it finished: "
                             "the count-down does not order it before the parent's resume");
        }
        co_await std::suspend_always{};
    }
}

// N children of one latch, each resumed on a thread of its own (the last on the scenario's).
template <std::size_t N>
void children_finish_on_n_threads() {
    Outcomes<N> outcomes;
    std::array<Task<int>, N> tasks;
    for (std::size_t i = 0; i < N; ++i)
        tasks[i] = child_task(outcomes.written[i], static_cast<int>(i) + 10);
    std::array<std::optional<WhenAllChild>, N> children;
    for (std::size_t i = 0; i < N; ++i)
        children[i].emplace(
            await_into<WhenAllChild>(tasks[i], outcomes.values[i], outcomes.errors[i]));
    Parent parent = parent_body(outcomes);

    // As StartAll sets it up; starting a thread publishes it, as the pool's push does.
    WhenAllLatch latch;
    latch.parent = parent.handle();
    latch.remaining.store(N, std::memory_order_relaxed);
    for (auto& child : children)
        child->handle().promise().latch = &latch;
    {
        std::array<std::optional<ws::model::Thread>, N - 1> threads;
        for (std::size_t i = 0; i + 1 < N; ++i)
            threads[i].emplace([&child = *children[i]] { child.handle().resume(); });
        children[N - 1]->handle().resume();
    }  // joins the threads
    ws::model::check(outcomes.resumes != 0, "no child resumed the parent");
}

}  // namespace lesson09_ex5_explorer

using lesson09_ex5_explorer::children_finish_on_n_threads;
using lesson09_ex5_explorer::when_all_options;

TEST(Lesson09Ex5, ExplorerTwoChildrenFinishingAtOnceResumeTheParentOnce) {
    const auto report =
        ws::model::explore(when_all_options(), [] { children_finish_on_n_threads<2>(); });
    EXPECT_FALSE(report.failed) << report;
}

TEST(Lesson09Ex5, ExplorerThreeChildrenFinishingAtOnceResumeTheParentOnce) {
    const auto report =
        ws::model::explore(when_all_options(), [] { children_finish_on_n_threads<3>(); });
    EXPECT_FALSE(report.failed) << report;
}
