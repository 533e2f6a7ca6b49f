// Given code, carried from lesson 07's solution, unchanged.
// (./workshop sync writes this copy; edit the source lesson's file instead.)
#include "thread_pool.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>

#include <ws/trace.hpp>

namespace ws::lesson08 {

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

constexpr std::size_t kStealRounds = 2;  // rounds over the other deques per search

}  // namespace

ThreadPool::ThreadPool(std::size_t num_workers) : ThreadPool(with_workers(num_workers)) {}

ThreadPool::ThreadPool(Config config)
    : config_(config),
      parker_(config.num_workers),
      // Each fresh task node: a spawned task of this pool.
      nodes_([this](TaskNode& node) {
          node.run = &run_spawned;
          node.pool = this;
      }) {
    if (config_.num_workers == 0) {
        throw std::invalid_argument("ThreadPool: num_workers must be at least 1");
    }
    if (config_.max_steal_batch == 0) {
        throw std::invalid_argument("ThreadPool: max_steal_batch must be at least 1");
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
    const bool on_worker = on_worker_thread();
    // Counted before it is queued, so nobody can complete it uncounted. (First, while nothing
    // waits in the store buffer for the node's cache line to arrive.)
    if (on_worker) {
        // release: the push below publishes it (seq_cst store of bottom) to whoever runs the
        // task, and that worker's release of its completed count passes it on to idle_now().
        std::atomic<std::uint64_t>& spawned = tl_worker_->spawned;
        spawned.store(spawned.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    } else {
        // seq_cst RMW: outside threads share this counter.
        outside_spawned_.fetch_add(1, std::memory_order_seq_cst);
    }
    TaskNode* job = nullptr;
    try {
        job = nodes_.allocate(on_worker ? &tl_worker_->nodes : nullptr);
        job->task = std::move(task);
        if (on_worker) {
            tl_worker_->deque.push(job);  // seq_cst store of bottom: in S before notify_one's load
        } else {
            injector_.push(job);  // seq_cst CAS on the tail: in S before notify_one's load
        }
    } catch (...) {
        // std::bad_alloc (a block of nodes, a deque growth, an injector block): nothing was
        // queued. Without the undo, the count would wait forever for a task that never runs.
        unspawn(job);
        throw;
    }
    parker_.notify_one();
}

// spawn() failed before queueing: take the count back, and the node (if it got one).
void ThreadPool::unspawn(TaskNode* job) noexcept {
    if (job != nullptr) job->task.reset();  // the captures die now; the caller gets the error
    if (on_worker_thread()) {
        Worker& me = *tl_worker_;
        // release, like the increment. The task that was spawning has not completed, so no
        // idle_now() can have counted on the surplus.
        me.spawned.store(me.spawned.load(std::memory_order_relaxed) - 1, std::memory_order_release);
        if (job != nullptr) nodes_.free(me.nodes, job);
        return;
    }
    if (job != nullptr) nodes_.give_back(job);  // back where allocate took it from
    // seq_cst: this may make the pool idle with every worker asleep, so a waiter must hear of
    // it: the same Dekker pair with wait_idle as announce_idle's.
    outside_spawned_.fetch_sub(1, std::memory_order_seq_cst);
    wake_idle_waiters();
}
// ANCHOR_END: spawn

void ThreadPool::run_spawned(Job* job) noexcept {
    auto* node = static_cast<TaskNode*>(job);
    ThreadPool* pool = node->pool;
    Worker& me = *tl_worker_;
    try {
        node->task();
    } catch (...) {
        pool->record_error(std::current_exception());
    }
    node->task.reset();  // the captures die before the task counts as finished
    pool->nodes_.free(me.nodes, node);
    // release: whoever reads this count (idle_now) also sees the spawn counts of every task
    // this one spawned: they were stored before, by this thread.
    me.completed.store(me.completed.load(std::memory_order_relaxed) + 1, std::memory_order_release);
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

// ANCHOR: take_back
bool ThreadPool::take_back(Job* job) {
    if (!on_worker_thread())
        throw std::logic_error("ThreadPool::take_back: only a worker of this pool has a deque");
    ChaseLevDeque<Job*>& deque = tl_worker_->deque;
    const std::optional<Job*> newest = deque.pop();
    if (!newest) return false;  // stolen (or the deque was empty)
    if (*newest == job) return true;
    deque.push(*newest);  // someone else's job (a task spawned meanwhile): put it back
    return false;
}
// ANCHOR_END: take_back

void ThreadPool::run_job(Worker& me, Job* job) {
    bump(me.executed);
    WS_TRACE_EVENT(task_begin);
    job->run(job);  // may free the job or release a joiner: not touched afterwards
    WS_TRACE_EVENT(task_end);
}

// ANCHOR: worker_loop
void ThreadPool::worker_loop(std::size_t index) {
    Worker& me = *workers_[index];
    tl_worker_ = &me;
    WS_TRACE_WORKER(index);  // ./workshop trace: this worker's lane of the timeline
    bool searching = false;
    bool stop_seen = false;  // saw the pool stopping: the draining rule below
    // Looks for work `rounds` times, with a short pause before each look, and yields the core
    // after every eighth look. The yield is for a thread the OS has just woken on this core —
    // typically the outside caller whose join has finished: Linux need not preempt a spinning
    // thread for it, and without the yield that caller waits for the whole spin (about 40 us,
    // on every graph run of lesson 08's benchmark). Not after every look: a yield is a system
    // call, and a worker inside one notices new work that much later. With nothing else to
    // run, it returns at once.
    const auto spin = [this, &me](std::uint32_t rounds) -> Job* {
        for (std::uint32_t r = 0; r < rounds; ++r) {
            for (int i = 0; i < 16; ++i)
                cpu_relax();
            if (Job* job = find_job(me)) return job;
            if (r % 8 == 7) std::this_thread::yield();
        }
        return nullptr;
    };
    for (;;) {
        Job* job = find_job(me);
        if (job == nullptr && !searching) {
            // Out of work: tell wait_idle. Then look again for a while before telling the
            // parker: a worker that runs dry for a moment (a flat spawn from outside does that
            // to it all the time) then changes no shared state, and spawners' notify_one()
            // keeps reading a cached line.
            announce_idle(me);
            job = spin(config_.spins_before_park / 2);
            if (job == nullptr) {
                // Count as a searcher: spawns that see one rely on it to find their task
                // (see Parker::park()).
                parker_.begin_search();
                searching = true;
            }
        }
        if (job == nullptr) {
            // Look again for a while before thinking of sleep (also after a wake-up): work
            // often comes back within microseconds, and a sleep and wake-up cost tens of them.
            job = spin(config_.spins_before_park);
        }
        if (job != nullptr) {
            // A searcher that found work stops searching; if it was the last searcher, the
            // parker wakes another worker, since there may be more where this came from.
            if (searching) parker_.end_search([this] { return has_work_anywhere(); });
            searching = false;
            run_job(me, job);
            continue;
        }
        // Draining rule: a worker leaves once the pool is stopping and a whole search that
        // began after it saw so found nothing. A search that began before is not enough: a task
        // spawned from outside just after it looked (that spawn saw us searching and woke
        // nobody) and just before the destructor's store would never run. seq_cst: pairs with
        // the destructor's store, which comes after every spawn it must drain.
        if (stopping_.load(std::memory_order_seq_cst)) {
            if (stop_seen) break;
            stop_seen = true;
            continue;  // one more whole search
        }
        WS_TRACE_EVENT(park);
        parker_.park([this] { return has_work_anywhere(); });  // announce, recheck, sleep
        WS_TRACE_EVENT(wake);
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
            WS_TRACE_EVENT(injector_take);
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
    for (std::size_t round = 0; round < kStealRounds; ++round) {
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
                // Spawned tasks come in loops of peers: take more. A join's half is already
                // the biggest piece of its split, and taking its smaller siblings too would
                // leave the victim with nothing.
                if (got.value()->run == &run_spawned) steal_more(me, victim);
                WS_TRACE_EVENT(steal, victim.index, 1);  // (steal_more's extra jobs: in stats())
                return got.value();
            }
            WS_TRACE_EVENT(steal, victim.index, 0);
            lost_a_race = lost_a_race || got.is_retry();
        }
        if (!lost_a_race) break;  // every deque was empty: another round would find nothing
    }
    return nullptr;
}

// ANCHOR: steal_more
// After a successful steal of a spawned task, while the victim's deque is hot in our cache:
// more of its oldest jobs — up to half of what it holds, config_.max_steal_batch in all — into
// our own deque. The deque steals one job at a time, and when all the work starts in one deque
// (a loop of spawns), a thief would otherwise pay a cold steal — two cache misses and a CAS —
// for every single task it runs.
void ThreadPool::steal_more(Worker& me, Worker& victim) {
    // relaxed size: a hint; a steal that finds the deque empty simply ends the burst. Never
    // more than our deque holds without growing: a growth allocates, and a std::bad_alloc there
    // would drop a job already taken from the victim (and the one steal() is about to return).
    const std::size_t room = me.deque.capacity() - std::min(me.deque.size(), me.deque.capacity());
    const std::size_t more = std::min({victim.deque.size() / 2, config_.max_steal_batch - 1, room});
    for (std::size_t i = 0; i < more; ++i) {
        auto got = victim.deque.steal();
        if (!got.is_success()) break;
        bump(me.stolen_tasks);
        me.deque.push(got.value());
    }
}
// ANCHOR_END: steal_more

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
    // seq_cst, after the completed counts: a spawn released before a completion we saw is seen
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
    wake_idle_waiters();
}

// After a seq_cst change of a count idle_now() reads: if a wait_idle waits, bump its epoch.
void ThreadPool::wake_idle_waiters() {
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
        // relaxed: a snapshot (exact once the pool is idle: wait_idle acquired the counts)
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

}  // namespace ws::lesson08
