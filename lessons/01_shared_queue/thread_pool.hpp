// Lesson 01: a thread pool on one shared queue, one mutex and two condition variables.
// Simple and correct; every spawn and every take goes through the same lock, which is the
// problem the next lessons solve.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <ws/stats.hpp>
#include <ws/task.hpp>

namespace ws::lesson01 {

// ANCHOR: class
class ThreadPool {
  public:
    // Starts `num_workers` threads; 0 → std::invalid_argument.
    explicit ThreadPool(std::size_t num_workers);
    // Runs every task already spawned, then stops and joins the workers.
    ~ThreadPool();

    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    // Queues a task; callable from any thread, including from inside a running task.
    void spawn(Task task);

    // Returns once every task spawned so far (and every task those spawned) has finished, then
    // rethrows the first exception a task threw since the last wait_idle. From one of this
    // pool's workers it would wait for itself, so it throws std::logic_error instead.
    void wait_idle();

    std::size_t num_workers() const noexcept { return workers_.size(); }
    PoolStats stats() const;

  private:
    void worker_loop(std::size_t index);
    void run_task(Task& task, std::size_t index);
    bool on_worker_thread() const noexcept;

    mutable std::mutex mutex_;
    std::condition_variable work_available_;  // a task was queued, or stopping_ was set
    std::condition_variable idle_;            // pending_ reached zero
    std::deque<Task> queue_;
    [[maybe_unused]] std::size_t pending_ = 0;  // queued + running tasks (exercise 2)
    bool stopping_ = false;
    std::exception_ptr first_error_;
    std::vector<std::uint64_t> executed_;  // per worker, guarded by mutex_
    std::vector<std::thread> workers_;
};
// ANCHOR_END: class

}  // namespace ws::lesson01
