// Checks of the pool contract that every lesson's tests repeat, written once for any ws::Pool
// (<ws/pool.hpp>; ARCHITECTURE.md describes the contract). Each returns what it saw; the test
// decides what to expect, so a failure message can name the lesson's exercise.
//
// Every template here takes a ws::Pool, so a lesson's tests that use one of them also check,
// at compile time, that the lesson's pool keeps the contract's shape: the tests of lessons 02 to
// 07, against the starter and the solution alike. (Lesson 01's tests use none of them; the
// benchmarks check its pool: see bench/contenders.hpp.)
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

#include "ws/pool.hpp"
#include "ws/testing/harness.hpp"
#include "ws/testing/wait.hpp"

namespace ws::testing {

// What a task saw when it called wait_idle on its own pool.
enum class WaitIdleFromTask { kLogicError, kReturned, kOtherException, kNeverRan };

template <ws::Pool P>
WaitIdleFromTask call_wait_idle_from_a_task(P& pool) {
    std::atomic<WaitIdleFromTask> outcome{WaitIdleFromTask::kNeverRan};
    pool.spawn([&] {
        try {
            pool.wait_idle();
            outcome = WaitIdleFromTask::kReturned;
        } catch (const std::logic_error&) {
            outcome = WaitIdleFromTask::kLogicError;
        } catch (...) {
            outcome = WaitIdleFromTask::kOtherException;
        }
    });
    pool.wait_idle();
    return outcome.load();
}

// What happened when tasks of pool `a` spawned `n` tasks into pool `b`: how many of them ran,
// and on how many distinct threads (a worker of `a` is not a worker of `b`: its spawns into `b`
// must go through b's outside path, not onto one of b's queues picked by a's worker index).
struct CrossPoolSpawns {
    int ran = 0;
    std::size_t b_threads = 0;
};

template <ws::Pool P>
CrossPoolSpawns spawn_from_one_pool_into_another(P& a, P& b, int n) {
    std::mutex m;
    std::set<std::thread::id> threads;
    std::atomic<int> ran{0};
    for (int i = 0; i < n; ++i) {
        a.spawn([&] {
            b.spawn([&] {
                {
                    std::lock_guard lock(m);
                    threads.insert(std::this_thread::get_id());
                }
                ran.fetch_add(1);
            });
        });
    }
    a.wait_idle();
    b.wait_idle();
    return {ran.load(), threads.size()};
}

// Whether wait_idle waited for a task that outlives the child it spawned: the parent spawns a
// child, waits (bounded) until the child has run, possibly on another worker, then works on for
// `linger`. A pool that stopped counting the parent once the child was counted returns early.
// With `finished_task_first`, a trivial task is spawned just before the parent, so a worker may
// already have finished a task when the parent spawns.
template <ws::Pool P>
bool wait_idle_waits_for_a_parent_that_outlives_its_child(P& pool, std::chrono::milliseconds linger,
                                                          bool finished_task_first) {
    std::atomic<bool> child_ran{false};
    std::atomic<bool> parent_done{false};
    if (finished_task_first) pool.spawn([] {});
    pool.spawn([&] {
        pool.spawn([&] { child_ran = true; });
        wait_until([&] { return child_ran.load(); }, std::chrono::milliseconds(200));
        std::this_thread::sleep_for(linger);
        parent_done = true;
    });
    pool.wait_idle();
    return parent_done.load();
}

// CPU time the whole process used during `window` while `pool` sat idle, measured from
// `settle` after one task ran; nullopt if that task never ran. The least of `tries` windows in a
// row: a busy machine (other tests, other builds) can only add to what a window measures, so
// the least is the closest to what the pool itself costs.
template <ws::Pool P>
std::optional<double> idle_cpu_seconds(P& pool, std::chrono::milliseconds settle,
                                       std::chrono::milliseconds window, int tries = 3) {
    std::atomic<bool> ran{false};
    pool.spawn([&] { ran = true; });
    if (!wait_until([&] { return ran.load(); }, std::chrono::seconds(10) * slowdown())) {
        return std::nullopt;
    }
    std::this_thread::sleep_for(settle);
    double least = 1e30;
    for (int i = 0; i < tries; ++i) {
        const double before = process_cpu_seconds();
        std::this_thread::sleep_for(window);
        const double used = process_cpu_seconds() - before;
        if (used < least) least = used;
    }
    return least;
}

}  // namespace ws::testing
