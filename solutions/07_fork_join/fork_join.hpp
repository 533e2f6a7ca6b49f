// Lesson 07: fork-join on the work-stealing pool.
//
//   join(pool, a, b)       runs a and b, possibly in parallel; returns when both are done
//   TaskGroup              run(f) any number of tasks, wait() for all of them
//   parallel_for           body(chunk_begin, chunk_end) over [begin, end), chunks <= grain
//   parallel_reduce        map each chunk, combine the results with reduce
//
// The idea: a worker that waits never blocks. It keeps running tasks — its own first, then
// stolen ones — until what it waits for is done ("helping"). So a pool of one worker runs
// fib(30) through a million nested joins without deadlock, and no core idles while there is
// work. Called from outside the pool, each of them hands the work to the pool and blocks the
// caller until it is done.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

#include <ws/trace.hpp>

#include "thread_pool.hpp"

namespace ws::lesson07 {

namespace detail {

// ANCHOR: help_until
// Runs other jobs until done() is true. Never blocks: with nothing to run it spins politely
// (and yields to the OS after a while), because what it waits for is running on another
// worker right now and will finish.
template <typename Done>
void help_until(ThreadPool& pool, Done done) {
    unsigned empty_rounds = 0;
    WS_TRACE_EVENT(help_begin);
    while (!done()) {
        if (pool.try_run_one()) {
            empty_rounds = 0;
        } else if (++empty_rounds < 64) {
            cpu_relax();
        } else {
            std::this_thread::yield();
        }
    }
    WS_TRACE_EVENT(help_end);
}
// ANCHOR_END: help_until

// ANCHOR: outside
// From a thread that is not one of the pool's workers: runs f() as a task on the pool and
// blocks until it has finished; rethrows what it threw. The task is the root of everything f
// forks, so every join inside waits only for work that f itself created.
template <typename F>
void run_from_outside(ThreadPool& pool, F&& f) {
    struct Call {
        std::exception_ptr error;
        std::atomic<bool> done{false};
    } call;
    pool.spawn([&call, &f, &pool] {
        try {
            f();
        } catch (...) {
            call.error = std::current_exception();
        }
        // release: pairs with the caller's acquire load. The last touch of `call`: the caller
        // may return and destroy it at once, which is why the notification goes through the
        // pool.
        call.done.store(true, std::memory_order_release);
        pool.notify_outside();
    });
    pool.block_until([&call] { return call.done.load(std::memory_order_acquire); });
    if (call.error) std::rethrow_exception(call.error);
}
// ANCHOR_END: outside

// ANCHOR: stack_job
// b's half of a join: a Job that lives in join's stack frame and points at b. Whoever runs it
// — the joiner itself or a thief — keeps b's exception and sets `done` last.
template <typename F>
struct StackJob : Job {
    explicit StackJob(F& f) : Job{&execute}, fn(&f) {}

    static void execute(Job* self) noexcept {
        auto* job = static_cast<StackJob*>(self);
        try {
            (*job->fn)();
        } catch (...) {
            job->error = std::current_exception();
        }
        // release: pairs with join's acquire load; after this store the joiner may return
        // and the job's memory is gone, so nothing may follow it
        job->done.store(true, std::memory_order_release);
    }

    F* fn;
    std::exception_ptr error;
    std::atomic<bool> done{false};
};
// ANCHOR_END: stack_job

}  // namespace detail

// ANCHOR: join
template <typename A, typename B>
void join(ThreadPool& pool, A&& a, B&& b) {
    if (!pool.on_worker_thread()) {
        detail::run_from_outside(pool, [&] { join(pool, a, b); });
        return;
    }
    // b goes to the bottom of our own deque, where a thief can take it; a runs right here.
    detail::StackJob<std::remove_reference_t<B>> job_b(b);
    pool.push(&job_b);
    std::exception_ptr error_a;
    try {
        a();
    } catch (...) {
        error_a = std::current_exception();  // b may be running elsewhere: wait for it first
    }
    // Fast path: nobody stole b, so it is still the newest job in our deque. Take it back and
    // run it as a plain call.
    if (pool.take_back(&job_b)) {
        if (!error_a) {
            b();
            return;
        }
        try {
            b();
        } catch (...) {
        }
        std::rethrow_exception(error_a);  // a's exception wins
    }
    // b was stolen: run other work (ours, then stolen) until the thief has finished b.
    // acquire: pairs with StackJob::execute's release store — b's effects and error are ours.
    detail::help_until(pool, [&job_b] { return job_b.done.load(std::memory_order_acquire); });
    if (error_a) std::rethrow_exception(error_a);
    if (job_b.error) std::rethrow_exception(job_b.error);
}
// ANCHOR_END: join

// ANCHOR: task_group
class TaskGroup {
  public:
    explicit TaskGroup(ThreadPool& pool) : pool_(pool) {}
    TaskGroup(const TaskGroup&) = delete;
    TaskGroup& operator=(const TaskGroup&) = delete;
    // A group must not die while its tasks run (they point at it): wait, dropping any error.
    ~TaskGroup() {
        try {
            wait();
        } catch (...) {
        }
    }

