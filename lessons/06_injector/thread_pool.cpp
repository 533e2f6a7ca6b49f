#include "thread_pool.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <ws/trace.hpp>

namespace ws::lesson06 {

namespace {

// ANCHOR: identity
// Who the current thread is: which pool it works for (if any) and its index there. Set once by
// each worker; lets spawn find the worker's own queue and wait_idle refuse to deadlock.
struct WorkerIdentity {
    const ThreadPool* pool = nullptr;
    std::size_t index = 0;
};
thread_local WorkerIdentity tl_worker;
// ANCHOR_END: identity

// ./workshop trace: a take from the injector on the timeline for each one that `takes` (a
// worker's injector_takes) counted since it read `before`; a find_task makes one at most.
// Only trace builds call it (the hook in worker_loop).
[[maybe_unused]] void trace_injector_takes(const std::atomic<std::uint64_t>& takes,
                                           std::uint64_t before) noexcept {
    // relaxed: the calling worker is the counter's only writer; nothing to pair with.
    const std::uint64_t after = takes.load(std::memory_order_relaxed);
    for (std::uint64_t take = before; take < after; ++take) {
        WS_TRACE_EVENT(injector_take);
    }
}

}  // namespace

ThreadPool::ThreadPool(std::size_t num_workers) : ThreadPool(Config{.num_workers = num_workers}) {}

ThreadPool::ThreadPool(Config config) : config_(config), parker_(config.num_workers) {
    if (config_.num_workers == 0) {
        throw std::invalid_argument("ThreadPool: num_workers must be at least 1");
    }
    if (config_.max_steal_batch == 0) {
        throw std::invalid_argument("ThreadPool: max_steal_batch must be at least 1");
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
    auto owned = std::make_unique<Task>(std::move(task));
    if (tl_worker.pool == this) {
        // Onto this worker's own deque: no lock, no CAS. Its seq_cst store of bottom is the
        // publication the parking protocol reasons about (Parker::park()). Counted first, with
        // lesson 03's tally (a thief may take it the moment it is pushed). A growth may throw
        // std::bad_alloc; then nothing was queued, and the count goes back out through the
        // tally (pending_ cannot reach zero meanwhile: the running task that spawns is counted).
        Worker& me = *workers_[tl_worker.index];
        count_spawn(me);
        try {
            me.deque.push(owned.get());
        } catch (...) {
            ++me.unreported;
            throw;
        }
        owned.release();  // the deque owns it now
    } else {
        // Counted before any worker can take it, so the count cannot reach zero while it waits.
        // Relaxed is enough: the subtraction comes after a worker took the task out of the
        // queue, and the queue orders this increment before that.
        // TODO(exercise 4): a spawn from outside goes into injector_, counted as pending before
        // any worker can take it. Rules: a push that throws leaves nothing counted and no
        // wait_idle caller asleep on the count it took back. As given, the stand-in locked
        // queue. Checked by Lesson06Ex4.
        std::lock_guard lock(mutex_);
        shared_.push_back(std::move(owned));
        pending_.fetch_add(1, std::memory_order_relaxed);  // under the lock: see above
        // seq_cst: the publication the parking protocol reasons about (lesson 05).
        shared_size_.fetch_add(1, std::memory_order_seq_cst);
    }
    wake_one();
}
// ANCHOR_END: spawn

// ANCHOR: worker_loop
void ThreadPool::worker_loop(std::size_t index) {
    tl_worker = {this, index};
    WS_TRACE_WORKER(index);   // ./workshop trace: this worker's lane of the timeline
    XorShift rng(index + 1);  // this worker's own generator: no shared RNG state to fight over
    bool searching = false;
    bool stop_seen = false;  // saw the pool stopping: the draining rule below
    Worker& me = *workers_[index];
    for (;;) {
        // ./workshop trace: the takes from the injector are recorded here, read off
        // injector_takes before and after find_task (as steal() records each visit around
        // steal_batch), so take_injector and find_task record none themselves. Keep these lines.
        // relaxed: this worker is the counter's only writer; nothing to pair with.
        WS_TRACE_LOCAL(takes, me.injector_takes.load(std::memory_order_relaxed));
        std::unique_ptr<Task> task = find_task(index, rng);
        WS_TRACE_DO(trace_injector_takes(me.injector_takes, takes));
        if (task) {
            // A searcher that found work stops searching; if it was the last searcher and more
            // work is in sight, the parker wakes another worker to look for it.
            if (searching) parker_.end_search([this] { return has_work_anywhere(); });
            searching = false;
            run_task(*task, index);
            continue;
        }
        if (!searching) {
            report_finished(me);  // out of work: make pending_ exact first
            // Out of work: count as a searcher, then look everywhere once more. A spawn that
            // sees a searcher relies on it to find its task (see Parker::park()).
            parker_.begin_search();
            searching = true;
            continue;
        }
        // Draining rule: leave once the pool is stopping and a whole search that began after
        // this worker saw so found nothing. A search that began before is not enough: a task
        // spawned from outside just after it looked (that spawn saw us searching and woke
        // nobody) and just before the destructor's store would never run. (Lesson 04 waited for
        // pending_ to reach zero, backing off meanwhile; a parked worker cannot wait like that,
        // and need not: a task still running elsewhere spawns onto its own worker's deque, and
        // that worker runs it before it leaves.) seq_cst: pairs with the destructor's store,
        // which comes after every spawn it must drain: seeing it, we see their tasks.
        if (stopping_.load(std::memory_order_seq_cst)) {
            if (stop_seen) return;
            stop_seen = true;
            continue;  // one more whole search
        }
        park();  // announce, recheck, sleep; back as a searcher
    }
}

std::unique_ptr<Task> ThreadPool::find_task(std::size_t index, XorShift& rng) {
    Worker& me = *workers_[index];
    // TODO(exercise 5): a task injected into a busy pool starts within a bounded number of
    // other tasks, even when the workers' own deques never run dry. Rule: the own deque stays
    // first almost always (it is the cheap, cache-hot path). As given, a busy worker never
    // looks past its own deque. (./workshop trace records the takes from the injector around
    // this call, in worker_loop: record none here.) Checked by Lesson06Ex5.
    if (auto task = me.deque.pop()) return std::unique_ptr<Task>(*task);  // own, newest first
    if (auto task = take_injector(index)) return task;                    // then work from outside
    return steal(index, rng);  // then other workers' work
}
// ANCHOR_END: worker_loop

// ANCHOR: take_injector
// A batch of the oldest injected tasks into our own deque, and one of them to run now: the rest
// are then ours to pop (or others' to steal) without touching the shared queue again.
std::unique_ptr<Task> ThreadPool::take_injector(std::size_t index) {
    // TODO(exercise 4): a worker takes work from the injector a batch at a time, counted in
    // stats().injector_takes (./workshop trace reads that count: record nothing here). Rule: a
    // lost race is not an empty injector. As given, one task from the stand-in locked queue.
    // Checked by Lesson06Ex4.
    (void)index;
    // relaxed: only a hint that spares the lock while the queue is empty; the lock decides.
    if (shared_size_.load(std::memory_order_relaxed) == 0) return nullptr;
    std::lock_guard lock(mutex_);
    if (shared_.empty()) return nullptr;
    auto task = std::move(shared_.front());
    shared_.pop_front();
    shared_size_.fetch_sub(1, std::memory_order_relaxed);  // relaxed: under the lock
    return task;
}
// ANCHOR_END: take_injector

// ANCHOR: steal
std::unique_ptr<Task> ThreadPool::steal(std::size_t thief, XorShift& rng) {
    const std::size_t n = workers_.size();
    if (n == 1) return nullptr;
    Worker& me = *workers_[thief];
    // A random first victim, so thieves spread out instead of all queueing on worker 0; then
    // the others in turn, so one round looks at every deque before the worker backs off.
    const std::size_t first = static_cast<std::size_t>(rng.next() % (n - 1));
    for (std::size_t k = 0; k < n - 1; ++k) {
        const std::size_t victim = (thief + 1 + (first + k) % (n - 1)) % n;  // never the thief
        // Relaxed counters: only this thread writes them; stats() reads a snapshot.
        me.steal_attempts.fetch_add(1, std::memory_order_relaxed);
        // ./workshop trace: each visit is recorded here, where the victim's index is known
        // (steal_batch sees only its Worker), with the tasks it got as stolen_tasks counts them.
        WS_TRACE_LOCAL(stolen, me.stolen_tasks.load(std::memory_order_relaxed));
        Task* task = steal_batch(*workers_[victim], me);
        WS_TRACE_EVENT(steal, victim, me.stolen_tasks.load(std::memory_order_relaxed) - stolen);
        if (task != nullptr) return std::unique_ptr<Task>(task);
    }
    return nullptr;
}
// ANCHOR_END: steal

// ANCHOR: steal_batch
// Takes up to half of what the victim's deque holds, one task per CAS: returns the first (to
// run now) and pushes the others onto the thief's own deque; nullptr if it got nothing.
//
// Why not lesson 03's steal-half in one step, i.e. one CAS moving top from t to t + k? The owner
// pops without a CAS whenever it sees more than one item: it lowers bottom to b, reads top, and
// if top < b takes item b outright — that is what makes its pop cheap. A single-item steal never
// collides with that: it claims index t only, and the owner, having reserved b first, takes b
// without a CAS only when it saw top < b, so t != b (pop() in chase_lev_deque.hpp has the
// proof). A k-item CAS claims [t, t + k) but checked bottom only before its CAS; bottom can
// drop below t + k meanwhile without top changing, so the CAS still succeeds. Example: 4 items
// at 0..3; a thief reads top 0 and bottom 4 and plans to take 0 and 1; the owner pops 3, 2 and 1
// (each saw top 0, so none needed a CAS); the thief's CAS 0 -> 2 succeeds: item 1 is run twice.
// A batch CAS is only right when every taker from that end CASes too (a FIFO owner does).
// So the thief steals one at a time, each steal a complete Chase-Lev steal, up to a bound.
Task* ThreadPool::steal_batch(Worker& victim, Worker& me) {
    // Half of what we see, rounded up; at most max_steal_batch; and never more than fits in our
    // own deque without growing it (no allocation here, so nothing stolen can be dropped by an
    // exception: it is empty when we steal, so that is its whole capacity).
    const std::size_t want = std::min({(victim.deque.size() + 1) / 2, config_.max_steal_batch,
                                       me.deque.capacity() - me.deque.size() + 1});
    Task* first = nullptr;
    std::size_t moved = 0;
    for (std::size_t attempt = 0; attempt < config_.max_steal_batch && moved < want; ++attempt) {
        Steal<Task*> s = victim.deque.steal();
        if (s.is_empty()) break;
        if (s.is_retry()) continue;  // lost a race for one task: there may well be more
        if (first == nullptr) {
            first = s.value();
        } else {
            me.deque.push(s.value());  // we own our deque: no lock, no CAS, no growth (see above)
        }
        ++moved;
    }
    if (moved > 0) {
        me.steals.fetch_add(1, std::memory_order_relaxed);  // a batch counts once
        me.stolen_tasks.fetch_add(moved, std::memory_order_relaxed);
    }
    return first;
}
// ANCHOR_END: steal_batch

// ANCHOR: park
// The recheck of a worker that announced it is about to sleep: every place a task can be
// published, with seq_cst loads (the deques' and the injector's is_empty()), so that the
// parker's argument holds: a spawn either sees this worker's announcement (and wakes someone)
// or this recheck sees the spawn's task. Also the stop flag, published the same way.
bool ThreadPool::has_work_anywhere() const noexcept {
    // seq_cst: pairs with the destructor's seq_cst store (stop is published like a task).
    if (stopping_.load(std::memory_order_seq_cst)) return true;
    // TODO(exercise 4): the recheck of a worker about to sleep sees a task injected before it.
    // Rule: this look at the injector is one of the parking protocol's loads (lesson 05): it
    // lies in S, paired with the step that published the task; a weaker one can leave an
    // injected task behind with every worker asleep. Checked by Lesson06Ex4.
    // seq_cst: pairs with spawn's seq_cst increment.
    if (shared_size_.load(std::memory_order_seq_cst) > 0) return true;
    for (const auto& w : workers_) {
        if (!w->deque.is_empty()) return true;  // seq_cst loads inside
    }
    return false;
}

void ThreadPool::park() {
    WS_TRACE_EVENT(park);  // a park whose recheck finds work returns at once: a short slice
    parker_.park([this] { return has_work_anywhere(); });
    WS_TRACE_EVENT(wake);
}

// After a task was published: wake a sleeper unless nobody sleeps or somebody searches.
void ThreadPool::wake_one() {
    parker_.notify_one();
}
// ANCHOR_END: park

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
    if (error) {
        std::lock_guard lock(mutex_);
        if (!first_error_) first_error_ = error;
    }
    // Counted before report_finished's release subtraction, which publishes it.
    workers_[index]->executed.fetch_add(1, std::memory_order_relaxed);
    ++workers_[index]->unreported;  // taken off pending_ later, by report_finished
}
// ANCHOR_END: run_task

// ANCHOR: pending
// Lesson 03's private tally: pending_ counts the tasks queued or running anywhere, and a shared
// count changed twice per task would bounce between the cores on every task. A worker keeps a
// tally of the tasks it finished but has not subtracted yet; a spawn on that worker cancels
// against it, and the worker subtracts what is left when it runs out of work (before it
// searches or parks). pending_ is never below the true count, and it reaches zero once the
// last worker has run dry.
void ThreadPool::count_spawn(Worker& me) {
    if (me.unreported > 0) {
        --me.unreported;
        return;
    }
    // Relaxed is enough: this increment happens before the task is pushed, and so before
    // whichever subtraction takes its unit off again (that comes after a worker took the task
    // out of a deque: push's seq_cst store of bottom and the taker's seq_cst load of it, or the
    // owner's own later pop).
    pending_.fetch_add(1, std::memory_order_relaxed);
}

void ThreadPool::report_finished(Worker& me) {
    const std::size_t finished = std::exchange(me.unreported, 0);
    if (finished == 0) return;
    // Release: everything the finished tasks did (their effects, their counters, their spawns)
    // happens before a thread that sees pending_ reach zero with an acquire load (wait_idle).
    if (pending_.fetch_sub(finished, std::memory_order_release) == finished) {
        // Under the mutex, so a wait_idle that has just checked pending_ under it and is about
        // to sleep cannot miss this notification.
        std::lock_guard lock(mutex_);
        idle_.notify_all();
    }
}
// ANCHOR_END: pending

// ANCHOR: wait_idle
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
// ANCHOR_END: wait_idle

bool ThreadPool::on_worker_thread() const noexcept {
    return tl_worker.pool == this;
}

// ANCHOR: destructor
ThreadPool::~ThreadPool() {
    // seq_cst: published like a task (the recheck in has_work_anywhere() reads it), so a worker
    // that announces its sleep after the parker's notify_all below read the state still sees
    // it; and a worker that sees it also sees every spawn this thread made before.
    stopping_.store(true, std::memory_order_seq_cst);
    // Shutdown wakes everyone: every sleeper now, and nobody sleeps from here on.
    parker_.notify_all();
    for (auto& thread : threads_)
        thread.join();  // the workers drain everything, then leave (see worker_loop)
}
// ANCHOR_END: destructor

PoolStats ThreadPool::stats() const {
    PoolStats s;
    for (const auto& w : workers_) {
        // Relaxed: a snapshot. After wait_idle it is exact, because every counter was bumped
        // before a release subtraction from pending_ that wait_idle acquired.
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

}  // namespace ws::lesson06
