#include "thread_pool.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

#include <ws/trace.hpp>

namespace ws::lesson04 {

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

// ANCHOR: backoff_tuning
// Backoff of an idle worker. Work often turns up again within microseconds (a task finishing
// elsewhere spawns more), so first look again at once, then let other threads run, and only
// then sleep: briefly at first, twice as long after each empty look, up to kMaxSleep. The cap
// bounds both how late a sleeping worker notices new work and what an idle pool costs. A
// wake-up costs 20-40 us of CPU on the 2-core VM this was measured on (mostly the sleep
// itself, not the look into the queues), so 2 idle workers waking every 8 ms use about 1% of
// a core (the AnIdlePoolSleeps tests). Lesson 05 replaces the sleeps with parking.
constexpr unsigned kSpinRounds = 64;
constexpr unsigned kYieldRounds = 64;
constexpr std::chrono::microseconds kMinSleep{16};
constexpr std::chrono::microseconds kMaxSleep{8000};
// ANCHOR_END: backoff_tuning

}  // namespace

ThreadPool::ThreadPool(std::size_t num_workers) : ThreadPool(Config{.num_workers = num_workers}) {}

ThreadPool::ThreadPool(Config config) : config_(config) {
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
    // Counted in pending_ before any worker can take it, so the count cannot reach zero while
    // the task waits. Relaxed is enough: the task's own subtraction comes after a worker took it
    // out of a queue, and the queue orders this increment before that (push's release store of
    // bottom and the taker's seq_cst load of it, or the owner's own later pop; the shared
    // queue's mutex); and when a task spawns, its own subtraction comes later in this thread.
    if (tl_worker.pool == this) {
        // Onto this worker's own deque: no lock, no CAS. Counted first (a thief may take it
        // the moment it is pushed); a growth may throw std::bad_alloc, and then nothing was
        // queued and the count goes back down (not to zero: the spawning task is counted).
        Worker& me = *workers_[tl_worker.index];
        count_spawn(me);
        try {
            me.deque.push(owned.get());
        } catch (...) {
            ++me.unreported;  // counted back out when this worker next runs dry
            throw;
        }
        owned.release();  // the deque owns it now
    } else {
        // Only a worker may push onto its own deque: from anywhere else, the shared queue.
        // Counted under its mutex, which every taker holds too, once the push has succeeded.
        std::lock_guard lock(mutex_);
        shared_.push_back(std::move(owned));
        pending_.fetch_add(1, std::memory_order_relaxed);
    }
}
// ANCHOR_END: spawn

// ANCHOR: worker_loop
void ThreadPool::worker_loop(std::size_t index) {
    tl_worker = {this, index};
    WS_TRACE_WORKER(index);   // ./workshop trace: this worker's lane of the timeline
    XorShift rng(index + 1);  // this worker's own generator: no shared RNG state to fight over
    unsigned idle_rounds = 0;
    for (;;) {
        if (std::unique_ptr<Task> task = find_task(index, rng)) {
            run_task(*task, index);
            idle_rounds = 0;
            continue;
        }
        report_finished(*workers_[index]);  // out of work: make pending_ exact first
        // Draining rule: leave only when stopping and nothing is queued or running anywhere,
        // since a running task may still spawn work. The acquire load of stopping_ pairs with
        // the destructor's release store, so every spawn made before the destructor shows up
        // in pending_ here; the acquire load of pending_ pairs with report_finished's release
        // subtraction.
        if (stopping_.load(std::memory_order_acquire) &&
            pending_.load(std::memory_order_acquire) == 0) {
            return;
        }
        backoff(idle_rounds++);  // wraps after months of idleness: harmless
    }
}

std::unique_ptr<Task> ThreadPool::find_task(std::size_t index, XorShift& rng) {
    if (auto task = workers_[index]->deque.pop()) {
        return std::unique_ptr<Task>(*task);  // own deque, newest first
    }
    if (auto task = take_shared()) return task;  // then work from outside
    return steal(index, rng);                    // then other workers' work
}
// ANCHOR_END: worker_loop

std::unique_ptr<Task> ThreadPool::take_shared() {
    std::lock_guard lock(mutex_);
    if (shared_.empty()) return nullptr;
    auto task = std::move(shared_.front());  // oldest first: outside tasks keep their order
    shared_.pop_front();
    return task;
}

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

// ANCHOR: backoff
void ThreadPool::backoff(unsigned idle_rounds) {
    if (idle_rounds < kSpinRounds) return;  // look again at once
    if (idle_rounds < kSpinRounds + kYieldRounds) {
        std::this_thread::yield();  // let a thread with work have this core
        return;
    }
    const unsigned doublings = std::min(idle_rounds - kSpinRounds - kYieldRounds, 9u);
    WS_TRACE_EVENT(park);
    std::this_thread::sleep_for(std::min(kMinSleep * (1u << doublings), kMaxSleep));
    WS_TRACE_EVENT(wake);
}
// ANCHOR_END: backoff

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
// Lesson 03's private tally, unchanged: pending_ counts the tasks queued or running anywhere,
// and a shared count changed twice per task would bounce between the cores on every task. So a
// worker keeps a tally of tasks it finished but has not subtracted yet; a spawn on that worker
// cancels against it, and the worker subtracts what is left whenever it runs out of work.
// pending_ is never below the true count, and reaches zero once the last worker runs dry.
void ThreadPool::count_spawn(Worker& me) {
    if (me.unreported > 0) {
        --me.unreported;
        return;
    }
    // Relaxed is enough: this increment happens before the task is pushed, and so before
    // whichever subtraction takes its unit off again (that one comes after a worker took the
    // task out of a deque: push's release store of bottom and the taker's seq_cst load of it,
    // or the owner's own later pop).
    pending_.fetch_add(1, std::memory_order_relaxed);
}

void ThreadPool::report_finished(Worker& me) {
    const std::size_t finished = std::exchange(me.unreported, 0);
    if (finished == 0) return;
    // Release: everything the finished tasks did (their effects, their counters, their spawns)
    // happens before a thread that sees pending_ reach zero with an acquire load — wait_idle
    // and the worker loop's exit check.
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
    // Acquire pairs with report_finished's release subtraction: every finished task's effects
    // are visible once this returns.
    idle_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    if (first_error_) std::rethrow_exception(std::exchange(first_error_, nullptr));
}
// ANCHOR_END: wait_idle

bool ThreadPool::on_worker_thread() const noexcept {
    return tl_worker.pool == this;
}

// ANCHOR: destructor
ThreadPool::~ThreadPool() {
    // Release pairs with the workers' acquire load: a worker that sees stopping_ also sees
    // every spawn this thread made before, in pending_, and so does not leave before it ran.
    stopping_.store(true, std::memory_order_release);
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
    }
    return s;
}

}  // namespace ws::lesson04
