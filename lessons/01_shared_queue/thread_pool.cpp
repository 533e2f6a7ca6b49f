#include "thread_pool.hpp"

#include <stdexcept>
#include <utility>

#include <ws/not_implemented.hpp>
#include <ws/trace.hpp>

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
    // TODO(exercise 1): when spawn returns, the task is queued for the workers, oldest first,
    // and a worker asleep for lack of work cannot sleep through it. Rule: queue_ is shared by
    // every thread: touch it only under mutex_. Checked by Lesson01Ex1.
    // TODO(exercise 2): the task counts as pending before any worker can take it, so that
    // wait_idle can never see "nothing pending" while it waits or runs. Rule: a worker may take
    // the task and finish it the moment it is queued: a count made after that is too late.
    // Checked by Lesson01Ex2.
    throw NotImplemented("lesson 01, exercise 1: ThreadPool::spawn");
}

void ThreadPool::worker_loop(std::size_t index) {
    tl_current_pool = this;
    WS_TRACE_WORKER(index);  // ./workshop trace: this worker's lane of the timeline
    // TODO(exercise 1): this worker runs queued tasks (through run_task), each task on exactly
    // one worker, sleeps without using the CPU while there are none, and leaves once the pool
    // is stopping. Rules: never hold mutex_ while a task runs (it may spawn, and the other workers
    // must go on); a notify that comes while nobody waits is lost, so never go to sleep without
    // looking at what you wait for. Checked by Lesson01Ex1. (As given, the worker leaves.)
    (void)index;
}

void ThreadPool::run_task(Task& task, std::size_t index) {
    // TODO(exercise 4): a task that throws does not end its worker: the pool goes on, and the
    // first exception since the last wait_idle is kept for wait_idle. Rules: a task may throw
    // anything; a task that threw is finished like any other. Checked by Lesson01Ex4.
    // (As given, an exception escapes the worker thread and ends the process.)
    WS_TRACE_EVENT(task_begin);
    task();
    task.reset();  // destroy the captures before the task counts as finished
    WS_TRACE_EVENT(task_end);
    std::lock_guard lock(mutex_);
    ++executed_[index];
    // TODO(exercise 2): from here the task is finished: it no longer counts as pending, and if
    // it was the last, every thread sleeping in wait_idle wakes. Rule: several threads may wait
    // at once, and one that has just looked at the count but not yet gone to sleep must not
    // sleep through this. Checked by Lesson01Ex2.
}

void ThreadPool::wait_idle() {
    // TODO(exercise 2): returns only when every task spawned so far, and every task those
    // spawned, has finished, sleeping meanwhile; from a task of this pool, where it would wait
    // for itself, it throws std::logic_error. Rule: an empty queue is not an idle pool: a task
    // taken from it may still be running, and may still spawn. Checked by Lesson01Ex2.
    // TODO(exercise 4): once the wait is over, wait_idle rethrows the first exception a task
    // threw since the last wait_idle (see run_task), once: the next wait_idle starts clean.
    // Rule: a pool that is already idle when wait_idle is called still owes its caller that
    // exception. Checked by Lesson01Ex4.
    throw NotImplemented("lesson 01, exercise 2: ThreadPool::wait_idle");
}

bool ThreadPool::on_worker_thread() const noexcept {
    return tl_current_pool == this;
}

ThreadPool::~ThreadPool() {
    // TODO(exercise 3): every task spawned before the destructor runs, and so does every task
    // those spawn while the pool drains, before the workers are joined; an idle pool is
    // destroyed at once. Rule: a worker may leave only when nothing is left for it to run.
    // Checked by Lesson01Ex3. As given, the queue is thrown away: queued tasks are lost.
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
