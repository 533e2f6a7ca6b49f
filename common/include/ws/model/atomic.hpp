// ws::model::Atomic<T>: the instrumented atomic that ws::atomic<T> names in a WS_MODEL_CHECK
// build (<ws/atomic.hpp>). The member functions and memory_order arguments are std::atomic's.
//
// On a thread of the explorer every operation goes to the model (hooks.hpp): the value lives in
// the explorer's side table, keyed by this object's address, never in the object, so an access
// through a dangling pointer is reported as a use after free before it touches freed memory.
// On any other thread (outside explore()) it behaves as the std::atomic<T> it contains.
//
// T must be trivially copyable and at most 8 bytes: the model keeps values as 64-bit patterns.
// compare_exchange compares object representations, as std::atomic does.
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

#include <ws/model/detail/hooks.hpp>

namespace ws::model {

template <typename T>
class Atomic {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(detail::Bits),
                  "ws::model::Atomic<T>: T must be trivially copyable and at most 8 bytes");
    using Where = detail::Where;
    using Bits = detail::Bits;

  public:
    Atomic(Where where = Where::here()) noexcept : Atomic(T{}, where) {}
    Atomic(T desired, Where where = Where::here()) noexcept : real_(desired) {
        if (detail::in_model_thread()) detail::atomic_created(this, bits(desired), &format, where);
    }
    ~Atomic() {
        if (detail::in_model_thread()) detail::atomic_destroyed(this);
    }
    Atomic(const Atomic&) = delete;
    Atomic& operator=(const Atomic&) = delete;

    T load(std::memory_order order = std::memory_order_seq_cst,
           Where where = Where::here()) const noexcept {
        if (!detail::in_model_thread()) return real_.load(order);
        return value(detail::atomic_load(this, order, where));
    }
    void store(T desired, std::memory_order order = std::memory_order_seq_cst,
               Where where = Where::here()) noexcept {
        if (!detail::in_model_thread()) return real_.store(desired, order);
        detail::atomic_store(this, bits(desired), order, where);
    }
    operator T() const noexcept { return load(); }
    T operator=(T desired) noexcept {
        store(desired);
        return desired;
    }

    T exchange(T desired, std::memory_order order = std::memory_order_seq_cst,
               Where where = Where::here()) noexcept {
        if (!detail::in_model_thread()) return real_.exchange(desired, order);
        return value(detail::atomic_rmw(this, "exchange", &replace, bits(desired), order, where));
    }

    bool compare_exchange_strong(T& expected, T desired, std::memory_order success,
                                 std::memory_order failure, Where where = Where::here()) noexcept {
        return compare_exchange(expected, desired, false, success, failure, where);
    }
    bool compare_exchange_strong(T& expected, T desired,
                                 std::memory_order order = std::memory_order_seq_cst,
                                 Where where = Where::here()) noexcept {
        return compare_exchange(expected, desired, false, order, failure_order(order), where);
    }
    // Spurious failures are not modelled: weak behaves as strong (see explore.hpp).
    bool compare_exchange_weak(T& expected, T desired, std::memory_order success,
                               std::memory_order failure, Where where = Where::here()) noexcept {
        return compare_exchange(expected, desired, true, success, failure, where);
    }
    bool compare_exchange_weak(T& expected, T desired,
                               std::memory_order order = std::memory_order_seq_cst,
                               Where where = Where::here()) noexcept {
        return compare_exchange(expected, desired, true, order, failure_order(order), where);
    }

    T fetch_add(T arg, std::memory_order order = std::memory_order_seq_cst,
                Where where = Where::here()) noexcept requires std::integral<T> &&
        (!std::same_as<T, bool>) {
        if (!detail::in_model_thread()) return real_.fetch_add(arg, order);
        return value(detail::atomic_rmw(this, "fetch_add", &add, bits(arg), order, where));
    }
    T fetch_sub(T arg, std::memory_order order = std::memory_order_seq_cst,
                Where where = Where::here()) noexcept requires std::integral<T> &&
        (!std::same_as<T, bool>) {
        if (!detail::in_model_thread()) return real_.fetch_sub(arg, order);
        return value(detail::atomic_rmw(this, "fetch_sub", &subtract, bits(arg), order, where));
    }

  private:
    static Bits bits(T v) noexcept {
        Bits b = 0;
        std::memcpy(&b, &v, sizeof(T));
        return b;
    }
    static T value(Bits b) noexcept {
        T v;
        std::memcpy(&v, &b, sizeof(T));
        return v;
    }
    // The failure order std::atomic derives from a single order.
    static constexpr std::memory_order failure_order(std::memory_order order) noexcept {
        if (order == std::memory_order_acq_rel) return std::memory_order_acquire;
        if (order == std::memory_order_release) return std::memory_order_relaxed;
        return order;
    }
    static Bits replace(Bits, Bits operand) noexcept { return operand; }
    // Integer arithmetic wraps, as std::atomic's does (also for signed T): done unsigned.
    static Bits add(Bits old, Bits operand) noexcept {
        using U = std::make_unsigned_t<T>;
        return bits(static_cast<T>(
            static_cast<U>(static_cast<U>(value(old)) + static_cast<U>(value(operand)))));
    }
    static Bits subtract(Bits old, Bits operand) noexcept {
        using U = std::make_unsigned_t<T>;
        return bits(static_cast<T>(
            static_cast<U>(static_cast<U>(value(old)) - static_cast<U>(value(operand)))));
    }
    static std::string format(Bits b) {
        const T v = value(b);
        if constexpr (std::is_same_v<T, bool>) {
            return v ? "true" : "false";
        } else if constexpr (std::is_integral_v<T>) {
            return std::to_string(v);
        } else if constexpr (std::is_enum_v<T>) {
            return std::to_string(static_cast<std::underlying_type_t<T>>(v));
        } else if constexpr (std::is_pointer_v<T>) {
            if (v == nullptr) return "null";
            char text[2 + 16 + 1];
            std::snprintf(text, sizeof text, "%p", static_cast<const void*>(v));
            return text;
        } else {
            char text[2 + 16 + 1];
            std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(b));
            return text;
        }
    }

    bool compare_exchange(T& expected, T desired, bool weak, std::memory_order success,
                          std::memory_order failure, const Where& where) noexcept {
        if (!detail::in_model_thread()) {
            return weak ? real_.compare_exchange_weak(expected, desired, success, failure)
                        : real_.compare_exchange_strong(expected, desired, success, failure);
        }
        Bits seen = bits(expected);
        const bool won = detail::atomic_compare_exchange(this, seen, bits(desired), weak, success,
                                                         failure, where);
        if (!won) expected = value(seen);
        return won;
    }

    std::atomic<T> real_;  // the value outside explore(); untouched by the model
};

}  // namespace ws::model
