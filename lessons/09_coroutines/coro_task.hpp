// Lesson 09: Task<T>, a lazily started coroutine that produces a T (or throws).
//
//   ws::lesson09::Task<int> answer() { co_return 42; }
//   ws::lesson09::Task<int> twice() { co_return 2 * co_await answer(); }
//
// Calling answer() allocates its frame and runs nothing (lazy): the body starts when someone
// co_awaits the task (exercise 3), or when an executor resumes its handle (spawn, sync_wait:
// exercise 2). The Task owns the frame: destroying the Task destroys the frame, whether the
// body never started, finished, or sits suspended forever (its locals, and the Tasks it holds,
// are destroyed with it).
#pragma once

#include <coroutine>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include <ws/not_implemented.hpp>

// Before Task<T> is declared: inside ws::lesson09 the pool's `Task` means ws::Task (a job),
// and it must be parsed before this namespace's own Task template exists.
#include "thread_pool.hpp"

namespace ws::lesson09 {

template <typename T = void>
class Task;

namespace detail {

// What a Task<T> yields where a value must be stored: T, or std::monostate for void.
template <typename T>
using Stored = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

// ANCHOR: final_awaiter
// Where a finished task goes: to whoever awaits it. Returning that coroutine's handle from
// await_suspend makes the compiler jump to it (a tail call, "symmetric transfer") instead of
// calling it, so a chain of awaits never grows the stack.
struct FinalAwaiter {
    bool await_ready() const noexcept { return false; }
    template <typename Promise>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> done) noexcept {
        // TODO(exercise 3): when the task has finished, whoever awaits it (its promise's
        // continuation) goes on, on this thread; a task that nobody awaits just stops here.
        // Rule: the stack stays flat: a million awaits in a loop, or a chain of them a hundred
        // thousand deep, must not leave one call per await on it. Checked by Lesson09Ex3.
        (void)done;
        return std::noop_coroutine();
    }
    void await_resume() const noexcept {}
};
// ANCHOR_END: final_awaiter

// ANCHOR: promise_base
// What every Task's promise has, whatever T is.
class PromiseBase {
  public:
    // Lazy: the body does not run until someone resumes the coroutine.
    std::suspend_always initial_suspend() const noexcept { return {}; }
    FinalAwaiter final_suspend() const noexcept { return {}; }
    // An exception that leaves the body is kept for the awaiter (rethrown by result()).
    void unhandled_exception() noexcept {
        // TODO(exercise 1): keep the exception that left the body, for result() to rethrow in
        // the awaiter. Rule: nothing may escape here (the task would be lost with it). Checked
        // by Lesson09Ex1.
    }

    std::coroutine_handle<> continuation;  // who awaits this task, if anyone

  protected:
    void rethrow_if_failed() const {
        // TODO(exercise 1): rethrow the kept exception, if the body threw one; otherwise return,
        // so that result() goes on to the value. Rule: the awaiter gets the exception as the body
        // threw it (its type and message), and a body that did not throw makes this return
        // normally, Task<void>'s included. Checked by Lesson09Ex1.
        throw ws::NotImplemented{"lesson 09, exercise 1: the promise's result and exception"};
    }

  private:
    std::exception_ptr error_;
};
// ANCHOR_END: promise_base

// ANCHOR: promise
template <typename T>
class Promise : public PromiseBase {
  public:
    Task<T> get_return_object() noexcept;
    template <typename U>
    requires std::is_convertible_v<U&&, T>
    void return_value(U&& value) {
        // TODO(exercise 1): keep the co_return'ed value until result() hands it to the awaiter.
        // Rule: a T may be move-only and need not be default-constructible. Checked by
        // Lesson09Ex1.
        (void)value;
    }
    // The value, moved out; or the body's exception, rethrown. Only once the task is done.
    T result() {
        rethrow_if_failed();
        return std::move(std::get<T>(value_));  // given: what exercise 1 stores in value_
    }

