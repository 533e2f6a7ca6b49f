// The global injector of lesson 06, under ws::lesson07: where tasks spawned from outside the
// pool arrive. MPMC FIFO, unbounded; a worker takes a batch at a time into its own deque, so
// the injector is touched once per batch rather than once per task.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <deque>
#include <mutex>

#include <ws/steal.hpp>

#include "chase_lev_deque.hpp"

namespace ws::lesson07 {

template <typename T>
class Injector {
  public:
    static constexpr std::size_t kMaxBatch = 32;

    void push(T item) {
        std::lock_guard lock(mutex_);
        items_.push_back(item);
        // seq_cst: the parking protocol orders this before the pusher's load of sleepers_,
        // and a parking worker's seq_cst load of size_ (looks_empty_seq_cst) sees it
        size_.fetch_add(1, std::memory_order_seq_cst);
    }

    ws::Steal<T> steal() {
        if (looks_empty()) return ws::Steal<T>::empty();
        std::lock_guard lock(mutex_);
        if (items_.empty()) return ws::Steal<T>::empty();
        T item = items_.front();
        items_.pop_front();
        size_.fetch_sub(1, std::memory_order_relaxed);  // the mutex orders the items
        return ws::Steal<T>::success(item);
    }

    // Moves up to half of the items (at most kMaxBatch) into `dest` and returns one more.
    ws::Steal<T> steal_batch_and_pop(ChaseLevDeque<T>& dest) {
        if (looks_empty()) return ws::Steal<T>::empty();
        std::lock_guard lock(mutex_);
        if (items_.empty()) return ws::Steal<T>::empty();
        const std::size_t n = std::min(kMaxBatch, (items_.size() + 1) / 2);
        T first = items_.front();
        items_.pop_front();
        for (std::size_t i = 1; i < n; ++i) {
            dest.push(items_.front());
            items_.pop_front();
        }
        size_.fetch_sub(n, std::memory_order_relaxed);  // the mutex orders the items
        return ws::Steal<T>::success(first);
    }

    // relaxed: a hint that saves taking the lock; a stale "empty" is caught by the parking
    // protocol's seq_cst re-check before anyone sleeps
    bool looks_empty() const noexcept { return size_.load(std::memory_order_relaxed) == 0; }
    bool looks_empty_seq_cst() const noexcept { return size_.load(std::memory_order_seq_cst) == 0; }
    std::size_t size() const noexcept { return size_.load(std::memory_order_relaxed); }

  private:
    std::mutex mutex_;
    std::deque<T> items_;
    std::atomic<std::size_t> size_{0};
};

}  // namespace ws::lesson07
