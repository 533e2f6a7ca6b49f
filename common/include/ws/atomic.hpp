// ws::atomic<T>: the atomic type of the lock-free structures (the Chase-Lev deque, the injector).
//
// In every normal build it is exactly std::atomic<T>: an alias, no wrapper, no cost. Built with
// WS_MODEL_CHECK defined (the explorer's tests: link ws_model, which defines it), it is
// ws::model::Atomic<T> instead, the same member functions with the same memory_order arguments,
// but every operation is a scheduling point of the interleaving explorer and reads or writes a
// model of the C++ memory model rather than the hardware. That is how a memory order that is
// too weak fails the explorer's tests on any machine, where x86 and ThreadSanitizer hide it.
// (Rust's loom swaps its atomics in the same way, with a cfg switch.)
//
// Write it exactly as std::atomic<T>: ws::atomic<std::int64_t> top_{0};
// top_.load(std::memory_order_acquire). Standalone fences are not modelled (the structures use
// none); see <ws/model/explore.hpp> for what the model covers.
#pragma once

#include <atomic>

#if defined(WS_MODEL_CHECK)
#include <ws/model/atomic.hpp>
#endif

namespace ws {

#if defined(WS_MODEL_CHECK)
template <typename T>
using atomic = ws::model::Atomic<T>;
#else
template <typename T>
using atomic = std::atomic<T>;
#endif

}  // namespace ws
