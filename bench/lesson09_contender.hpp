// Lesson 09 on the standard pool workloads (register_pool_workloads): every task is a
// coroutine. spawn(task) starts a Task<void> that runs the task, with lesson09::spawn, on
// lesson 09's pool (lesson 07's, carried unchanged), so the row against lesson07's shows what a
// coroutine frame and its resume job cost over a plain task. No stats(): it is an executor on a
// pool, not a pool.
#pragma once

#include <memory>
#include <utility>

#include <ws/task.hpp>

#include "09_coroutines/async.hpp"
#include "contenders.hpp"

namespace ws::bench {

class Lesson09Coroutines {
  public:
    Lesson09Coroutines() : pool_(bench_workers()) {}
    void spawn(ws::Task task) { lesson09::spawn(pool_, run(std::move(task))); }
    void wait_idle() { pool_.wait_idle(); }

  private:
    static lesson09::Task<void> run(ws::Task task) {
        task();
        co_return;
    }
    lesson09::ThreadPool pool_;
};

inline void register_lesson09() {
    register_pool_workloads("lesson09", [] { return std::make_unique<Lesson09Coroutines>(); });
}

}  // namespace ws::bench
