#include "thread_pool.hpp"

#include <stdexcept>
#include <utility>

#include <ws/not_implemented.hpp>

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

void ThreadPool::spawn(Task task) {
    if (!task) throw std::invalid_argument("ThreadPool::spawn: the task is empty");
    // TODO(exercise 1): under the lock, push the task at the back of queue_ and count it in
    // pending_ (exercise 2 needs the count); then wake one sleeping worker.
    throw NotImplemented("lesson 01, exercise 1: ThreadPool::spawn");
}

void ThreadPool::worker_loop(std::size_t index) {
    tl_current_pool = this;
    // TODO(exercise 1): loop: sleep on work_available_ until a task is queued or stopping_ is
    // set; take the oldest task and run it with run_task(task, index) outside the lock.
    // Leave only when stopping_ is set and the queue is empty. (As given, the worker leaves.)
    (void)index;
}

void ThreadPool::run_task(Task& task, std::size_t index) {
    // TODO(exercise 4): catch what the task throws and keep the first exception in
    // first_error_. (As given, an exception escapes the worker thread and ends the process.)
    task();
    task.reset();  // destroy the captures before the task counts as finished
    std::lock_guard lock(mutex_);
    ++executed_[index];
    // TODO(exercise 2): the task is finished: decrement pending_ and, when it reaches zero,
    // wake whoever sleeps in wait_idle.
}

void ThreadPool::wait_idle() {
    // TODO(exercise 2): on a worker of this pool (on_worker_thread()) throw std::logic_error;
    // otherwise sleep on idle_ until pending_ is zero; then rethrow first_error_ if a task
    // threw (exercise 4), clearing it.
    throw NotImplemented("lesson 01, exercise 2: ThreadPool::wait_idle");
}

bool ThreadPool::on_worker_thread() const noexcept {
    return tl_current_pool == this;
}

ThreadPool::~ThreadPool() {
    // TODO(exercise 3): an orderly shutdown runs every task already queued before the workers
    // leave. As given, the queue is thrown away: queued tasks are lost.
    {
        std::lock_guard lock(mutex_);
        queue_.clear();
        stopping_ = true;
    }
    work_available_.notify_all();
    for (auto& worker : workers_)
        worker.join();
}

PoolStats ThreadPool::stats() const {
    std::lock_guard lock(mutex_);
    PoolStats s;
    s.executed_per_worker = executed_;
    return s;
}

}  // namespace ws::lesson01
