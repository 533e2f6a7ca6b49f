// Lesson 05: lesson 04's pool (a Chase-Lev deque of owning Task pointers per worker, a shared
// queue for tasks from outside, batches for thieves) whose idle workers park instead of backing
// off: they sleep without using the CPU, and a spawn wakes one of them only when nobody is
// already looking for work (parker.hpp). An outside spawn into an idle pool is now a wake-up
// whose latency counts, so its path is kept short: the shared queue holds tasks by value and
// does not allocate in the steady state (task_fifo.hpp), under a lock whose fast path is inline.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <ws/futex_mutex.hpp>
#include <ws/stats.hpp>
#include <ws/task.hpp>
#include <ws/xorshift.hpp>

#include "chase_lev_deque.hpp"
#include "naive_parker.hpp"
#include "parker.hpp"
#include "task_fifo.hpp"

namespace ws::lesson05 {

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
    // Exercise 1: park on one condition variable and notify it on every spawn (NaiveParker)
    // instead of the event count (Parker) — there to measure what the naive version costs.
    bool naive_parking = false;
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
    // the shared queue. Then wakes a sleeping worker, unless one is already searching.
    void spawn(Task task);

    // Returns once every task spawned so far (and every task those spawned) has finished, then
    // rethrows the first exception a task threw since the last wait_idle. From one of this
    // pool's workers it would wait for itself, so it throws std::logic_error instead.
    void wait_idle();

    std::size_t num_workers() const noexcept { return workers_.size(); }
    // Also parks (times a worker went to sleep) and wakeups (times a sleeping worker was woken).
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
    std::unique_ptr<Task> find_task(std::size_t index, XorShift& rng, Task& outside);
    bool take_shared(Task& out);
    std::unique_ptr<Task> steal(std::size_t thief, XorShift& rng);
    Task* steal_batch(Worker& victim, Worker& thief);
    bool has_work_anywhere() const noexcept;
    void park();
    void wake_one();
    void run_task(Task& task, std::size_t index);
    void count_spawn(Worker& me);
    void report_finished(Worker& me);
    bool on_worker_thread() const noexcept;

    const Config config_;
    std::vector<std::unique_ptr<Worker>> workers_;  // fixed before the threads start

    // One of the two parkers is used, as config_.naive_parking says.
    Parker parker_;
    NaiveParker naive_parker_;

    // Tasks spawned from outside the pool, by value in a ring that does not allocate in the
    // steady state, under a lock of their own whose fast path is inline (ws::FutexMutex): all
    // of it is on the path of a wake-up (the chapter measures it).
    ws::FutexMutex shared_lock_;
    TaskFifo shared_;  // guarded by shared_lock_
    // How many tasks shared_ holds, kept apart so that a parking worker's recheck can read it
    // without the lock (and with seq_cst: see has_work_anywhere()).
    std::atomic<std::size_t> shared_size_{0};

    // Lesson 01's shared state, now only for the first exception and the sleep of wait_idle.
    mutable std::mutex mutex_;
    std::condition_variable idle_;  // pending_ reached zero
    std::exception_ptr first_error_;

    std::atomic<std::size_t> pending_{0};  // queued (anywhere) + running tasks
    std::atomic<bool> stopping_{false};
    std::vector<std::thread> threads_;
};
// ANCHOR_END: class

}  // namespace ws::lesson05
