#include "thread_pool.hpp"

#include <stdexcept>
#include <utility>

#include <ws/not_implemented.hpp>
#include <ws/trace.hpp>

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
    count_spawn();  // before it is queued, so the count cannot reach zero while it waits
    // TODO(exercise 2): a task spawned by one of this pool's workers lands on that worker's own
    // queue, and takes no lock that the other workers share; a task from any other thread still
    // goes to shared_. Rules: a worker of another pool is an outsider here; a push that throws
    // (std::bad_alloc) leaves nothing counted, and no wait_idle caller asleep on the count it
    // took back. Checked by Lesson02Ex2. As given, every task goes to the shared queue.
    std::lock_guard lock(mutex_);
    shared_.push_back(std::move(task));
}

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
        backoff(idle_rounds++);
    }
}

std::optional<Task> ThreadPool::find_task(std::size_t index, XorShift& rng) {
    // TODO(exercise 2): a worker runs its own tasks before anyone else's, newest first: their
    // data is still in this core's cache. Rule: the owner takes from the end of its queue that
    // no thief takes from, while tasks from outside keep their order (oldest first). Checked by
    // Lesson02Ex2. As given, the worker only looks at the shared queue.
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
    // TODO(exercise 3): if another worker has a task queued, the thief comes back with one (the
    // victim's oldest) and one call looks at every other worker before it gives up; stats()
    // shows every look at a victim as an attempt, and every success as a steal of one task.
    // Rules: thieves must not all line up at the same victim; a worker never robs itself; no
    // state is shared between thieves but the queues. Checked by Lesson02Ex3.
    // As given, nothing is stolen.
    (void)thief;
    (void)rng;
    return std::nullopt;
}

void ThreadPool::backoff(unsigned idle_rounds) {
    // TODO(exercise 4): an idle pool uses under 2 % of a core, yet a task spawned into it starts
    // within 50 ms, and destroying it takes under 100 ms. Rule: work often comes back within
    // microseconds, and a sleeping worker sees new work only when it wakes up. Checked by
    // Lesson02Ex4. As given, an idle worker only yields: it finds new work at once but burns a
    // whole core doing nothing.
    (void)idle_rounds;
    std::this_thread::yield();
}

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
        // before a release subtraction from pending_ that wait_idle acquired.
        s.executed_per_worker.push_back(w->executed.load(std::memory_order_relaxed));
        s.steals += w->steals.load(std::memory_order_relaxed);
        s.steal_attempts += w->steal_attempts.load(std::memory_order_relaxed);
        s.stolen_tasks += w->stolen_tasks.load(std::memory_order_relaxed);
    }
    return s;
}

}  // namespace ws::lesson02
