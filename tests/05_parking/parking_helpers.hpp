// Helpers for lesson 05's tests: a thread that behaves like a worker with nothing to do, and
// the pool's configuration with either parker.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include <ws/testing/harness.hpp>
#include <ws/testing/parking_checks.hpp>
#include <ws/testing/wait.hpp>

#include "thread_pool.hpp"

namespace lesson05_test {

using namespace std::chrono_literals;

// Begins a search, finds nothing, parks once (recheck: `work`), and records that it returned.
template <typename Parker>
class IdleWorker {
  public:
    IdleWorker(Parker& p, const std::atomic<bool>& work)
        : thread_([&p, &work, this] {
              p.begin_search();
              slept_ = p.park([&work] { return work.load(std::memory_order_seq_cst); });
              returned_.store(true);
          }) {}
    ~IdleWorker() {
        if (thread_.joinable()) thread_.join();
    }
    bool returned() const { return returned_.load(); }
    bool slept() const { return slept_; }
    void join() { thread_.join(); }

  private:
    std::atomic<bool> returned_{false};
    bool slept_ = false;
    std::thread thread_;
};

// Waits (bounded) until `n` threads are announced sleepers of `p`, plus a moment for them to
// reach the futex wait itself.
template <typename Parker>
bool wait_for_sleepers(const Parker& p, unsigned n) {
    const bool ok =
        ws::testing::wait_until([&] { return p.sleepers() >= n; }, 5s * ws::testing::slowdown());
    std::this_thread::sleep_for(10ms);
    return ok;
}

using Pool = ws::lesson05::ThreadPool;

inline ws::lesson05::Config pool_config(std::size_t workers, bool naive) {
    ws::lesson05::Config c;
    c.num_workers = workers;
    c.naive_parking = naive;
    return c;
}

}  // namespace lesson05_test
