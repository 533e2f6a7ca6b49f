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

#include <ws/not_implemented.hpp>

namespace ws::lesson05 {

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
        // TODO(exercise 1): returns false at once when the parker is stopped or has_work() sees
        // work; otherwise sleeps without using the CPU until notified and returns true, and
        // parks() and wakeups() count the sleeps. Rule: a task published between the recheck
        // and the sleep must not be slept through. Checked by Lesson05Ex1.
        (void)has_work;
        (void)stop_;
        throw NotImplemented("lesson 05, exercise 1: NaiveParker::park");
    }

    // Spawner, after publishing a task: wakes one sleeper, if any.
    void notify_one() {
        // TODO(exercise 1): one sleeper wakes, and a worker between its recheck and its sleep
        // cannot miss this notify. Rule: park()'s, seen from this side: a notify that mutex_
        // does not order against the sleeper's recheck can fall between the recheck and the
        // sleep. Checked by Lesson05Ex1.
        throw NotImplemented("lesson 05, exercise 1: NaiveParker::notify_one");
    }

    // Shutdown: wakes every sleeper; from now on park() returns at once.
    void notify_all() {
        // TODO(exercise 1): every sleeper wakes, and every later park() returns at once. Rule:
        // the same as notify_one's, for the stop flag. Checked by Lesson05Ex1.
        throw NotImplemented("lesson 05, exercise 1: NaiveParker::notify_all");
    }

    std::uint64_t parks() const noexcept { return parks_.load(std::memory_order_relaxed); }
    std::uint64_t wakeups() const noexcept { return wakeups_.load(std::memory_order_relaxed); }

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool stop_ = false;  // guarded by mutex_
    std::atomic<std::uint64_t> parks_{0}, wakeups_{0};
};

}  // namespace ws::lesson05
