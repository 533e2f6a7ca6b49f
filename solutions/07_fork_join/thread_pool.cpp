#include "thread_pool.hpp"

#include <stdexcept>
#include <system_error>
#include <utility>

namespace ws::lesson07 {

thread_local ThreadPool::Worker* ThreadPool::tl_worker_ = nullptr;

namespace {

Config with_workers(std::size_t num_workers) {
    Config c;
    c.num_workers = num_workers;
    return c;
}

// Counters that only their owner writes: a plain load and store, no locked instruction.
// relaxed: statistics; stats() reads a snapshot.
void bump(std::atomic<std::uint64_t>& counter) {
    counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// A task given to spawn(): the pool owns it and frees it once it has run.
struct SpawnedTask : Job {
    SpawnedTask(void (*fn)(Job*) noexcept, Task t, ThreadPool* p)
        : Job{fn}, task(std::move(t)), pool(p) {}
    Task task;
    ThreadPool* pool;
};

}  // namespace

ThreadPool::ThreadPool(std::size_t num_workers) : ThreadPool(with_workers(num_workers)) {}

ThreadPool::ThreadPool(Config config) : config_(config), parker_(config.num_workers) {
    if (config_.num_workers == 0) {
        throw std::invalid_argument("ThreadPool: num_workers must be at least 1");
    }
    // Every deque exists before any thread starts: a worker may steal from any of them.
    workers_.reserve(config_.num_workers);
    for (std::size_t i = 0; i < config_.num_workers; ++i)
        workers_.push_back(std::make_unique<Worker>(this, i, config_.local_queue_capacity));
    start_workers();
}

// std::thread cannot choose its stack size, so the workers are POSIX threads.
void ThreadPool::start_workers() {
    struct Start {
        ThreadPool* pool;
        std::size_t index;
    };
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, config_.stack_size);
    threads_.reserve(config_.num_workers);
    for (std::size_t i = 0; i < config_.num_workers; ++i) {
        auto* start = new Start{this, i};
        pthread_t thread;
        const int rc = pthread_create(
            &thread, &attr,
            [](void* arg) -> void* {
                const Start s = *static_cast<Start*>(arg);
                delete static_cast<Start*>(arg);
                s.pool->worker_loop(s.index);
                return nullptr;
            },
            start);
        if (rc != 0) {
            delete start;
            pthread_attr_destroy(&attr);
            stop_and_join();  // the workers started so far
            throw std::system_error(rc, std::generic_category(), "ThreadPool: pthread_create");
        }
        threads_.push_back(thread);
    }
    pthread_attr_destroy(&attr);
}

bool ThreadPool::on_worker_thread() const noexcept {
    return tl_worker_ != nullptr && tl_worker_->pool == this;
}

// ANCHOR: spawn
void ThreadPool::spawn(Task task) {
    if (!task) throw std::invalid_argument("ThreadPool::spawn: the task is empty");
    auto* job = new SpawnedTask(&run_spawned, std::move(task), this);
    if (on_worker_thread()) {
        // Counted before it is queued, so nobody can complete it uncounted. release: the push
        // below publishes it (seq_cst store of bottom) to whoever runs the task, and that
        // worker's release of its completed count passes it on to idle_now().
        std::atomic<std::uint64_t>& spawned = tl_worker_->spawned;
        spawned.store(spawned.load(std::memory_order_relaxed) + 1, std::memory_order_release);
        tl_worker_->deque.push(job);  // seq_cst store of bottom: in S before notify_one's load
    } else {
        // seq_cst RMW: outside threads share this counter.
        outside_spawned_.fetch_add(1, std::memory_order_seq_cst);
        injector_.push(job);  // seq_cst CAS on the tail: in S before notify_one's load
    }
    parker_.notify_one();
}
// ANCHOR_END: spawn

void ThreadPool::run_spawned(Job* job) noexcept {
    auto* spawned = static_cast<SpawnedTask*>(job);
    try {
        spawned->task();
    } catch (...) {
        spawned->pool->record_error(std::current_exception());
    }
    delete spawned;  // the captures die before the task counts as finished
    // release: whoever reads this count (idle_now) also sees the spawn counts of every task
    // this one spawned: they were stored before, by this thread.
    std::atomic<std::uint64_t>& completed = tl_worker_->completed;
    completed.store(completed.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

void ThreadPool::push(Job* job) {
    if (on_worker_thread()) {
        tl_worker_->deque.push(job);
    } else {
        injector_.push(job);
    }
    parker_.notify_one();
}

// ANCHOR: try_run_one
bool ThreadPool::try_run_one() {
    if (!on_worker_thread())
        throw std::logic_error("ThreadPool::try_run_one: only a worker of this pool can help");
    Job* job = find_job(*tl_worker_);
    if (job == nullptr) return false;
    run_job(*tl_worker_, job);
    return true;
}
// ANCHOR_END: try_run_one

void ThreadPool::run_job(Worker& me, Job* job) {
    bump(me.executed);
    job->run(job);  // may free the job or release a joiner: not touched afterwards
}

// ANCHOR: worker_loop
void ThreadPool::worker_loop(std::size_t index) {
    Worker& me = *workers_[index];
    tl_worker_ = &me;
    bool searching = false;
    for (;;) {
        Job* job = find_job(me);
        if (job == nullptr) {
            if (!searching) {
                // Out of work: tell wait_idle, and count as a searcher. Spawns that see a
                // searcher rely on it to find their task (see Parker::park()).
                announce_idle(me);
                parker_.begin_search();
                searching = true;
            }
            // Look again for a while before thinking of sleep (also after a wake-up): work
            // often comes back within microseconds, and a sleep and wake-up cost tens of them.
            for (std::uint32_t spin = 0; spin < config_.spins_before_park && !job; ++spin) {
                for (int i = 0; i < 16; ++i)
                    cpu_relax();
                job = find_job(me);
            }
        }
        if (job != nullptr) {
            // A searcher that found work stops searching; if it was the last searcher, the
            // parker wakes another worker, since there may be more where this came from.
            if (searching) parker_.end_search();
            searching = false;
            run_job(me, job);
            continue;
        }
        // Draining rule: a worker leaves once the pool is stopping and a whole search found
        // nothing. seq_cst: pairs with the destructor's store.
        if (stopping_.load(std::memory_order_seq_cst)) break;
        parker_.park([this] { return has_work_anywhere(); });  // announce, recheck, sleep
    }
    tl_worker_ = nullptr;
}
// ANCHOR_END: worker_loop

// ANCHOR: find_job
Job* ThreadPool::find_job(Worker& me) {
    // Fairness: now and then the injector comes first, so injected tasks cannot starve.
    // (A countdown, not a modulo: a division on every join would cost more than the look.)
    if (me.until_fair-- == 0) {
        me.until_fair = kFairnessInterval - 1;
        if (Job* job = take_injector(me)) return job;
    }
    if (auto job = me.deque.pop()) return *job;    // own deque, newest first
    if (Job* job = take_injector(me)) return job;  // then work from outside
    return steal(me);                              // then other workers' work
}
// ANCHOR_END: find_job

// A batch of the oldest injected jobs into our own deque, and one of them to run now.
Job* ThreadPool::take_injector(Worker& me) {
    for (;;) {
        auto got = injector_.steal_batch_and_pop(me.deque);
        if (got.is_success()) {
            bump(me.injector_takes);
            return got.value();
        }
        if (got.is_empty()) return nullptr;
        // retry: another worker claimed the same positions first; there may be more.
    }
}

Job* ThreadPool::steal(Worker& me) {
    const std::size_t n = workers_.size();
    if (n == 1) return nullptr;
    const std::size_t thief = me.index;
    for (std::size_t round = 0; round < config_.steal_attempts; ++round) {
        // A random first victim, so thieves spread out; then the others in turn.
        const std::size_t first = static_cast<std::size_t>(me.rng.next() % (n - 1));
        bool lost_a_race = false;
        for (std::size_t k = 0; k < n - 1; ++k) {
            Worker& victim = *workers_[(thief + 1 + (first + k) % (n - 1)) % n];  // never me
            if (victim.deque.size() == 0) continue;  // relaxed hint: skip an empty one cheaply
            bump(me.steal_attempts);
            auto got = victim.deque.steal();
            if (got.is_success()) {
                bump(me.steals);
                bump(me.stolen_tasks);
                return got.value();
            }
            lost_a_race = lost_a_race || got.is_retry();
        }
        if (!lost_a_race) break;  // every deque was empty: another round would find nothing
    }
    return nullptr;
}

// The recheck of a worker about to sleep (see Parker::park()): every place a job can be
// published, with seq_cst loads, and the stop flag.
bool ThreadPool::has_work_anywhere() const noexcept {
    if (stopping_.load(std::memory_order_seq_cst)) return true;
    if (!injector_.is_empty()) return true;
    for (const auto& w : workers_) {
        if (!w->deque.is_empty()) return true;
    }
    return false;
}

// ANCHOR: idle
// wait_idle without a shared count of pending tasks (which every spawn and every completion
// would bounce between the cores): each worker counts what it spawned and completed; outside
// threads share one spawn counter. idle_now() reads every `completed` first, then every
// `spawned`. A completion it sees was released after the spawns of that task's children, so it
// sees those spawns too: the completions it counts are a subset of the spawns it counts, and
// equal numbers mean every spawned task — the whole tree — had finished.
bool ThreadPool::idle_now() const {
    std::uint64_t done = 0;
    for (const auto& w : workers_)
        done += w->completed.load(std::memory_order_seq_cst);  // acquire, and in S
    std::uint64_t spawned = outside_spawned_.load(std::memory_order_seq_cst);
    for (const auto& w : workers_)
        spawned += w->spawned.load(std::memory_order_seq_cst);
    return done == spawned;
}

// Called by a worker that ran out of work. A Dekker pair with wait_idle, in S: the worker
// stores its count again (seq_cst, same value) then loads idle_waiters_; the waiter increments
// idle_waiters_ then loads the counts. Either the waiter sees this worker's final count, or
// the worker sees the waiter and bumps the epoch it sleeps on.
void ThreadPool::announce_idle(Worker& me) {
    me.completed.store(me.completed.load(std::memory_order_relaxed), std::memory_order_seq_cst);
    if (idle_waiters_.load(std::memory_order_seq_cst) > 0) {
        idle_epoch_.fetch_add(1, std::memory_order_seq_cst);
        idle_epoch_.notify_all();
    }
}

void ThreadPool::wait_idle() {
    if (on_worker_thread()) {
        throw std::logic_error(
            "ThreadPool::wait_idle called from inside a task of the same pool: it would wait "
            "for itself forever (wait for tasks from a task with join or a TaskGroup)");
    }
    idle_waiters_.fetch_add(1, std::memory_order_seq_cst);
    for (;;) {
        // The epoch first: a bump after this load makes the wait below return at once.
        const std::uint32_t epoch = idle_epoch_.load(std::memory_order_seq_cst);
        if (idle_now()) break;
        idle_epoch_.wait(epoch, std::memory_order_seq_cst);
    }
    idle_waiters_.fetch_sub(1, std::memory_order_seq_cst);
    std::lock_guard lock(error_mutex_);
    if (first_error_) std::rethrow_exception(std::exchange(first_error_, nullptr));
}
// ANCHOR_END: idle

void ThreadPool::record_error(std::exception_ptr error) {
    std::lock_guard lock(error_mutex_);
    if (!first_error_) first_error_ = std::move(error);
}

ThreadPool::~ThreadPool() {
    stop_and_join();
}

void ThreadPool::stop_and_join() {
    // seq_cst: published like a task (the recheck in has_work_anywhere() reads it).
    stopping_.store(true, std::memory_order_seq_cst);
    parker_.notify_all();  // wakes every sleeper; nobody sleeps from here on
    for (pthread_t t : threads_)
        pthread_join(t, nullptr);  // the workers drain everything, then leave
    threads_.clear();
}

PoolStats ThreadPool::stats() const {
    PoolStats s;
    for (const auto& w : workers_) {
        s.executed_per_worker.push_back(w->executed.load(std::memory_order_relaxed));
        s.steals += w->steals.load(std::memory_order_relaxed);
        s.steal_attempts += w->steal_attempts.load(std::memory_order_relaxed);
        s.stolen_tasks += w->stolen_tasks.load(std::memory_order_relaxed);
        s.injector_takes += w->injector_takes.load(std::memory_order_relaxed);
    }
    s.parks = parker_.parks();
    s.wakeups = parker_.wakeups();
    return s;
}

}  // namespace ws::lesson07
