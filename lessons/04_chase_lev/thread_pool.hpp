// Lesson 04: the pool on lock-free deques. Lesson 03's pool (a queue per worker, a shared queue
// for tasks from outside, backoff when idle, batches for thieves), except that each worker's
// queue is now the Chase-Lev deque of exercises 1-4, holding owning Task pointers: the owner
// pushes and pops without a lock or a CAS, and a thief takes each task with one CAS.
//
// Starter code: the parts marked TODO(exercise 5) are in thread_pool.cpp. This header is yours
// too (it is handed in with thread_pool.cpp): add what your solution needs.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <ws/stats.hpp>
#include <ws/task.hpp>
#include <ws/xorshift.hpp>

#include "chase_lev_deque.hpp"

namespace ws::lesson04 {

// ANCHOR: config
// How to build a pool. An aggregate: ThreadPool pool(Config{.num_workers = 4}).
struct Config {
    // Worker threads; 0 → std::invalid_argument. Default: one per hardware thread.
    std::size_t num_workers = std::max(1u, std::thread::hardware_concurrency());
    // Initial capacity of each worker's deque, rounded up to a power of two; a deque doubles
    // when full, so this only saves the first few growths. Default 256.
    std::size_t local_queue_capacity = 256;
    // The most tasks one steal takes from a victim: the thief runs the first and pushes the
    // others onto its own deque, never more than half of what it saw. One steal() call per
    // task, and a lost race (Steal::retry) uses one up too, which bounds a visit under
    // contention. 0 → std::invalid_argument. Default 16.
    std::size_t max_steal_batch = 16;
};
// ANCHOR_END: config

// ANCHOR: class
class ThreadPool {
  public:
    // Starts `num_workers` threads, with the other settings at their defaults; 0 →
    // std::invalid_argument.
    explicit ThreadPool(std::size_t num_workers);
    // Starts config.num_workers threads; a setting out of range → std::invalid_argument.
    explicit ThreadPool(Config config);
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
    // What each worker owns. Only its own thread pushes onto and pops from its deque; other
    // workers steal from it. Its counters are written only by its own thread and read by
    // stats(); on a cache line of its own so that two workers' counters never share one.
    struct alignas(64) Worker {
        explicit Worker(std::size_t capacity) : deque(capacity) {}
        ChaseLevDeque<Task*> deque;  // owning pointers: new in spawn, delete after running
        std::atomic<std::uint64_t> executed{0};
        std::atomic<std::uint64_t> steals{0};
        std::atomic<std::uint64_t> steal_attempts{0};
        std::atomic<std::uint64_t> stolen_tasks{0};
        std::size_t unreported = 0;  // tasks finished here, not yet subtracted from pending_
    };

    void worker_loop(std::size_t index);
    std::unique_ptr<Task> find_task(std::size_t index, XorShift& rng);
    std::unique_ptr<Task> take_shared();
    std::unique_ptr<Task> steal(std::size_t thief, XorShift& rng);
    Task* steal_batch(Worker& victim, Worker& thief);
    static void backoff(unsigned idle_rounds);
    void run_task(Task& task, std::size_t index);
    void count_spawn(Worker& me);
    void report_finished(Worker& me);
    bool on_worker_thread() const noexcept;

    const Config config_;
    std::vector<std::unique_ptr<Worker>> workers_;  // fixed before the threads start

    // Lesson 01's shared state, now only for what has no owner: tasks from outside, the first
    // exception, and the sleep of wait_idle.
    mutable std::mutex mutex_;
    std::condition_variable idle_;              // pending_ reached zero
    std::deque<std::unique_ptr<Task>> shared_;  // tasks spawned from outside the pool
    std::exception_ptr first_error_;

    std::atomic<std::size_t> pending_{0};  // queued (anywhere) + running tasks
    std::atomic<bool> stopping_{false};
    std::vector<std::thread> threads_;
};
// ANCHOR_END: class

}  // namespace ws::lesson04
