// Given code, carried from lesson 07's solution, unchanged.
// (./workshop sync writes this copy; edit the source lesson's file instead.)
// Lesson 07: lesson 06's pool (a Chase-Lev deque per worker, the lock-free injector for spawns
// from outside, idle workers parked) with what fork-join needs from it:
//   - the deques hold Job*: a function pointer and whatever a job embeds behind it, so a join
//     can put a job that lives in its own stack frame into the deque (no allocation per join);
//   - try_run_one(): one step of the worker loop, with which a worker that waits for a join
//     keeps working instead of blocking ("helping");
//   - workers on big stacks, because helping nests.
// And, so that the last lesson's pool is also the fastest: idle detection by per-worker
// counters instead of one shared pending count that every task bounced between the cores, and
// a short spin before parking.
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

#include <ws/cpu_relax.hpp>
#include <ws/stats.hpp>
#include <ws/task.hpp>
#include <ws/xorshift.hpp>

#include "chase_lev_deque.hpp"
#include "injector.hpp"
#include "parker.hpp"
#include "task_nodes.hpp"

namespace ws::lesson09 {

// ANCHOR: job
// What the deques and the injector hold. `run` executes the job and must not throw; it may
// free the job (a spawned task) or release whoever waits for it (a join's stack job) — after
// that the scheduler does not touch the job again.
struct Job {
    void (*run)(Job* self) noexcept;
};
// ANCHOR_END: job

// ANCHOR: config
struct Config {
    // Worker threads; 0 → std::invalid_argument.
    std::size_t num_workers = default_workers();
    // Initial capacity of each worker's deque (it grows when full).
    std::size_t local_queue_capacity = 256;
    // The most jobs one steal takes from a victim (as in lesson 06, the largest batch): the
    // thief runs the first and pushes the others onto its own deque, never more than half of
    // what it saw — when the first is a spawned task; a join's half is taken alone. 0 →
    // std::invalid_argument. Default 16.
    std::size_t max_steal_batch = 16;
    // Searches (with a short pause between them) a worker out of work makes before it parks:
    // work often comes back within microseconds, and a wake-up through the kernel costs tens.
    std::uint32_t spins_before_park = 64;
    // Stack of each worker thread. Helping nests: a worker waiting in a join runs other tasks
    // on top of its own frames, and a chain of nested joins is as deep as it is long. Only the
    // pages a worker touches cost memory.
    std::size_t stack_size = std::size_t{64} << 20;

    static std::size_t default_workers() noexcept {
        const unsigned n = std::thread::hardware_concurrency();
        return n == 0 ? 1 : n;
    }
};
// ANCHOR_END: config

// ANCHOR: class
class ThreadPool {
  public:
    explicit ThreadPool(std::size_t num_workers);  // 0 → std::invalid_argument
    explicit ThreadPool(Config config);
    ~ThreadPool();  // runs every task already spawned, then stops and joins the workers

    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    // From one of this pool's workers: onto its own deque; from anywhere else: into the
    // injector. Then wakes a sleeping worker if nobody is searching.
    void spawn(Task task);

    // Returns once every task spawned so far (and every task those spawned) has finished, then
    // rethrows the first exception a task threw since the last wait_idle. From one of this
    // pool's workers it would wait for itself, so it throws std::logic_error instead.
    void wait_idle();

    std::size_t num_workers() const noexcept { return workers_.size(); }
    PoolStats stats() const;

    // A worker looks at the injector before its own deque every kFairnessInterval-th task.
    static constexpr std::uint64_t kFairnessInterval = 61;

    // ---- for fork_join.hpp ----
    // True when the calling thread is one of this pool's workers.
    bool on_worker_thread() const noexcept;
    // Queues a job the pool does not own (it must stay alive until it has run): onto the
    // calling worker's own deque, or into the injector from outside. Then wakes a sleeper if
    // nobody is searching.
    void push(Job* job);
    // On a worker of this pool: runs one job — from its own deque, else the injector, else
    // stolen from another worker — and returns true; false when it found none. From any other
    // thread: std::logic_error.
    bool try_run_one();
    // On a worker of this pool: if the newest job in its own deque is `job`, takes it out and
    // returns true (the caller runs it itself); otherwise returns false and leaves the deque
    // as it was. join's fast path: when nobody stole b, b is still on top.
    bool take_back(Job* job);
    // A thread outside the pool sleeps until done() is true. Whoever makes it true calls
    // notify_outside() afterwards — which touches only the pool, so the waiter may destroy
    // whatever done() looked at as soon as it sees it true.
    template <typename Done>
    void block_until(Done done);
    void notify_outside();

