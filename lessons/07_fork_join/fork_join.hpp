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
    // TODO(exercise 2): until done() is true, run one job at a time with pool.try_run_one();
    // when it finds none, cpu_relax() — and after a few dozen empty rounds
    // std::this_thread::yield() — but never block.
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
    // TODO(exercise 3): spawn a task that runs f() (keeping what it throws), then sets an
    // atomic `done` flag in this frame (release) and calls pool.notify_outside(); block this
    // thread with pool.block_until(done is true, acquire); then rethrow the task's exception.
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
    // TODO(exercise 2): put b into a detail::StackJob on this stack frame and pool.push() it
    // (onto this worker's deque, where a thief can take it); run a() here. Then, if
    // pool.take_back(&job) says nobody stole b, call b() right here; otherwise
    // detail::help_until the job's `done` flag is set (acquire).
    // TODO(exercise 4): if a() throws, b may be running on another worker, and its job lives
    // in this frame: catch a's exception, still wait for b, then rethrow a's exception — or
    // b's (the job's `error`) if only b threw.
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
        // TODO(exercise 5): count the task in pending_, then pool_.spawn a task that runs f,
        // keeps the first exception in error_ (under error_mutex_), destroys f, and, as its very
        // last touch of the group, takes itself off pending_ (acq_rel); the task that brings it
        // to zero then calls notify_outside() on the pool (captured by reference, not through
        // `this`). If the spawn throws, take the count back and rethrow.
        (void)f;
        (void)pool_;
        throw NotImplemented("lesson 07, exercise 5: TaskGroup::run");
    }

    // Returns when every task run() so far has finished (helping meanwhile, on a worker),
    // then rethrows the first exception one of them threw.
    void wait() {
        // TODO(exercise 5): wait until pending_ is zero (acquire): on a worker by helping
        // (detail::help_until), outside the pool with pool_.block_until. Then rethrow (and
        // clear) error_.
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
    // TODO(exercise 6): a range of at most `grain` indices is one chunk: body(begin, end).
    // A larger one is split in halves, which run through join.
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
    // TODO(exercise 6): as for_range, but each chunk returns map(begin, end) and the two
    // halves' results are combined with reduce(left, right), left first.
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
