// The floor for lesson 04's owner path: the smallest correct Chase-Lev deque of pointers,
// written only for bench_lesson04 to measure the lesson's deque against. Fixed capacity (no
// growth, no full check: the benchmark never holds more than kCapacity items), std::atomic<T*>
// slots, the same orderings as lesson 04 (pop's seq_cst store of bottom and load of top, steal's
// two seq_cst loads), pop returning the pointer or nullptr. Everything is defined in the class,
// so every compiler may inline it. Not teaching code: lesson 04's deque is.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ws::bench {

template <typename T>
class FloorChaseLev {
  public:
    static constexpr std::int64_t kCapacity = 4096;

    void push(T* item) {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed);
        slot(b).store(item, std::memory_order_relaxed);
        bottom_.store(b + 1, std::memory_order_release);  // pairs with steal's load of bottom
    }

    T* pop() {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
        bottom_.store(b, std::memory_order_seq_cst);  // store-load with the load of top
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        if (t > b) {
            bottom_.store(b + 1, std::memory_order_release);
            return nullptr;
        }
        T* item = slot(b).load(std::memory_order_relaxed);
        if (t < b) return item;
        const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                                      std::memory_order_relaxed);
        bottom_.store(b + 1, std::memory_order_release);
        return won ? item : nullptr;
    }

    // A thief's side, so that the floor is a whole deque; the benchmark does not call it.
    T* steal() {
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
        if (t >= b) return nullptr;
        T* item = slot(t).load(std::memory_order_relaxed);
        if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                          std::memory_order_relaxed))
            return nullptr;
        return item;
    }

  private:
    std::atomic<T*>& slot(std::int64_t index) {
        return slots_[static_cast<std::size_t>(index & (kCapacity - 1))];
    }

    alignas(64) std::atomic<std::int64_t> top_{0};
    alignas(64) std::atomic<std::int64_t> bottom_{0};
    std::atomic<T*> slots_[kCapacity]{};
};

}  // namespace ws::bench
