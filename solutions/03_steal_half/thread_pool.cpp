#include "thread_pool.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

#include <ws/trace.hpp>

namespace ws::lesson03 {

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

// ANCHOR: spawn
void ThreadPool::spawn(Task task) {
    if (!task) throw std::invalid_argument("ThreadPool::spawn: the task is empty");
    // Counted before it is queued, so the count cannot reach zero while it waits.
    const bool from_tally = count_spawn();
    try {
        if (tl_worker.pool == this) {
            workers_[tl_worker.index]->queue.push(std::move(task));  // no shared lock at all
        } else {
            std::lock_guard lock(mutex_);
            shared_.push_back(std::move(task));
        }
    } catch (...) {
        // The push threw (std::bad_alloc from the deque, which is then unchanged): the task was
        // never queued, so no worker will ever take its count off again. Left in, it would make
        // wait_idle and the destructor wait forever for a task that does not exist.
        uncount_spawn(from_tally);
        throw;
    }
}
// ANCHOR_END: spawn

// ANCHOR: pending
// pending_ counts the tasks queued or running anywhere: wait_idle and the draining rule need
// it. Changed twice per task by every worker, it would be the one shared cache line left on the
// hot path, bouncing between cores: a shared lock in disguise. So each worker keeps a private
// tally of tasks it finished but has not yet subtracted. A spawn on that worker first cancels
// against the tally (one task finished, one new: the total is unchanged) and only touches
// pending_ when the tally is empty; the worker subtracts what is left of its tally whenever it
// runs out of work. Subtractions only come late, never early, so pending_ is never below the
// true count and wait_idle cannot return too soon; and a worker that ran out of work has
// reported everything, so pending_ reaches zero once the last worker runs dry.
bool ThreadPool::count_spawn() {
    if (tl_worker.pool == this) {
        std::size_t& unreported = workers_[tl_worker.index]->unreported;
        if (unreported > 0) {
            --unreported;
            return true;
        }
    }
    // Relaxed is enough: this increment happens before the task is queued, and so before
    // whichever subtraction takes its unit off again (that one comes after a worker took the
    // task out of a queue through the queue's mutex, or is uncount_spawn's, later in this
    // thread). pending_ carries no data of its own.
    pending_.fetch_add(1, std::memory_order_relaxed);
    return false;
}

// Takes back exactly what count_spawn added, when the push after it threw.
void ThreadPool::uncount_spawn(bool from_tally) {
    if (from_tally) {
        ++workers_[tl_worker.index]->unreported;  // the finished task it cancelled against
        return;
    }
    // This may be the last unit (a spawn from outside into an idle pool): then it ends a wait,
    // exactly as report_finished does. Release, like report_finished's subtraction, pairs with
    // the acquire loads of pending_ in wait_idle and the worker loop's exit check.
    if (pending_.fetch_sub(1, std::memory_order_release) == 1) {
        // Under the mutex, so a wait_idle that has just checked pending_ under it and is about
        // to sleep cannot miss this notification.
        std::lock_guard lock(mutex_);
        idle_.notify_all();
    }
}

void ThreadPool::report_finished(std::size_t index) {
    const std::size_t finished = std::exchange(workers_[index]->unreported, 0);
    if (finished == 0) return;
    // Release: everything the finished tasks did (their effects, their counters, their spawns)
    // happens before a thread that sees pending_ reach zero with an acquire load: wait_idle and
    // the worker loop's exit check.
    if (pending_.fetch_sub(finished, std::memory_order_release) == finished) {
        // Under the mutex, so a wait_idle that has just checked pending_ under it and is about
        // to sleep cannot miss this notification.
        std::lock_guard lock(mutex_);
        idle_.notify_all();
    }
}
// ANCHOR_END: pending

// ANCHOR: worker_loop
void ThreadPool::worker_loop(std::size_t index) {
    tl_worker = {this, index};
    WS_TRACE_WORKER(index);   // ./workshop trace: this worker's lane of the timeline
    XorShift rng(index + 1);  // this worker's own generator: no shared RNG state to fight over
    unsigned idle_rounds = 0;
    for (;;) {
        if (std::optional<Task> task = find_task(index, rng)) {
            run_task(*task, index);
            idle_rounds = 0;
            continue;
        }
        report_finished(index);  // out of work: make pending_ exact before idling or leaving
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

std::optional<Task> ThreadPool::find_task(std::size_t index, XorShift& rng) {
    if (auto task = workers_[index]->queue.pop()) return task;  // own queue, newest first
    if (auto task = take_shared()) return task;                 // then work from outside
    return steal(index, rng);                                   // then other workers' work
}
// ANCHOR_END: worker_loop

std::optional<Task> ThreadPool::take_shared() {
    std::lock_guard lock(mutex_);
    if (shared_.empty()) return std::nullopt;
    Task task = std::move(shared_.front());  // oldest first: outside tasks keep their order
    shared_.pop_front();
    return task;
}

// ANCHOR: steal
std::optional<Task> ThreadPool::steal(std::size_t thief, XorShift& rng) {
    const std::size_t n = workers_.size();
    if (n == 1) return std::nullopt;
    Worker& me = *workers_[thief];
    // A random first victim, so thieves spread out instead of all queueing on worker 0; then
    // the others in turn, so one round looks at every queue before the worker backs off.
    const std::size_t first = static_cast<std::size_t>(rng.next() % (n - 1));
    for (std::size_t k = 0; k < n - 1; ++k) {
        const std::size_t victim = (thief + 1 + (first + k) % (n - 1)) % n;  // never the thief
        // Relaxed counters: only this thread writes them; stats() reads a snapshot.
        me.steal_attempts.fetch_add(1, std::memory_order_relaxed);
        const std::size_t moved = workers_[victim]->queue.steal_half_into(me.queue);
        WS_TRACE_EVENT(steal, victim, moved);
        if (moved != 0) {
            me.steals.fetch_add(1, std::memory_order_relaxed);
            me.stolen_tasks.fetch_add(moved, std::memory_order_relaxed);
            // Run one of the batch now, like any task of our own (newest first). Another thief
            // may have taken the batch from us already; then try the next victim.
            if (auto task = me.queue.pop()) return task;
        }
    }
    return std::nullopt;
}
// ANCHOR_END: steal

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

}  // namespace ws::lesson03
