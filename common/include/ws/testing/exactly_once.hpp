// ExactlyOnce: counts how often each of N items was seen, from any thread, and reports which
// items were lost or duplicated.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <sstream>

namespace ws::testing {

class ExactlyOnce {
  public:
    explicit ExactlyOnce(std::size_t n) : n_(n), counts_(new std::atomic<std::uint32_t>[n]) {
        for (std::size_t i = 0; i < n; ++i)
            counts_[i].store(0, std::memory_order_relaxed);
    }

    // Thread-safe. Relaxed is enough: the check runs after the threads were joined or the pool
    // reported idle, which already orders every mark before it.
    void mark(std::size_t item) {
        if (item >= n_) {
            out_of_range_.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        counts_[item].fetch_add(1, std::memory_order_relaxed);
    }

    std::size_t size() const noexcept { return n_; }

    std::uint64_t seen() const {
        std::uint64_t total = 0;
        for (std::size_t i = 0; i < n_; ++i)
            total += counts_[i].load(std::memory_order_relaxed);
        return total;
    }

    // Success iff every item was seen exactly once; otherwise lists the first offenders.
    ::testing::AssertionResult verify() const {
        std::size_t lost = 0, duplicated = 0;
        std::ostringstream detail;
        int shown = 0;
        for (std::size_t i = 0; i < n_; ++i) {
            const auto c = counts_[i].load(std::memory_order_relaxed);
            if (c == 1) continue;
            (c == 0 ? lost : duplicated)++;
            if (shown++ < 5) detail << "\n  item " << i << " seen " << c << " times";
        }
        const auto bad = out_of_range_.load(std::memory_order_relaxed);
        if (lost == 0 && duplicated == 0 && bad == 0) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure()
               << "of " << n_ << " items, " << lost << " were lost (never seen) and " << duplicated
               << " were seen more than once; " << bad << " unknown items" << detail.str();
    }

  private:
    std::size_t n_;
    std::unique_ptr<std::atomic<std::uint32_t>[]> counts_;
    std::atomic<std::uint64_t> out_of_range_{0};
};

}  // namespace ws::testing
