// What ws::model::Atomic<T> calls: the explorer's entry points, on values erased to 64 bits so
// that one compiled runtime serves every T.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace ws::model::detail {

using Bits = std::uint64_t;                      // a T's object representation, zero-extended
using Format = std::string (*)(Bits);            // how the trace prints a T
using Apply = Bits (*)(Bits old, Bits operand);  // the "modify" of a read-modify-write

// Where an operation was called from, for the trace. The defaults are evaluated at the call
// site of the function whose default argument calls here() (g++ and clang both do this for
// these builtins), so Atomic<T>::load(order, Where = Where::here()) records its caller.
struct Where {
    const char* file = "";
    int line = 0;
    const char* function = "";

    static constexpr Where here(const char* file = __builtin_FILE(), int line = __builtin_LINE(),
                                const char* function = __builtin_FUNCTION()) noexcept {
        return {file, line, function};
    }
};

// True on a thread the explorer runs (inside explore()); elsewhere Atomic<T> is a std::atomic.
bool in_model_thread() noexcept;

// Never throw and never return to the caller on a failure that makes going on unsafe (a use
// after free, a livelock): the thread then waits forever, and explore() reports the failure.
void atomic_created(const void* atomic, Bits initial, Format format, const Where& where) noexcept;
void atomic_destroyed(const void* atomic) noexcept;
Bits atomic_load(const void* atomic, std::memory_order order, const Where& where) noexcept;
void atomic_store(const void* atomic, Bits value, std::memory_order order,
                  const Where& where) noexcept;
Bits atomic_rmw(const void* atomic, const char* name, Apply apply, Bits operand,
                std::memory_order order, const Where& where) noexcept;
bool atomic_compare_exchange(const void* atomic, Bits& expected, Bits desired, bool weak,
                             std::memory_order success, std::memory_order failure,
                             const Where& where) noexcept;

}  // namespace ws::model::detail