    // Spawns f on the pool; from inside a task or from outside.
    template <typename F>
    void run(F f) {
        // relaxed: the task that decrements is published to whoever runs it by the pool's
        // queue, after this increment
        pending_.fetch_add(1, std::memory_order_relaxed);
        try {
            // f in an optional, so that its captures die before the task counts as finished:
            // once wait() returns, nothing of the group's tasks may still run (a capture's
            // destructor may touch what the waiter owns), as wait_idle() promises too.
            pool_.spawn([this, &pool = pool_, f = std::optional<F>(std::move(f))]() mutable {
                try {
                    (*f)();
                } catch (...) {
                    std::lock_guard lock(error_mutex_);
                    if (!error_) error_ = std::current_exception();
                }
                f.reset();
                finish_one(pool);
            });
        } catch (...) {
            // Never queued (moving f, or spawn, threw): nothing else will take it off pending_.
            finish_one(pool_);
            throw;
        }
    }

    // Returns when every task run() so far has finished, then rethrows the first exception
    // one of them threw. On a worker it helps meanwhile; outside the pool it sleeps. (Not a
    // helping task handed to the pool: a worker could pick that up while deep inside one of
    // the group's own tasks, and then wait, on top of that task, for that task to finish.)
    void wait() {
        // acquire: pairs with the tasks' acq_rel decrements — their effects and error_ are ours
        const auto done = [this] { return pending_.load(std::memory_order_acquire) == 0; };
        if (pool_.on_worker_thread()) {
            detail::help_until(pool_, done);
        } else {
            pool_.block_until(done);
        }
        std::lock_guard lock(error_mutex_);
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    }

  private:
    void finish_one(ThreadPool& pool) {
        // acq_rel: pairs with wait()'s acquire loads. The last touch of the group: once it
        // reads zero, wait() may return and the group may be destroyed — so the last task
        // wakes an outside waiter through the pool (passed in, not read through `this`).
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pool.notify_outside();
    }

    ThreadPool& pool_;
    std::atomic<std::size_t> pending_{0};
    std::mutex error_mutex_;
    std::exception_ptr error_;  // guarded by error_mutex_
};
// ANCHOR_END: task_group

namespace detail {

// ANCHOR: split
template <typename F>
void for_range(ThreadPool& pool, std::size_t begin, std::size_t end, std::size_t grain, F& body) {
    if (end - begin <= grain) {
        body(begin, end);
        return;
    }
    const std::size_t mid = begin + (end - begin) / 2;
    join(
        pool, [&] { for_range(pool, begin, mid, grain, body); },
        [&] { for_range(pool, mid, end, grain, body); });
}

template <typename T, typename Map, typename Reduce>
T reduce_range(ThreadPool& pool, std::size_t begin, std::size_t end, std::size_t grain, Map& map,
               Reduce& reduce) {
    if (end - begin <= grain) return map(begin, end);
    const std::size_t mid = begin + (end - begin) / 2;
    std::optional<T> left, right;  // T need not be default-constructible
    join(
        pool, [&] { left.emplace(reduce_range<T>(pool, begin, mid, grain, map, reduce)); },
        [&] { right.emplace(reduce_range<T>(pool, mid, end, grain, map, reduce)); });
    return reduce(std::move(*left), std::move(*right));
}
// ANCHOR_END: split

}  // namespace detail

// ANCHOR: parallel_for
template <typename F>
void parallel_for(ThreadPool& pool, std::size_t begin, std::size_t end, std::size_t grain, F body) {
    if (begin >= end) return;
    if (grain == 0) grain = 1;
    if (!pool.on_worker_thread()) {
        detail::run_from_outside(pool, [&] { detail::for_range(pool, begin, end, grain, body); });
        return;
    }
    detail::for_range(pool, begin, end, grain, body);
}

template <typename T, typename Map, typename Reduce>
T parallel_reduce(ThreadPool& pool, std::size_t begin, std::size_t end, std::size_t grain,
                  T identity, Map map, Reduce reduce) {
    if (begin >= end) return identity;
    if (grain == 0) grain = 1;
    std::optional<T> result;
    const auto compute = [&] {
        result.emplace(detail::reduce_range<T>(pool, begin, end, grain, map, reduce));
    };
    if (pool.on_worker_thread()) {
        compute();
    } else {
        detail::run_from_outside(pool, compute);
    }
    return reduce(std::move(identity), std::move(*result));
}
// ANCHOR_END: parallel_for

}  // namespace ws::lesson07
