// ws::Steal<T>: what a thief gets back from a queue it does not own.
//
// Three outcomes, not two: "retry" means the thief lost a race (another thief or the owner took
// the item it was reaching for), so the queue may well hold more work. A scheduler that treated
// retry like empty would go to sleep while work is waiting.
#pragma once

#include <cassert>
#include <optional>
#include <utility>

namespace ws {

template <typename T>
class Steal {
  public:
    static Steal empty() { return Steal{State::kEmpty}; }
    static Steal retry() { return Steal{State::kRetry}; }
    static Steal success(T value) { return Steal{std::move(value)}; }

    bool is_empty() const noexcept { return state_ == State::kEmpty; }
    bool is_retry() const noexcept { return state_ == State::kRetry; }
    bool is_success() const noexcept { return state_ == State::kSuccess; }

    // The stolen value; only valid on success.
    T& value() & {
        assert(is_success());
        return *value_;
    }
    T&& value() && {
        assert(is_success());
        return std::move(*value_);
    }

  private:
    enum class State { kEmpty, kRetry, kSuccess };
    explicit Steal(State s) : state_(s) {}
    explicit Steal(T&& v) : state_(State::kSuccess), value_(std::move(v)) {}

    State state_;
    std::optional<T> value_;
};

}  // namespace ws
