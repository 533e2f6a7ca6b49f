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

#include <ws/not_implemented.hpp>

#include "thread_pool.hpp"

namespace ws::lesson07 {

namespace detail {

// ANCHOR: help_until
// Runs other jobs until done() is true. Never blocks: with nothing to run it spins politely
// (and yields to the OS after a while), because what it waits for is running on another
// worker right now and will finish.
template <typename Done>
void help_until(ThreadPool& pool, Done done) {
    // TODO(exercise 2): returns once done() is true, and until then this worker keeps running
    // other jobs, as many as it finds. Rules: never block (no sleep, no condition variable,
    // no atomic wait): what it waits for may be queued on this very worker; and while there is
    // nothing to run, wait politely instead of hammering the queues (advice: no test can tell
    // a polite wait from a hammering one on a loaded machine, so none checks it). Checked by
    // Lesson07Ex2.
    (void)pool;
    (void)done;
    throw NotImplemented("lesson 07, exercise 2: help_until");
}
// ANCHOR_END: help_until

// ANCHOR: outside
// From a thread that is not one of the pool's workers: runs f() as a task on the pool and
// blocks until it has finished; rethrows what it threw. The task is the root of everything f
// forks, so every join inside waits only for work that f itself created.
template <typename F>
void run_from_outside(ThreadPool& pool, F&& f) {
    // TODO(exercise 3): f() has run as a task on one of the pool's workers while this thread
    // slept (no spinning), everything f did is visible here, and what f threw is rethrown
    // here. Rule: what the caller waits on lives in this frame, which may be gone the moment
    // the caller sees the work done: announcing it is the task's last touch of the frame, and
    // the wake-up goes through the pool. Checked by Lesson07Ex3.
    (void)pool;
    (void)f;
    throw NotImplemented("lesson 07, exercise 3: run_from_outside");
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
    // TODO(exercise 2): when join returns, a has run on this worker and b has run exactly
    // once, on a thief that took it while a ran or else here, as a plain call; what b did is
    // visible to join's caller. Rules: no allocation per join; while a runs, b must be where
    // another worker can steal it; waiting for a thief means helping, never blocking. Checked
    // by Lesson07Ex2.
    // TODO(exercise 4): join leaves, returning or throwing, only once both a and b have
    // finished (b runs even if a threw), and rethrows a's exception if a threw, else b's.
    // Rule: no exception may unwind this frame while a thief may still be running b. Checked
    // by Lesson07Ex4.
    (void)a;
    (void)b;
    throw NotImplemented("lesson 07, exercise 2: join");
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
        // TODO(exercise 5): f runs once, as a task on the pool, and counts in pending_ from
        // before it can start until it has finished — f and its captures destroyed too; the
        // first exception a task of the group throws is kept in error_. Rules: once pending_
        // can read zero, wait() may return and the group be destroyed, so nothing of the task
        // may touch the group after that, not even to wake an outside waiter; and a run() that
        // throws leaves pending_ as it found it. Checked by Lesson07Ex5.
        (void)f;
        (void)pool_;
        throw NotImplemented("lesson 07, exercise 5: TaskGroup::run");
    }

    // Returns when every task run() so far has finished (helping meanwhile, on a worker),
    // then rethrows the first exception one of them threw.
    void wait() {
        // TODO(exercise 5): returns once pending_ is zero, with every finished task's effects
        // visible here, then rethrows the group's first exception, once: the next wait()
        // starts clean. Rules: on a worker, waiting means helping; outside the pool the caller
        // sleeps, and hands the pool no task that waits. Checked by Lesson07Ex5.
        throw NotImplemented("lesson 07, exercise 5: TaskGroup::wait");
    }

  private:
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
    // TODO(exercise 6): body has been called on chunks of at most `grain` indices that cover
    // [begin, end) exactly once. Rule: no loop of spawns: the work must spread by halving, so
    // that a thief's first steal takes half of it, and a thief's share splits on its own
    // worker. Checked by Lesson07Ex6.
    (void)pool;
    (void)begin;
    (void)end;
    (void)grain;
    (void)body;
    throw NotImplemented("lesson 07, exercise 6: parallel_for (for_range)");
}

template <typename T, typename Map, typename Reduce>
T reduce_range(ThreadPool& pool, std::size_t begin, std::size_t end, std::size_t grain, Map& map,
               Reduce& reduce) {
    // TODO(exercise 6): returns the map(chunk_begin, chunk_end) of every chunk, chunks as in
    // for_range, combined with reduce. Rules: reduce need not commute: the result must be the
    // one a left-to-right sequential fold gives; and T need not be default-constructible.
    // Checked by Lesson07Ex6.
    (void)pool;
    (void)begin;
    (void)end;
    (void)grain;
    (void)map;
    (void)reduce;
    throw NotImplemented("lesson 07, exercise 6: parallel_reduce (reduce_range)");
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
