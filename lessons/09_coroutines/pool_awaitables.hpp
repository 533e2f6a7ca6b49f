// Lesson 09: coroutines on the pool. resume_on (the waker's one move), co_await schedule(pool),
// spawn(pool, task) (detached) and sync_wait(pool, task) (from outside the pool).
#pragma once

#include <atomic>
#include <coroutine>
#include <exception>
#include <new>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

#include <ws/not_implemented.hpp>

#include "coro_task.hpp"
#include "thread_pool.hpp"

namespace ws::lesson09 {

namespace detail {

// ANCHOR: detached_error
// Where a detached coroutine (spawn, below) leaves its exception for the pool: a slot per
// thread, read by the resume job it ended in. Handing it over must not allocate: a spawned job
// would (a std::bad_alloc there would have nowhere to go but std::terminate), while throwing it
// from the resume job costs nothing new: the pool catches what a task throws and wait_idle
// rethrows it (lesson 01's contract). The pool keeps only the first exception anyway, so a
// second one left before the first was handed over is dropped.
// noinline: inside a coroutine, clang may keep a thread_local's address from before a co_await
// and reuse it after, on another thread; a call it cannot see into reads it afresh.
[[gnu::noinline]] inline std::exception_ptr& detached_error_slot() noexcept {
    thread_local std::exception_ptr slot;
    return slot;
}

inline void leave_for_the_pool(std::exception_ptr error) noexcept {
    std::exception_ptr& slot = detached_error_slot();
    if (!slot) slot = std::move(error);
}

// What a resume job runs: resumes `coroutine` on this thread, then throws what a detached
// coroutine that ended meanwhile left here, for the pool to keep.
inline void resume_here(std::coroutine_handle<> coroutine) {
    coroutine.resume();
    if (std::exception_ptr& slot = detached_error_slot())
        std::rethrow_exception(std::exchange(slot, nullptr));
}
// ANCHOR_END: detached_error

}  // namespace detail

// ANCHOR: resume_on
// Puts a suspended coroutine back on the pool: a resume job, spawned like any task. So it goes
// where lesson 07's spawn sends work: from one of the pool's workers onto that worker's own
// deque (hot in its cache, stealable by the others), from anywhere else into the injector; then
// a sleeping worker is woken if nobody is searching. The job is a lambda holding one pointer: it
// fits in ws::Task's inline buffer, and the pool usually recycles a node for it — usually: a new
// block of nodes, an injector block or a deque's growth allocates, so this can throw
// std::bad_alloc. The push (release) pairs with the pop, steal or injector take (acquire) of the
// worker that runs the job: that publishes the suspended frame, and everything the waker wrote
// before, to the resuming worker. The pool counts it as a task: wait_idle waits for it. The job
// resumes with detail::resume_here (above), so that what a detached coroutine that ended in it
// threw reaches the pool.
inline void resume_on(ThreadPool& pool, std::coroutine_handle<> coroutine) {
    // TODO(exercise 2): have the pool resume `coroutine`, once, on one of its workers. Rule:
    // the woken coroutine goes where the pool's spawn puts work (the calling worker's own
    // deque, or the injector from outside, then a sleeper unparked), wait_idle must wait for
    // it, and the job resumes it with detail::resume_here (given, above), which also hands a
    // detached coroutine's exception to the pool. Checked by Lesson09Ex2.
    (void)pool;
    (void)coroutine;
    throw ws::NotImplemented{"lesson 09, exercise 2: resume_on"};
}
// ANCHOR_END: resume_on

// ANCHOR: wake
// A waker's resume_on that cannot lose the coroutine: if the pool cannot take the job (out of
// memory), the waker resumes it here, on its own thread. Every caller holds no lock and touches
// nothing the woken coroutine may free, so running it inline is as valid as running it elsewhere.
// A detached coroutine that ends in here by throwing leaves its exception in this thread's slot
// (detached_error_slot), for the resume job this waker runs in: a waker in a coroutine always
// runs in one. A waker outside any (Event::set from a plain task, or from outside the pool)
// leaves it to the next resume job on its thread, if that is a worker; outside, it is dropped.
inline void wake(ThreadPool& pool, std::coroutine_handle<> coroutine) {
    try {
        resume_on(pool, coroutine);
    } catch (const std::bad_alloc&) {
        coroutine.resume();
    }
}
// ANCHOR_END: wake

// ANCHOR: schedule
// co_await schedule(pool): the coroutine continues as a task of `pool` (on one of its workers).
class ScheduleAwaiter {
  public:
    explicit ScheduleAwaiter(ThreadPool& pool) noexcept : pool_(&pool) {}
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> coroutine) const { resume_on(*pool_, coroutine); }
    void await_resume() const noexcept {}

  private:
    ThreadPool* pool_;
};