  private:
    // A spawned task, as the deques see it. Nodes are recycled, never freed before the pool
    // (see task_nodes.hpp): a malloc on the spawning thread and a free on another thread cost
    // more than a tiny task itself.
    struct TaskNode : Job {
        Task task;
        ThreadPool* pool = nullptr;
        // For TaskNodes (task_nodes.hpp):
        TaskNode* next = nullptr;   // in a free list
        TaskNode* ahead = nullptr;  // 4 nodes further down the same list, to prefetch
    };
    using Nodes = TaskNodes<TaskNode>;

    // What each worker owns; written only by its own thread except where said.
    struct alignas(64) Worker {
        Worker(const ThreadPool* owner, std::size_t i, std::size_t capacity)
            : pool(owner), index(i), deque(capacity), rng(i + 1) {}
        const ThreadPool* pool;
        std::size_t index;
        ChaseLevDeque<Job*> deque;
        XorShift rng;
        std::uint64_t until_fair = 0;  // jobs to look for until the injector comes first
        // Idle detection (see idle_now): tasks this worker spawned, and completed.
        alignas(64) std::atomic<std::uint64_t> spawned{0};
        std::atomic<std::uint64_t> completed{0};
        Nodes::WorkerCache nodes;  // recycled task nodes, only this worker touches them
        // Statistics; stats() reads a snapshot.
        std::atomic<std::uint64_t> executed{0}, steals{0}, steal_attempts{0}, stolen_tasks{0},
            injector_takes{0};
    };

    void start_workers();
    void stop_and_join();
    void worker_loop(std::size_t index);
    Job* find_job(Worker& me);
    Job* take_injector(Worker& me);
    Job* steal(Worker& me);
    void steal_more(Worker& me, Worker& victim);
    bool has_work_anywhere() const noexcept;
    void run_job(Worker& me, Job* job);
    void announce_idle(Worker& me);
    void wake_idle_waiters();
    bool idle_now() const;
    void record_error(std::exception_ptr error);
    static void run_spawned(Job* job) noexcept;
    void unspawn(TaskNode* job) noexcept;

    static thread_local Worker* tl_worker_;  // the worker the calling thread is, if any

    Config config_;
    std::vector<std::unique_ptr<Worker>> workers_;  // fixed before the threads start
    Parker parker_;
    Injector<Job*> injector_;                                    // jobs from outside, oldest first
    alignas(64) std::atomic<std::uint64_t> outside_spawned_{0};  // tasks spawned from outside
    alignas(64) std::atomic<int> idle_waiters_{0};               // threads in wait_idle
    std::atomic<std::uint32_t> idle_epoch_{0};  // bumped when a worker runs out of work
    alignas(64) std::atomic<std::uint32_t> outside_epoch_{0};  // bumped by notify_outside
    std::atomic<bool> stopping_{false};
    std::mutex error_mutex_;
    std::exception_ptr first_error_;  // guarded by error_mutex_
    std::vector<pthread_t> threads_;  // started with config_.stack_size (std::thread cannot)
    // Task nodes, recycled (task_nodes.hpp): each worker keeps its own, an outside thread its
    // own per pool, and all of them live in blocks that nodes_ owns.
    Nodes nodes_;
};
// ANCHOR_END: class

// ANCHOR: block_until
template <typename Done>
void ThreadPool::block_until(Done done) {
    for (;;) {
        // The epoch first: a notify_outside after this load makes the wait return at once; one
        // before it is seen here, and (acquire) so is what done() reads.
        const std::uint32_t epoch = outside_epoch_.load(std::memory_order_seq_cst);
        if (done()) return;
        outside_epoch_.wait(epoch, std::memory_order_seq_cst);
    }
}

inline void ThreadPool::notify_outside() {
    outside_epoch_.fetch_add(1, std::memory_order_seq_cst);  // release: what done() reads
    outside_epoch_.notify_all();                             // no system call when nobody waits
}
// ANCHOR_END: block_until

}  // namespace ws::lesson09
