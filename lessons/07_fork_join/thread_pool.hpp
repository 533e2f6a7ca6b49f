// Lesson 07: the pool of lesson 06 (a Chase-Lev deque per worker, the global injector,
// parking) with what fork-join needs from it:
//   - the deques hold Job*, a function pointer and whatever a job embeds behind it, so a join
//     can put a job that lives on its own stack into the deque (no allocation per join);
//   - try_run_one(), with which a worker waiting for a join keeps working instead of blocking;
//   - idle detection with per-worker counters instead of one shared counter that every task
//     would bounce between the cores.
// fork_join.hpp builds join, TaskGroup, parallel_for and parallel_reduce on top.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <pthread.h>

#include <ws/stats.hpp>
#include <ws/task.hpp>

#include "chase_lev_deque.hpp"
#include "injector.hpp"

namespace ws::lesson07 {

// A pause for spin-waits: tells the core (and a hyper-thread sibling) that we are waiting.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// What the deques and the injector hold. `run` executes the job and must not throw; it may
// free the job (a spawned task) or signal whoever waits for it (a join's stack job) — after
// that the scheduler does not touch the job again.
struct Job {
    void (*run)(Job* self) noexcept;
};

// One worker per hardware thread (at least one).
inline std::size_t default_num_workers() noexcept {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : n;
}

struct Config {
    std::size_t num_workers = default_num_workers();  // 0 → std::invalid_argument
    std::size_t local_queue_capacity = 256;           // initial slots of each worker's deque
    std::size_t steal_attempts = 0;        // victims tried per search; 0: 2 * num_workers
    std::uint32_t spins_before_park = 64;  // empty searches (with pauses) before sleeping
    // Stack of each worker thread. Helping nests: a worker waiting in a join runs other tasks
    // on top of its own frames, and a chain of nested joins is as deep as it is long. Only
    // the pages a worker touches cost memory.
    std::size_t stack_size = std::size_t{64} << 20;
};

class ThreadPool {
  public:
    explicit ThreadPool(std::size_t num_workers);  // 0 → std::invalid_argument
    explicit ThreadPool(Config config);
    ~ThreadPool();  // runs every task already spawned, then stops and joins the workers

    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    void spawn(Task task);  // from any thread
    void wait_idle();       // from outside the pool; std::logic_error on a worker

    std::size_t num_workers() const noexcept { return workers_.size(); }
    PoolStats stats() const;

    // ---- for fork_join.hpp ----
    // True when the calling thread is one of this pool's workers.
    bool on_worker_thread() const noexcept;
    // Queues a job this pool does not own (it stays alive until it has run): on the calling
    // worker's own deque, or in the injector from outside.
    void push(Job* job);
    // On a worker of this pool: runs one job — from its own deque, else the injector, else
    // stolen from another worker — and returns true; false when none was found. From any
    // other thread: std::logic_error.
    bool try_run_one();

  private:
    struct Worker;
    void start_workers();
    void stop_and_join();
    void worker_loop(std::size_t index);
    Job* find_work(Worker& w);
    Job* steal_from_peers(Worker& w);
    void run_job(Worker& w, Job* job);
    bool work_visible() const;
    void wake_one();
    void park(Worker& w);
    void announce_idle(Worker& w);
    bool idle_now() const;
    void record_error(std::exception_ptr error);
    static void run_spawned(Job* job) noexcept;

    static thread_local Worker* tl_worker_;  // the worker the calling thread is, if any

    Config config_;
    std::vector<std::unique_ptr<Worker>> workers_;
    Injector<Job*> injector_;
    alignas(64) std::atomic<std::uint64_t> outside_spawned_{0};  // spawns by non-workers
    alignas(64) std::atomic<int> sleepers_{0};                   // workers in park()
    std::atomic<std::uint32_t> next_wake_{0};                    // where wake_one looks first
    alignas(64) std::atomic<int> idle_waiters_{0};               // threads in wait_idle
    std::atomic<std::uint32_t> idle_epoch_{0};  // bumped when a worker runs out of work
    std::atomic<bool> stopping_{false};
    std::mutex error_mutex_;
    std::exception_ptr first_error_;  // guarded by error_mutex_
    std::vector<pthread_t> threads_;  // started with config_.stack_size (std::thread cannot)
};

}  // namespace ws::lesson07