inline ScheduleAwaiter schedule(ThreadPool& pool) noexcept {
    return ScheduleAwaiter(pool);
}
// ANCHOR_END: schedule

namespace detail {

// ANCHOR: detached
// The frame that owns a spawned task: it starts suspended, awaits the task, and frees itself
// when it finishes (final_suspend never suspends). What the task throws goes where a task's
// exception goes in the pool's contract: the pool keeps it and wait_idle rethrows it. It is
// left for the resume job this frame ends in (leave_for_the_pool), which throws it: nothing on
// that way allocates, so nothing can fail.
struct Detached {
    struct promise_type {
        Detached get_return_object() noexcept {
            return Detached{std::coroutine_handle<promise_type>::from_promise(*this)};
        }
        std::suspend_always initial_suspend() const noexcept { return {}; }
        std::suspend_never final_suspend() const noexcept { return {}; }
        void return_void() const noexcept {}
        void unhandled_exception() const noexcept { std::terminate(); }  // the body catches all
    };
    std::coroutine_handle<promise_type> handle;
};

inline Detached run_detached(Task<void> task) {
    // TODO(exercise 2): run the task; what it throws must reach the pool, for wait_idle to
    // rethrow. Rule: nothing escapes this body (the promise terminates), and nothing on the
    // exception's way may allocate: a std::bad_alloc there would have nowhere to go (the given
    // detail::leave_for_the_pool does not). Checked by
    // Lesson09Ex2.WaitIdleRethrowsWhatASpawnedCoroutineThrew and
    // Lesson09Ex2.ADetachedExceptionReachesThePoolWithoutAllocating.
    co_await std::move(task);
}
// ANCHOR_END: detached

// ANCHOR: sync_wait_frame
// sync_wait's frame (its body is await_into): awaits the task, stores its outcome in the
// caller's variables, and at its
// final suspension tells the blocked caller. It stays suspended there, so the caller, once
// told, reads the outcome and destroys the frame.
struct SyncWaitFrame {
    struct promise_type {
        SyncWaitFrame get_return_object() noexcept {
            return SyncWaitFrame{std::coroutine_handle<promise_type>::from_promise(*this)};
        }
        std::suspend_always initial_suspend() const noexcept { return {}; }
        auto final_suspend() noexcept {
            struct Notify {
                bool await_ready() const noexcept { return false; }
                void await_suspend(std::coroutine_handle<promise_type> self) const noexcept {
                    // The frame is suspended: from the moment `done` is true the caller may
                    // destroy it, so nothing after that store touches it (owner is a copy).
                    ThreadPool* const owner = self.promise().pool;
                    // Pairs with the caller's load in block_until: it then sees the outcome.
                    self.promise().done->store(true, std::memory_order_release);
                    owner->notify_outside();  // touches only the pool, which outlives the call
                }
                void await_resume() const noexcept {}
            };
            return Notify{};
        }
        void return_void() const noexcept {}
        void unhandled_exception() const noexcept { std::terminate(); }  // the body catches all

        ThreadPool* pool = nullptr;
        std::atomic<bool>* done = nullptr;
    };
    std::coroutine_handle<promise_type> handle;
};

// ANCHOR_END: sync_wait_frame

}  // namespace detail

// ANCHOR: spawn
// Starts `task` on the pool, detached: nobody awaits it. It runs as the pool's tasks do (its
// steps count for wait_idle, which rethrows what it threw); its frame is freed when it ends.
inline void spawn(ThreadPool& pool, Task<void> task) {
    const detail::Detached detached = detail::run_detached(std::move(task));
    try {
        resume_on(pool, detached.handle);
    } catch (...) {
        detached.handle.destroy();  // never started: frees its frame and the task moved into it
        throw;
    }
}
// ANCHOR_END: spawn

// ANCHOR: sync_wait
// Runs `task` on the pool and blocks the calling thread until it has finished; returns its value
// or rethrows its exception. Only from outside the pool: a worker blocked here could be the very
// worker the task needs (with one worker, it always is), so from one of the pool's workers it
// throws std::logic_error; a coroutine there co_awaits the task instead.
template <typename T>
T sync_wait(ThreadPool& pool, Task<T> task) {
    // TODO(exercise 2): start a detail::SyncWaitFrame for the task on the pool, sleep until
    // it tells you it is done, then give back the task's value or rethrow its exception.
    // Rule: the caller sleeps (no spinning) and destroys the frame only after it is done, and
    // reads the outcome only after seeing `done`: which order must that load have, to pair
    // with the frame's release store (in Notify), and what goes wrong without it? From one of
    // this pool's workers, a std::logic_error that says why. Checked by Lesson09Ex2.SyncWait*.
    (void)pool;
    (void)task;
    throw ws::NotImplemented{"lesson 09, exercise 2: sync_wait"};
}
// ANCHOR_END: sync_wait

}  // namespace ws::lesson09
