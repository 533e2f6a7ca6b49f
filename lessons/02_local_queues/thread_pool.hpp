// Lesson 02: a queue per worker. A task spawned by a worker goes to that worker's own queue,
// which only it and the occasional thief touch; tasks spawned from outside still go through
// lesson 01's shared queue. An idle worker steals one task from a random other worker, and
// backs off (spin, yield, short sleeps) when there is nothing anywhere.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <ws/stats.hpp>
#include <ws/task.hpp>
#include <ws/xorshift.hpp>

#include "worker_queue.hpp"

namespace ws::lesson02 {

// ANCHOR: class
class ThreadPool {
  public:
    // Starts `num_workers` threads; 0 → std::invalid_argument.
    explicit ThreadPool(std::size_t num_workers);
    // Runs every task already spawned, then stops and joins the workers.
    ~ThreadPool();

    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    // From one of this pool's workers: onto that worker's own queue. From anywhere else: onto
    // the shared queue.
    void spawn(Task task);

    // Returns once every task spawned so far (and every task those spawned) has finished, then
    // rethrows the first exception a task threw since the last wait_idle. From one of this
    // pool's workers it would wait for itself, so it throws std::logic_error instead.
    void wait_idle();

    std::size_t num_workers() const noexcept { return workers_.size(); }
    PoolStats stats() const;

  private:
    // What each worker owns. Its counters are written only by its own thread and read by
    // stats(); on a cache line of its own so that two workers' counters never share one.
    struct alignas(64) Worker {
        WorkerQueue queue;
        // Tasks this worker finished but has not yet taken off pending_ (see count_spawn).
        // Only this worker's thread touches it.
        std::size_t unreported = 0;
        std::atomic<std::uint64_t> executed{0};
        std::atomic<std::uint64_t> steals{0};
        std::atomic<std::uint64_t> steal_attempts{0};
        std::atomic<std::uint64_t> stolen_tasks{0};
    };

    void worker_loop(std::size_t index);
    std::optional<Task> find_task(std::size_t index, XorShift& rng);
    std::optional<Task> take_shared();
    std::optional<Task> steal(std::size_t thief, XorShift& rng);
    static void backoff(unsigned idle_rounds);
    bool count_spawn();                   // true: it cancelled against this worker's tally
    void uncount_spawn(bool from_tally);  // the push after count_spawn threw
    void report_finished(std::size_t index);
    void run_task(Task& task, std::size_t index);
    bool on_worker_thread() const noexcept;

    std::vector<std::unique_ptr<Worker>> workers_;  // fixed before the threads start

    // Lesson 01's shared state, now only for what has no owner: tasks from outside, the first
    // exception, and the sleep of wait_idle.
    mutable std::mutex mutex_;
    std::condition_variable idle_;  // pending_ reached zero
    std::deque<Task> shared_;       // tasks spawned from outside the pool
    std::exception_ptr first_error_;

    std::atomic<std::size_t> pending_{0};  // queued (anywhere) + running tasks
    std::atomic<bool> stopping_{false};
    std::vector<std::thread> threads_;
};
// ANCHOR_END: class

}  // namespace ws::lesson02
