#include "thread_pool.hpp"

#include <stdexcept>
#include <utility>

#include <ws/trace.hpp>

namespace ws::lesson01 {

namespace {
// Which pool, if any, the current thread works for: lets wait_idle refuse to deadlock.
thread_local const ThreadPool* tl_current_pool = nullptr;
}  // namespace

ThreadPool::ThreadPool(std::size_t num_workers) : executed_(num_workers, 0) {
    if (num_workers == 0) throw std::invalid_argument("ThreadPool: num_workers must be at least 1");
    workers_.reserve(num_workers);
    for (std::size_t i = 0; i < num_workers; ++i) {
        workers_.emplace_back([this, i] { worker_loop(i); });
    }
}

// ANCHOR: spawn
void ThreadPool::spawn(Task task) {
    if (!task) throw std::invalid_argument("ThreadPool::spawn: the task is empty");
    {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(task));
        ++pending_;  // counted before any worker can take it, so wait_idle cannot miss it
    }
    // Notify after unlocking: the woken worker does not immediately block on our mutex.
    work_available_.notify_one();
}
// ANCHOR_END: spawn

// ANCHOR: worker_loop
void ThreadPool::worker_loop(std::size_t index) {
    tl_current_pool = this;
    WS_TRACE_WORKER(index);  // ./workshop trace: this worker's lane of the timeline
    std::unique_lock lock(mutex_);
    for (;;) {
        // Sleep until there is work or we are told to stop; the predicate also guards
        // against spurious wake-ups. Never spin: an idle pool must not burn a core.
        WS_TRACE_EVENT(park);
        work_available_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        WS_TRACE_EVENT(wake);
        // Draining rule: stop only once the queue is empty, so no queued task is lost.
        if (queue_.empty()) return;
        Task task = std::move(queue_.front());
        queue_.pop_front();
        lock.unlock();  // run the task without the lock: it may spawn, and others must proceed
        run_task(task, index);
        lock.lock();
    }
}
// ANCHOR_END: worker_loop

// ANCHOR: run_task
void ThreadPool::run_task(Task& task, std::size_t index) {
    std::exception_ptr error;
    WS_TRACE_EVENT(task_begin);
    try {
        task();
    } catch (...) {
        error = std::current_exception();  // never let it escape: it would kill the worker
    }
    task.reset();  // destroy the captures before the task counts as finished
    WS_TRACE_EVENT(task_end);
    std::lock_guard lock(mutex_);
    if (error && !first_error_) first_error_ = error;
    ++executed_[index];
    if (--pending_ == 0) idle_.notify_all();
}
// ANCHOR_END: run_task

// ANCHOR: wait_idle
void ThreadPool::wait_idle() {
    if (on_worker_thread()) {
        throw std::logic_error(
            "ThreadPool::wait_idle called from inside a task of the same pool: it would wait "
            "for itself forever");
    }
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return pending_ == 0; });
    if (first_error_) std::rethrow_exception(std::exchange(first_error_, nullptr));
}
// ANCHOR_END: wait_idle

bool ThreadPool::on_worker_thread() const noexcept {
    return tl_current_pool == this;
}

// ANCHOR: destructor
ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    work_available_.notify_all();  // every sleeper must see stopping_ and drain or leave
    for (auto& worker : workers_)
        worker.join();
}
// ANCHOR_END: destructor

PoolStats ThreadPool::stats() const {
    std::lock_guard lock(mutex_);
    PoolStats s;
    s.executed_per_worker = executed_;
    return s;
}

}  // namespace ws::lesson01
