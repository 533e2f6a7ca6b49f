// Lesson 09: the state word of an Event — "not set", "set", or the list of coroutines waiting
// for it — in one atomic, so that a waiter's check and its enqueueing are one step that a set()
// cannot slip between. No coroutine or pool in here: the interleaving explorer checks it alone
// (tests/09_coroutines/model).
#pragma once

#include <atomic>
#include <cstdint>

#include <ws/atomic.hpp>

namespace ws::lesson09 {

// ANCHOR: wait_list
class WaitList {
  public:
    // A waiter lives in the awaiting coroutine's frame (the Event's awaiter derives from it);
    // it must stay alive until set() has handed it back.
    struct Waiter {
        Waiter* next = nullptr;
    };

    bool is_set() const noexcept {
        // Pairs with set()'s exchange: a waiter that sees "set" sees what was done before set().
        return state_.load(std::memory_order_acquire) == kSet;
    }

    // Adds `waiter` unless the list is already set. True: added, the caller may suspend and
    // set() will hand the waiter back exactly once. False: already set, do not suspend.
    bool try_add(Waiter* waiter) {
        std::uintptr_t old = state_.load(std::memory_order_acquire);
        do {
            if (old == kSet) return false;
            waiter->next = reinterpret_cast<Waiter*>(old);
            // Release pairs with set()'s exchange: the waker then sees waiter->next and what
            // the awaiter stored before (its coroutine handle). If set() came first, the
            // compare fails, `old` becomes kSet and we return false: the check and the enqueue
            // are one atomic step, so no set() falls between them (the lost wake-up). The failure
            // order is acquire, as is_set's load (and the first load above): a refused waiter
            // goes on at once, so it must see what the setter did before set() (pairs with
            // set()'s release half).
        } while (!state_.compare_exchange_weak(old, reinterpret_cast<std::uintptr_t>(waiter),
                                               std::memory_order_release,
                                               std::memory_order_acquire));
        return true;
    }

    // Marks the list set and returns the waiters added before (newest first, linked by next),
    // each to be woken once; later calls return nullptr.
    Waiter* set() {
        // acq_rel: acquire pairs with try_add's release (the waiters' fields); release with
        // is_set's and try_add's acquire.
        const std::uintptr_t old = state_.exchange(kSet, std::memory_order_acq_rel);
        return old == kSet ? nullptr : reinterpret_cast<Waiter*>(old);
    }

  private:
    static constexpr std::uintptr_t kEmpty = 0;  // not set, nobody waits
    static constexpr std::uintptr_t kSet = 1;    // set (no Waiter lives at address 1)
    ws::atomic<std::uintptr_t> state_{kEmpty};   // kEmpty, kSet, or the newest Waiter*
};
// ANCHOR_END: wait_list

}  // namespace ws::lesson09
