#include "thread_pool.hpp"

#include <stdexcept>
#include <utility>

namespace ws::lesson05 {

namespace {

// Who the current thread is: which pool it works for (if any) and its index there. Set once by
// each worker; lets spawn find the worker's own deque and wait_idle refuse to deadlock.
struct WorkerIdentity {
    const ThreadPool* pool = nullptr;
    std::size_t index = 0;
};
thread_local WorkerIdentity tl_worker;

Config with_workers(std::size_t num_workers) {
    Config c;
    c.num_workers = num_workers;
    return c;
}

}  // namespace

ThreadPool::ThreadPool(std::size_t num_workers) : ThreadPool(with_workers(num_workers)) {}

ThreadPool::ThreadPool(Config config)
    : config_(config), parker_(config.num_workers), naive_parker_(config.num_workers) {
    if (config_.num_workers == 0) {
        throw std::invalid_argument("ThreadPool: num_workers must be at least 1");
    }
    // Every deque exists before any thread starts: a worker may steal from any of them.
    workers_.reserve(config_.num_workers);
    for (std::size_t i = 0; i < config_.num_workers; ++i)
        workers_.push_back(std::make_unique<Worker>(config_.local_queue_capacity));
    threads_.reserve(config_.num_workers);
    for (std::size_t i = 0; i < config_.num_workers; ++i)
        threads_.emplace_back([this, i] { worker_loop(i); });
}

// ANCHOR: spawn
void ThreadPool::spawn(Task task) {
    if (!task) throw std::invalid_argument("ThreadPool::spawn: the task is empty");
    // Counted before it is queued, so the count cannot reach zero while the task waits.
    // relaxed: the publication below (the deque's seq_cst store, or the global mutex) orders it
    // before the decrement by whoever runs the task.
    pending_.fetch_add(1, std::memory_order_relaxed);
    auto* owned = new Task(std::move(task));
    if (tl_worker.pool == this) {
        // Publishes with a seq_cst store of bottom: in S before the load in wake_one().
        workers_[tl_worker.index]->deque.push(owned);
    } else {
        std::lock_guard lock(global_mutex_);
        global_.push_back(owned);
        // seq_cst: the publication the parking protocol reasons about (see park()). A parking
        // worker's recheck reads global_size_ without the lock; this RMW is in S before the
        // load in wake_one(). The mutex alone would not order our unlock before that load.
        global_size_.fetch_add(1, std::memory_order_seq_cst);
    }
    wake_one();
}
// ANCHOR_END: spawn

// ANCHOR: worker_loop
void ThreadPool::worker_loop(std::size_t index) {
    tl_worker = {this, index};
    XorShift rng(index + 1);  // this worker's own generator: no shared RNG state to fight over
    bool searching = false;
    for (;;) {
        if (Task* task = find_task(index, rng)) {
            // A searcher that found work stops searching; if it was the last searcher and more
            // work is in sight, the parker wakes another worker to look for it.
            if (searching && !config_.naive_parking) {
                parker_.end_search([this] { return has_work_anywhere(); });
            }
            searching = false;
            run_task(task, index);
            continue;
        }
        if (!searching) {
            // Out of work: count as a searcher, then look everywhere once more. Spawns that see
            // a searcher rely on it to find their task (see Parker::park()).
            if (!config_.naive_parking) parker_.begin_search();
            searching = true;
            continue;
        }
        // Draining rule: a worker leaves once the pool is stopping and a whole search found
        // nothing. Tasks still running elsewhere spawn onto their own worker's deque, and that
        // worker runs them before it leaves. seq_cst: pairs with the destructor's store.
        if (stopping_.load(std::memory_order_seq_cst)) return;
        park();  // announce, recheck, sleep; back as a searcher
    }
}

Task* ThreadPool::find_task(std::size_t index, XorShift& rng) {
    if (auto task = workers_[index]->deque.pop()) return *task;  // own deque, newest first
    if (Task* task = take_global()) return task;                 // then work from outside
    return steal(index, rng);                                    // then other workers' work
}
// ANCHOR_END: worker_loop

Task* ThreadPool::take_global() {
    // relaxed: only a hint that spares the lock when the queue is empty; the lock decides.
    if (global_size_.load(std::memory_order_relaxed) == 0) return nullptr;
    std::lock_guard lock(global_mutex_);
    if (global_.empty()) return nullptr;
    Task* task = global_.front();  // oldest first: outside tasks keep their order
    global_.pop_front();
    // relaxed: under the lock; only the protocol's publications (the increments) need S.
    global_size_.fetch_sub(1, std::memory_order_relaxed);
    return task;
}

Task* ThreadPool::steal(std::size_t thief, XorShift& rng) {
    const std::size_t n = workers_.size();
    if (n == 1) return nullptr;
    Worker& me = *workers_[thief];
    for (std::size_t round = 0; round < config_.steal_attempts; ++round) {
        // A random first victim, so thieves spread out; then the others in turn.
        const std::size_t first = static_cast<std::size_t>(rng.next() % (n - 1));
        bool lost_a_race = false;
        for (std::size_t k = 0; k < n - 1; ++k) {
            const std::size_t victim = (thief + 1 + (first + k) % (n - 1)) % n;  // never thief
            // relaxed counters: only this thread writes them; stats() reads a snapshot.
            me.steal_attempts.fetch_add(1, std::memory_order_relaxed);
            auto got = workers_[victim]->deque.steal();
            if (got.is_success()) {
                me.steals.fetch_add(1, std::memory_order_relaxed);
                me.stolen_tasks.fetch_add(1, std::memory_order_relaxed);
                return got.value();
            }
            lost_a_race = lost_a_race || got.is_retry();
        }
        if (!lost_a_race) break;  // every deque was empty: another round would find nothing
    }
    return nullptr;
}

// ANCHOR: park
// The recheck of a worker that announced it is about to sleep: every place a task can be
// published, with seq_cst loads (the deques' is_empty() and global_size_), so that the
// parker's argument holds: a spawn either sees this worker's announcement (and wakes someone)
// or this recheck sees the spawn's task. Also the stop flag, published the same way.
bool ThreadPool::has_work_anywhere() const noexcept {
    // seq_cst: pairs with the destructor's seq_cst store (stop is published like a task).
    if (stopping_.load(std::memory_order_seq_cst)) return true;
    // seq_cst: pairs with spawn's seq_cst increment.
    if (global_size_.load(std::memory_order_seq_cst) > 0) return true;
    for (const auto& w : workers_) {
        if (!w->deque.is_empty()) return true;
    }
    return false;
}

void ThreadPool::park() {
    const auto recheck = [this] { return has_work_anywhere(); };
    if (config_.naive_parking) {
        naive_parker_.park(recheck);
    } else {
        parker_.park(recheck);
    }
}

// After a task was published: wake a sleeper if the parker says so.
void ThreadPool::wake_one() {
    if (config_.naive_parking) {
        naive_parker_.notify_one();  // a mutex and a signal on every spawn: exercise 1's cost
    } else {
        parker_.notify_one();  // one load while nobody sleeps or somebody searches
    }
}
// ANCHOR_END: park

void ThreadPool::run_task(Task* task, std::size_t index) {
    std::exception_ptr error;
    try {
        (*task)();
    } catch (...) {
        error = std::current_exception();  // never let it escape: it would kill the worker
    }
    delete task;  // destroy the captures before the task counts as finished
    if (error) {
        std::lock_guard lock(mutex_);
        if (!first_error_) first_error_ = error;
    }
    // Counted before the decrement below, which publishes it to whoever sees the pool idle.
    workers_[index]->executed.fetch_add(1, std::memory_order_relaxed);
    // release: everything this task did happens before a thread that sees pending_ reach zero
    // with an acquire load (wait_idle).
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
    // acquire: pairs with run_task's release decrement.
    idle_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    if (first_error_) std::rethrow_exception(std::exchange(first_error_, nullptr));
}

bool ThreadPool::on_worker_thread() const noexcept {
    return tl_worker.pool == this;
}

// ANCHOR: destructor
ThreadPool::~ThreadPool() {
    // seq_cst: published like a task (the recheck in has_work_anywhere() reads it), so a worker
    // that announced its sleep after the parker's notify_all below read the state still sees
    // it; and a worker that sees it also sees every spawn this thread made before.
    stopping_.store(true, std::memory_order_seq_cst);
    // Shutdown wakes everyone: every sleeper now, and nobody sleeps from here on.
    if (config_.naive_parking) {
        naive_parker_.notify_all();
    } else {
        parker_.notify_all();
    }
    for (auto& thread : threads_)
        thread.join();  // the workers drain everything, then leave (see worker_loop)
}
// ANCHOR_END: destructor

PoolStats ThreadPool::stats() const {
    PoolStats s;
    for (const auto& w : workers_) {
        // relaxed: a snapshot. After wait_idle it is exact, because every counter was bumped
        // before a release decrement of pending_ that wait_idle acquired.
        s.executed_per_worker.push_back(w->executed.load(std::memory_order_relaxed));
        s.steals += w->steals.load(std::memory_order_relaxed);
        s.steal_attempts += w->steal_attempts.load(std::memory_order_relaxed);
        s.stolen_tasks += w->stolen_tasks.load(std::memory_order_relaxed);
    }
    s.parks = config_.naive_parking ? naive_parker_.parks() : parker_.parks();
    s.wakeups = config_.naive_parking ? naive_parker_.wakeups() : parker_.wakeups();
    return s;
}

}  // namespace ws::lesson05