  private:
    std::variant<std::monostate, T> value_;
};

template <>
class Promise<void> : public PromiseBase {
  public:
    Task<void> get_return_object() noexcept;
    void return_void() noexcept {}
    void result() { rethrow_if_failed(); }
};
// ANCHOR_END: promise

}  // namespace detail

// ANCHOR: task
template <typename T>
class [[nodiscard]] Task {
  public:
    using promise_type = detail::Promise<T>;
    using Handle = std::coroutine_handle<promise_type>;

    Task() noexcept = default;
    explicit Task(Handle handle) noexcept : handle_(handle) {}
    Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
    Task& operator=(Task&& other) noexcept {
        if (this != &other) {
            destroy();
            handle_ = std::exchange(other.handle_, {});
        }
        return *this;
    }
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;
    // Frees the frame, in whatever state it is: never started, done, or suspended. Destroying
    // a task that some thread is running, or that a waker will resume, is the caller's bug.
    ~Task() { destroy(); }

    // For executors (spawn, sync_wait, when_all) and tests: the coroutine itself. The Task
    // still owns it.
    Handle handle() const noexcept { return handle_; }
    explicit operator bool() const noexcept { return static_cast<bool>(handle_); }

    // co_await task: runs the task's body, resumes the awaiter with its value (or exception).
    // The task must not be empty, and is awaited at most once.
    auto operator co_await() && noexcept;
    auto operator co_await() & noexcept;

  private:
    void destroy() noexcept {
        // TODO(exercise 1): free the frame this Task owns, if it owns one, whatever state it is
        // in (never started, suspended, finished). Rule: exactly once: a moved-from Task owns
        // nothing. Checked by Lesson09Ex1.DestroyingAnUnstartedTaskFreesItsFrame and the tests
        // after it.
    }

    Handle handle_;
};
// ANCHOR_END: task

namespace detail {

template <typename T>
Task<T> Promise<T>::get_return_object() noexcept {
    return Task<T>(std::coroutine_handle<Promise<T>>::from_promise(*this));
}

inline Task<void> Promise<void>::get_return_object() noexcept {
    return Task<void>(std::coroutine_handle<Promise<void>>::from_promise(*this));
}

// ANCHOR: task_awaiter
// co_await child: the parent suspends, the child starts on this thread, and when the child
// finishes its FinalAwaiter jumps back into the parent.
template <typename T>
struct TaskAwaiter {
    std::coroutine_handle<Promise<T>> child;

    bool await_ready() const noexcept { return child.done(); }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> parent) {
        // TODO(exercise 3): run the child on this thread, and see to it that the child's end
        // resumes `parent` (which then reads the child's outcome). Rules: the stack stays flat,
        // however many awaits follow one another or nest; and the child may hop to the pool and
        // finish on another worker at any moment once it has started, so what its end needs must
        // be in place before it starts. Checked by Lesson09Ex3.
        (void)parent;
        throw ws::NotImplemented{"lesson 09, exercise 3: co_await of a child Task"};
    }
    T await_resume() { return child.promise().result(); }
};
// ANCHOR_END: task_awaiter

}  // namespace detail

namespace detail {

// ANCHOR: await_into
// The body of the frames that await a task for someone else (sync_wait's, when_all's
// children): awaits `task` and stores its value (std::monostate for void) or its exception.
// `Frame` is the coroutine type, whose promise decides what happens at the end.
template <typename Frame, typename T>
Frame await_into(Task<T>& task, std::optional<Stored<T>>& value, std::exception_ptr& error) {
    try {
        if constexpr (std::is_void_v<T>) {
            co_await task;
            value.emplace();
        } else {
            value.emplace(co_await task);
        }
    } catch (...) {
        error = std::current_exception();
    }
}
// ANCHOR_END: await_into

}  // namespace detail

template <typename T>
auto Task<T>::operator co_await() && noexcept {
    return detail::TaskAwaiter<T>{handle_};
}

template <typename T>
auto Task<T>::operator co_await() & noexcept {
    return detail::TaskAwaiter<T>{handle_};
}

}  // namespace ws::lesson09
