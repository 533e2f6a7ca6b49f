// Lesson 05, exercise 1: the naive parker, there to be measured against Parker (parker.hpp).
//
// Same interface as Parker: the worker side is
//     if (!parker.park([&] { return stopping || has_work(); })) ...
// and the spawner side publishes the task, then calls notify_one().
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace ws::lesson05 {

// ANCHOR: naive
// Exercise 1: the naive version. Correct, and simple to prove: the recheck runs under the
// mutex that every notify_one takes, so a spawner either publishes before the recheck (which
// then sees the task) or takes the mutex after the sleeper released it inside cv_.wait (and
// its notify then finds it asleep). The price: every spawn takes a global mutex and signals,
// whether anyone sleeps or not.
class NaiveParker {
  public:
    explicit NaiveParker(std::size_t /*num_workers*/) {}

    // Worker: sleeps until notified, unless stopping or `has_work()` says there is work.
    // Returns true if it slept. A wake-up may be spurious: the caller looks for work again.
    template <typename HasWork>
    bool park(HasWork&& has_work) {
        std::unique_lock lock(mutex_);
        if (stop_ || has_work()) return false;
        parks_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
        cv_.wait(lock);
        wakeups_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
        return true;
    }

    // Spawner, after publishing a task: wakes one sleeper, if any.
    void notify_one() {
        // An empty critical section: we either ran before a sleeper's recheck (which then sees
        // our task), or after it released the mutex in wait (and is woken by the notify).
        { std::lock_guard lock(mutex_); }
        cv_.notify_one();
    }

    // Shutdown: wakes every sleeper; from now on park() returns at once.
    void notify_all() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        cv_.notify_all();
    }

    std::uint64_t parks() const noexcept { return parks_.load(std::memory_order_relaxed); }
    std::uint64_t wakeups() const noexcept { return wakeups_.load(std::memory_order_relaxed); }

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool stop_ = false;  // guarded by mutex_
    std::atomic<std::uint64_t> parks_{0}, wakeups_{0};
};
// ANCHOR_END: naive

}  // namespace ws::lesson05
