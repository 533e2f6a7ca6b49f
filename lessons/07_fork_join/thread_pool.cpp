#include "thread_pool.hpp"

#include <stdexcept>
#include <system_error>
#include <utility>

#include <ws/not_implemented.hpp>

namespace ws::lesson07 {

namespace {
constexpr std::uint32_t kAwake = 0;
constexpr std::uint32_t kSleeping = 1;

// Counters that only their owner writes: a plain load and store (no locked instruction).
void bump(std::atomic<std::uint64_t>& counter, std::uint64_t by = 1) {
    counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}
}  // namespace

struct alignas(64) ThreadPool::Worker {
    Worker(const ThreadPool* owner, std::size_t capacity, std::uint64_t seed)
        : pool(owner), deque(capacity), rng(seed) {}

    const ThreadPool* pool;
    ChaseLevDeque<Job*> deque;
    // Idle detection (see idle_now): tasks this worker spawned and completed. Only this
    // worker writes them.
    alignas(64) std::atomic<std::uint64_t> spawned{0};
    std::atomic<std::uint64_t> completed{0};
    std::atomic<std::uint32_t> sleep_state{kAwake};  // the futex word park() sleeps on
    // Statistics, written by this worker only, read by stats() (relaxed: a report).
    std::atomic<std::uint64_t> executed{0}, steals{0}, steal_attempts{0}, stolen_tasks{0},
        injector_takes{0}, parks{0}, wakeups{0};
    std::uint64_t rng;  // xorshift state for picking victims
};

thread_local ThreadPool::Worker* ThreadPool::tl_worker_ = nullptr;

namespace {
// A task given to spawn(): the pool owns it and frees it once it has run.
struct SpawnedTask : Job {
    SpawnedTask(void (*fn)(Job*) noexcept, Task t, ThreadPool* p)
        : Job{fn}, task(std::move(t)), pool(p) {}
    Task task;
    ThreadPool* pool;
};
}  // namespace

ThreadPool::ThreadPool(std::size_t num_workers)
    : ThreadPool([num_workers] {
          Config c;
          c.num_workers = num_workers;
          return c;
      }()) {}

ThreadPool::ThreadPool(Config config) : config_(config) {
    if (config_.num_workers == 0)
        throw std::invalid_argument("ThreadPool: num_workers must be at least 1");
    if (config_.steal_attempts == 0) config_.steal_attempts = 2 * config_.num_workers;
    workers_.reserve(config_.num_workers);
    for (std::size_t i = 0; i < config_.num_workers; ++i)
        workers_.push_back(std::make_unique<Worker>(this, config_.local_queue_capacity,
                                                    0x9E3779B97F4A7C15ULL * (i + 1)));
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

ThreadPool::~ThreadPool() {
    stop_and_join();
}

void ThreadPool::stop_and_join() {
    // seq_cst: a worker about to sleep either sees stopping_ in park()'s re-check, or has
    // announced kSleeping before our exchange below (one total order S) and is woken by it
    stopping_.store(true, std::memory_order_seq_cst);
    for (auto& w : workers_) {
        if (w->sleep_state.exchange(kAwake, std::memory_order_seq_cst) == kSleeping) {
            sleepers_.fetch_sub(1, std::memory_order_seq_cst);
            w->sleep_state.notify_one();
        }
    }
    for (pthread_t t : threads_)
        pthread_join(t, nullptr);
    threads_.clear();
}

bool ThreadPool::on_worker_thread() const noexcept {
    return tl_worker_ != nullptr && tl_worker_->pool == this;
}

void ThreadPool::run_spawned(Job* job) noexcept {
    auto* spawned = static_cast<SpawnedTask*>(job);
    ThreadPool* pool = spawned->pool;
    try {
        spawned->task();
    } catch (...) {
        pool->record_error(std::current_exception());
    }
    delete spawned;  // the captures die before the task counts as finished
    // release: whoever reads this count (idle_now, acquire) also sees the spawn counts of
    // every task this one spawned — they were stored before, in this thread
    std::atomic<std::uint64_t>& completed = tl_worker_->completed;
    completed.store(completed.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

void ThreadPool::spawn(Task task) {
    if (!task) throw std::invalid_argument("ThreadPool::spawn: the task is empty");
    auto* job = new SpawnedTask(&run_spawned, std::move(task), this);
    if (on_worker_thread()) {
        // counted before it is queued, so nobody can complete it before it is counted;
        // release: published with the job by the deque push (seq_cst store of bottom)
        std::atomic<std::uint64_t>& spawned = tl_worker_->spawned;
        spawned.store(spawned.load(std::memory_order_relaxed) + 1, std::memory_order_release);
        tl_worker_->deque.push(job);
    } else {
        // seq_cst RMW: outside threads share this counter
        outside_spawned_.fetch_add(1, std::memory_order_seq_cst);
        injector_.push(job);
    }
    wake_one();
}

void ThreadPool::push(Job* job) {
    if (on_worker_thread()) {
        tl_worker_->deque.push(job);
    } else {
        injector_.push(job);
    }
    wake_one();
}

bool ThreadPool::try_run_one() {
    // TODO(exercise 1): only a worker of this pool can help (on_worker_thread(); otherwise
    // throw std::logic_error). Find one job with find_work(*tl_worker_) — its own deque, then
    // the injector, then a steal — run it with run_job and return true; false if none.
    throw NotImplemented("lesson 07, exercise 1: ThreadPool::try_run_one");
}

void ThreadPool::run_job(Worker& w, Job* job) {
    bump(w.executed);
    job->run(job);  // may free the job or release a joiner: do not touch it afterwards
}

Job* ThreadPool::find_work(Worker& w) {
    if (auto job = w.deque.pop()) return *job;
    if (!injector_.looks_empty()) {
        ws::Steal<Job*> got = injector_.steal_batch_and_pop(w.deque);
        if (got.is_success()) {
            bump(w.injector_takes);
            if (w.deque.size() > 0) wake_one();  // a batch came along: let a sleeper share it
            return got.value();
        }
    }
    return steal_from_peers(w);
}

Job* ThreadPool::steal_from_peers(Worker& w) {
    const std::size_t n = workers_.size();
    if (n < 2) return nullptr;
    for (std::size_t attempt = 0; attempt < config_.steal_attempts; ++attempt) {
        w.rng ^= w.rng << 13;
        w.rng ^= w.rng >> 7;
        w.rng ^= w.rng << 17;
        Worker& victim = *workers_[w.rng % n];
        if (&victim == &w || victim.deque.size() == 0) continue;  // relaxed hint: skip cheaply
        bump(w.steal_attempts);
        ws::Steal<Job*> got = victim.deque.steal();
        if (got.is_success()) {
            bump(w.steals);
            bump(w.stolen_tasks);
            return got.value();
        }
    }
    return nullptr;
}

void ThreadPool::worker_loop(std::size_t index) {
    Worker& w = *workers_[index];
    tl_worker_ = &w;
    for (;;) {
        if (Job* job = find_work(w)) {
            run_job(w, job);
            continue;
        }
        announce_idle(w);
        // Spin a little before sleeping: work often comes back within microseconds, and a
        // wake-up through the kernel costs tens of them.
        Job* job = nullptr;
        for (std::uint32_t spin = 0; spin < config_.spins_before_park && job == nullptr; ++spin) {
            for (int i = 0; i < 16; ++i)
                cpu_relax();
            job = find_work(w);
        }
        if (job != nullptr) {
            run_job(w, job);
            continue;
        }
        // Draining rule: leave only when stopping and nothing is left anywhere.
        if (stopping_.load(std::memory_order_seq_cst) && !work_visible()) break;
        park(w);
    }
    tl_worker_ = nullptr;
}

// Parking without lost wake-ups, as a Dekker pair in the single total order S of seq_cst
// operations:
//   pusher:  push (seq_cst store in the deque or injector)  ->  load sleepers_ (seq_cst)
//   parker:  sleepers_ += 1, state = kSleeping (seq_cst)     ->  look at every queue (seq_cst)
// Either the pusher sees the parker counted (and wakes someone), or the parker's look sees
// the push (and does not sleep).
bool ThreadPool::work_visible() const {
    if (!injector_.looks_empty_seq_cst()) return true;
    for (const auto& w : workers_)
        if (!w->deque.looks_empty_seq_cst()) return true;
    return false;
}

void ThreadPool::wake_one() {
    if (sleepers_.load(std::memory_order_seq_cst) <= 0) return;  // the common case: one load
    const std::size_t n = workers_.size();
    const std::size_t start = next_wake_.fetch_add(1, std::memory_order_relaxed);  // fairness only
    for (std::size_t i = 0; i < n; ++i) {
        Worker& w = *workers_[(start + i) % n];
        std::uint32_t expected = kSleeping;
        // seq_cst load then CAS: claims exactly one sleeper; a parker that has not yet
        // stored kSleeping comes after this load in S and sees our push in its re-check
        if (w.sleep_state.load(std::memory_order_seq_cst) == kSleeping &&
            w.sleep_state.compare_exchange_strong(expected, kAwake, std::memory_order_seq_cst)) {
            sleepers_.fetch_sub(1, std::memory_order_seq_cst);
            w.sleep_state.notify_one();
            return;
        }
    }
}

void ThreadPool::park(Worker& w) {
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    w.sleep_state.store(kSleeping, std::memory_order_seq_cst);
    if (work_visible() || stopping_.load(std::memory_order_seq_cst)) {
        // Not sleeping after all. If a waker claimed us meanwhile it also took us off
        // sleepers_; otherwise we do.
        if (w.sleep_state.exchange(kAwake, std::memory_order_seq_cst) == kSleeping)
            sleepers_.fetch_sub(1, std::memory_order_seq_cst);
        return;
    }
    bump(w.parks);
    // acquire: pairs with the waker's CAS (and the destructor's exchange)
    while (w.sleep_state.load(std::memory_order_acquire) == kSleeping)
        w.sleep_state.wait(kSleeping, std::memory_order_acquire);
    bump(w.wakeups);
}

// wait_idle without a shared counter of pending tasks (which every spawn and every completion
// would bounce between the cores): each worker counts what it spawned and completed, outside
// threads share one spawn counter. idle_now() reads every `completed` first, then every
// `spawned`. A completion it sees was released after the spawns of that task's children, so it
// also sees those spawns: the completions it counts are a subset of the spawns it counts, and
// equal numbers mean every spawned task — the whole tree — had finished.
bool ThreadPool::idle_now() const {
    std::uint64_t done = 0;
    for (const auto& w : workers_)
        done += w->completed.load(std::memory_order_seq_cst);  // acquire, and in S (see below)
    std::uint64_t spawned = outside_spawned_.load(std::memory_order_seq_cst);
    for (const auto& w : workers_)
        spawned += w->spawned.load(std::memory_order_seq_cst);
    return done == spawned;
}

// Called by a worker that found no work. Dekker pair with wait_idle: the worker stores its
// count (seq_cst, same value) then loads idle_waiters_; the waiter increments idle_waiters_
// then loads the counts. Either the waiter sees this worker's final count, or the worker sees
// the waiter and bumps the epoch it sleeps on.
void ThreadPool::announce_idle(Worker& w) {
    w.completed.store(w.completed.load(std::memory_order_relaxed), std::memory_order_seq_cst);
    if (idle_waiters_.load(std::memory_order_seq_cst) > 0) {
        idle_epoch_.fetch_add(1, std::memory_order_seq_cst);
        idle_epoch_.notify_all();
    }
}

void ThreadPool::wait_idle() {
    if (on_worker_thread()) {
        throw std::logic_error(
            "ThreadPool::wait_idle called from inside a task of the same pool: it would wait "
            "for itself forever (use a TaskGroup or join to wait for tasks from a task)");
    }
    idle_waiters_.fetch_add(1, std::memory_order_seq_cst);
    for (;;) {
        // epoch first: a bump after this load makes the wait below return at once
        const std::uint32_t epoch = idle_epoch_.load(std::memory_order_seq_cst);
        if (idle_now()) break;
        idle_epoch_.wait(epoch, std::memory_order_seq_cst);
    }
    idle_waiters_.fetch_sub(1, std::memory_order_seq_cst);
    std::lock_guard lock(error_mutex_);
    if (first_error_) std::rethrow_exception(std::exchange(first_error_, nullptr));
}

void ThreadPool::record_error(std::exception_ptr error) {
    std::lock_guard lock(error_mutex_);
    if (!first_error_) first_error_ = std::move(error);
}

PoolStats ThreadPool::stats() const {
    PoolStats s;
    for (const auto& w : workers_) {
        s.executed_per_worker.push_back(w->executed.load(std::memory_order_relaxed));
        s.steals += w->steals.load(std::memory_order_relaxed);
        s.steal_attempts += w->steal_attempts.load(std::memory_order_relaxed);
        s.stolen_tasks += w->stolen_tasks.load(std::memory_order_relaxed);
        s.injector_takes += w->injector_takes.load(std::memory_order_relaxed);
        s.parks += w->parks.load(std::memory_order_relaxed);
        s.wakeups += w->wakeups.load(std::memory_order_relaxed);
    }
    return s;
}

}  // namespace ws::lesson07
