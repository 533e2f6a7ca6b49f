// ws::XorShift: the small random number generator the pools use to pick a victim to steal from.
#pragma once

#include <cstdint>

namespace ws {

// xorshift64 (Marsaglia). One per worker, on the worker's own stack, so no two threads ever
// touch the same state: a shared generator would be one more contended cache line.
class XorShift {
  public:
    explicit XorShift(std::uint64_t seed) : state_(seed == 0 ? 0x9E3779B97F4A7C15u : seed) {}
    std::uint64_t next() {
        state_ ^= state_ << 13;
        state_ ^= state_ >> 7;
        state_ ^= state_ << 17;
        return state_;
    }

  private:
    std::uint64_t state_;  // never 0: xorshift would stay at 0 forever
};

}  // namespace ws
