#include "thread_pool.hpp"

#include <stdexcept>
#include <utility>

#include <ws/not_implemented.hpp>

namespace ws::lesson02 {

namespace {

// Who the current thread is: which pool it works for (if any) and its index there. Set once by
// each worker; lets spawn find the worker's own queue and wait_idle refuse to deadlock.
struct WorkerIdentity {
    const ThreadPool* pool = nullptr;
    std::size_t index = 0;
};
thread_local WorkerIdentity tl_worker;

}  // namespace

ThreadPool::ThreadPool(std::size_t num_workers) {
    if (num_workers == 0) throw std::invalid_argument("ThreadPool: num_workers must be at least 1");
    // Every queue exists before any thread starts: a worker may steal from any of them.
    workers_.reserve(num_workers);
    for (std::size_t i = 0; i < num_workers; ++i)
        workers_.push_back(std::make_unique<Worker>());
    threads_.reserve(num_workers);
    for (std::size_t i = 0; i < num_workers; ++i)
        threads_.emplace_back([this, i] { worker_loop(i); });
}

void ThreadPool::spawn(Task task) {
    if (!task) throw std::invalid_argument("ThreadPool::spawn: the task is empty");
    // Counted before it is queued, so the count cannot reach zero while the task waits.
    // Relaxed is enough: the task's own decrement comes after a worker took it out of a queue,
    // and that queue's mutex orders this increment before it; and when a task spawns, its own
    // decrement comes later in this same thread.
    pending_.fetch_add(1, std::memory_order_relaxed);
    // TODO(exercise 2): on a worker of this pool (tl_worker says who the caller is), push the
    // task onto that worker's own queue instead. As given, every task goes to the shared queue.
    std::lock_guard lock(mutex_);
    shared_.push_back(std::move(task));
}

void ThreadPool::worker_loop(std::size_t index) {
    tl_worker = {this, index};
    XorShift rng(index + 1);  // this worker's own generator: no shared RNG state to fight over
    unsigned idle_rounds = 0;
    for (;;) {
        if (std::optional<Task> task = find_task(index, rng)) {
            run_task(*task, index);
            idle_rounds = 0;
            continue;
        }
        // Draining rule: leave only when stopping and nothing is queued or running anywhere,
        // since a running task may still spawn work. The acquire load of stopping_ pairs with
        // the destructor's release store, so every spawn made before the destructor shows up
        // in pending_ here; the acquire load of pending_ pairs with run_task's release
        // decrement.
        if (stopping_.load(std::memory_order_acquire) &&
            pending_.load(std::memory_order_acquire) == 0) {
            return;
        }
        backoff(idle_rounds++);
    }
}

std::optional<Task> ThreadPool::find_task(std::size_t index, XorShift& rng) {
    // TODO(exercise 2): first pop the worker's own queue (its newest task). As given, the worker
    // only looks at the shared queue.
    if (auto task = take_shared()) return task;  // then work from outside
    return steal(index, rng);                    // then other workers' work
}

std::optional<Task> ThreadPool::take_shared() {
    std::lock_guard lock(mutex_);
    if (shared_.empty()) return std::nullopt;
    Task task = std::move(shared_.front());  // oldest first: outside tasks keep their order
    shared_.pop_front();
    return task;
}

std::optional<Task> ThreadPool::steal(std::size_t thief, XorShift& rng) {
    // TODO(exercise 3): try the other workers' queues, starting at a random one (rng), and take
    // the oldest task of the first that has one; count every try in steal_attempts and every
    // success in steals and stolen_tasks of the thief's Worker. As given, nothing is stolen.
    (void)thief;
    (void)rng;
    return std::nullopt;
}

void ThreadPool::backoff(unsigned idle_rounds) {
    // TODO(exercise 4): the first rounds, return at once (look again); the next ones, yield;
    // after that, sleep a short while (about a millisecond). As given, an idle worker only
    // yields: it finds new work at once but burns a whole core doing nothing.
    (void)idle_rounds;
    std::this_thread::yield();
}

void ThreadPool::run_task(Task& task, std::size_t index) {
    std::exception_ptr error;
    try {
        task();
    } catch (...) {
        error = std::current_exception();  // never let it escape: it would kill the worker
    }
    task.reset();  // destroy the captures before the task counts as finished
    if (error) {
        std::lock_guard lock(mutex_);
        if (!first_error_) first_error_ = error;
    }
    // Counted before the decrement below, which publishes it to whoever sees the pool idle.
    workers_[index]->executed.fetch_add(1, std::memory_order_relaxed);
    // Release: everything this task did (its effects, its counters, the spawns it made) happens
    // before a thread that sees pending_ reach zero with an acquire load — wait_idle and the
    // worker loop's exit check.
    if (pending_.fetch_sub(1, std::memory_order_release) == 1) {
        // Under the mutex, so a wait_idle that has just checked pending_ under it and is about
        // to sleep cannot miss this notification.
        std::lock_guard lock(mutex_);
        idle_.notify_all();
    }
}

void ThreadPool::wait_idle() {
    if (on_worker_thread()) {
        throw std::logic_error(
            "ThreadPool::wait_idle called from inside a task of the same pool: it would wait "
            "for itself forever");
    }
    std::unique_lock lock(mutex_);
    // Acquire pairs with run_task's release decrement: every finished task's effects are
    // visible once this returns.
    idle_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    if (first_error_) std::rethrow_exception(std::exchange(first_error_, nullptr));
}

bool ThreadPool::on_worker_thread() const noexcept {
    return tl_worker.pool == this;
}

ThreadPool::~ThreadPool() {
    // Release pairs with the workers' acquire load: a worker that sees stopping_ also sees
    // every spawn this thread made before, in pending_, and so does not leave before it ran.
    stopping_.store(true, std::memory_order_release);
    for (auto& thread : threads_)
        thread.join();  // the workers drain everything, then leave (see worker_loop)
}

PoolStats ThreadPool::stats() const {
    PoolStats s;
    for (const auto& w : workers_) {
        // Relaxed: a snapshot. After wait_idle it is exact, because every counter was bumped
        // before a release decrement of pending_ that wait_idle acquired.
        s.executed_per_worker.push_back(w->executed.load(std::memory_order_relaxed));
        s.steals += w->steals.load(std::memory_order_relaxed);
        s.steal_attempts += w->steal_attempts.load(std::memory_order_relaxed);
        s.stolen_tasks += w->stolen_tasks.load(std::memory_order_relaxed);
    }
    return s;
}

}  // namespace ws::lesson02
