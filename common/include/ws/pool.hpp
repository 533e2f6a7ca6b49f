// ws::Pool<P>: the pool contract every lesson's ThreadPool keeps (lessons 01-07), as a concept.
//
// The type system checks the shape: what can be called, with what, returning what. The rest of
// the contract is behaviour, written next to each requirement below; the lessons' tests check
// that part (many of them once for every lesson, in <ws/testing/pool_checks.hpp>, whose
// templates take a ws::Pool). ARCHITECTURE.md at the repository's root has the whole contract.
//
// Lesson 00's SerialExecutor is not a Pool: it has no threads, no worker count and no stats().
// It keeps only spawn and wait_idle, the executor shape of <ws/bench/workloads.hpp>.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <utility>

#include <ws/stats.hpp>
#include <ws/task.hpp>

namespace ws {

// clang-format off
template <typename P>
concept Pool =
    // P pool(n): starts n worker threads; n == 0 throws std::invalid_argument. (Lessons 04-07
    // also take a Config; this constructor means "n workers, every other setting default".)
    // Destroying the pool drains it, then joins: every task spawned before, and every task
    // those spawn meanwhile, runs first. The destructor does not throw; an exception that no
    // wait_idle() reported is dropped.
    std::constructible_from<P, std::size_t> &&
    requires(P& pool, const P& const_pool, Task task) {
        // From any thread, concurrently: outside threads, the pool's own running tasks, and
        // another pool's workers (through this pool's outside path). The task runs exactly
        // once, on one of this pool's workers, in no promised order. An empty Task throws
        // std::invalid_argument. If the task throws, the worker catches it and keeps it for
        // wait_idle(); the worker and the other tasks go on.
        pool.spawn(std::move(task));
        // Any callable converts to a Task, move-only ones included, as lambdas are spawned.
        pool.spawn([] {});
        pool.spawn([owned = std::unique_ptr<int>()] {});
        // Returns once every task spawned before the call, and every task those spawned (to
        // any depth), has finished, its callable destroyed too; what they did is then visible
        // to the caller. Then rethrows the first exception a task threw since the last
        // wait_idle (once: the next call does not), after every other task still ran. Called
        // on one of this pool's workers it would wait for itself: std::logic_error instead.
        pool.wait_idle();
        // The number of worker threads, fixed for the pool's life; any thread may ask.
        { const_pool.num_workers() } -> std::convertible_to<std::size_t>;
        // A snapshot of the counters, by value, from any thread at any time (idle workers may
        // still count steal attempts and parks). Once wait_idle() has returned, executed()
        // counts every task that ran. executed_per_worker has num_workers() entries; the
        // counters a lesson does not have yet stay zero (see <ws/stats.hpp>).
        { const_pool.stats() } -> std::same_as<PoolStats>;
    };
// clang-format on

}  // namespace ws
