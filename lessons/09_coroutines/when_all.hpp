// Lesson 09: when_all, the coroutine's fork-join. co_await when_all(pool, a, b, ...) runs the
// tasks in parallel on the pool and resumes the awaiter, with all their values, when the last
// one finishes; if any threw, the first one's (in argument order) exception, once all finished.
#pragma once

#include <array>
#include <atomic>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <optional>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <ws/atomic.hpp>
#include <ws/not_implemented.hpp>

#include "coro_task.hpp"
#include "pool_awaitables.hpp"
#include "thread_pool.hpp"

namespace ws::lesson09 {
namespace detail {

// ANCHOR: latch
// Counts the children still running; the child that brings it to zero resumes the parent.
// ws::atomic is std::atomic, except in the explorer's build (tests/09_coroutines/model/).
struct WhenAllLatch {
    ws::atomic<std::size_t> remaining{0};
    std::coroutine_handle<> parent;
};

// A child's frame (its body is await_into): awaits one task and stores its outcome in the
// parent's frame. Its final
// suspension counts down: the last child jumps into the parent (symmetric transfer), the
// others end their resume job.
class WhenAllChild {
  public:
    struct promise_type {
        WhenAllChild get_return_object() noexcept {
            return WhenAllChild(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        std::suspend_always initial_suspend() const noexcept { return {}; }
        auto final_suspend() noexcept {
            struct CountDown {
                bool await_ready() const noexcept { return false; }
                std::coroutine_handle<> await_suspend(
                    std::coroutine_handle<promise_type> self) const noexcept {
                    // TODO(exercise 5): count this child down on its latch; the last child to
                    // finish goes on with the parent. Rule: the parent is resumed exactly once,
                    // and then sees every child's outcome (which memory order gives that?).
                    // Checked by Lesson09Ex5.
                    (void)self;
                    return std::noop_coroutine();
                }
                void await_resume() const noexcept {}
            };
            return CountDown{};
        }
        void return_void() const noexcept {}
        void unhandled_exception() const noexcept { std::terminate(); }  // the body catches all

        WhenAllLatch* latch = nullptr;
    };
    using Handle = std::coroutine_handle<promise_type>;

    explicit WhenAllChild(Handle handle) noexcept : handle_(handle) {}
    WhenAllChild(WhenAllChild&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
    WhenAllChild& operator=(WhenAllChild&&) = delete;
    ~WhenAllChild() {
        if (handle_) handle_.destroy();
    }
    Handle handle() const noexcept { return handle_; }

  private:
    Handle handle_;
};

// ANCHOR_END: latch

// ANCHOR: start_all
// co_await StartAll{...}: the parent suspends; every child but the last becomes a task of the
// pool (stealable, so they run in parallel), and the parent's thread jumps into the last one.
// The latch counts all of them, so the parent is resumed exactly once, by whichever child ends
// last, on whatever worker that is.
struct StartAll {
    ThreadPool* pool;
    std::span<WhenAllChild> children;
    WhenAllLatch latch;

    bool await_ready() const noexcept { return children.empty(); }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> parent) {
        // TODO(exercise 5): start every child so that they may run in parallel, and arrange
        // for the last one to finish to resume `parent`. Rule: the children may finish (and
        // resume the parent, which frees this awaiter) before this function returns: nothing
        // here may touch the awaiter once that can happen. Checked by Lesson09Ex5.WhenAll*.
        (void)parent;
        throw ws::NotImplemented{"lesson 09, exercise 5: when_all"};
    }
    void await_resume() const noexcept {}
};
// ANCHOR_END: start_all

template <typename E>
void rethrow_first(const E& errors) {
    for (const std::exception_ptr& error : errors)
        if (error) std::rethrow_exception(error);
}

template <typename... Ts, std::size_t... I>
Task<std::tuple<Stored<Ts>...>> when_all_of(ThreadPool& pool, std::index_sequence<I...>,
                                            Task<Ts>... tasks) {
    std::tuple<std::optional<Stored<Ts>>...> values;
    std::array<std::exception_ptr, sizeof...(Ts)> errors{};
    std::array<WhenAllChild, sizeof...(Ts)> children{
        await_into<WhenAllChild>(tasks, std::get<I>(values), errors[I])...};
    co_await StartAll{&pool, children, {}};
    rethrow_first(errors);
    co_return std::tuple<Stored<Ts>...>(std::move(*std::get<I>(values))...);
}

}  // namespace detail

// ANCHOR: when_all
// co_await when_all(pool, a, b, ...) → std::tuple of the values (std::monostate for a
// Task<void>).
template <typename... Ts>
Task<std::tuple<detail::Stored<Ts>...>> when_all(ThreadPool& pool, Task<Ts>... tasks) {
    return detail::when_all_of(pool, std::index_sequence_for<Ts...>{}, std::move(tasks)...);
}

// co_await when_all(pool, std::move(tasks)) → std::vector of the values, in the tasks' order.
template <typename T>
Task<std::vector<detail::Stored<T>>> when_all(ThreadPool& pool, std::vector<Task<T>> tasks) {
    std::vector<std::optional<detail::Stored<T>>> values(tasks.size());
    std::vector<std::exception_ptr> errors(tasks.size());
    std::vector<detail::WhenAllChild> children;
    children.reserve(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i)
        children.push_back(
            detail::await_into<detail::WhenAllChild>(tasks[i], values[i], errors[i]));
    co_await detail::StartAll{&pool, children, {}};
    detail::rethrow_first(errors);
    std::vector<detail::Stored<T>> result;
    result.reserve(values.size());
    for (auto& value : values)
        result.push_back(std::move(*value));
    co_return result;
}
// ANCHOR_END: when_all

}  // namespace ws::lesson09
