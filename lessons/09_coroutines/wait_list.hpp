// Lesson 09: the state word of an Event — "not set", "set", or the list of coroutines waiting
// for it — in one atomic, so that a waiter's check and its enqueueing are one step that a set()
// cannot slip between. No coroutine or pool in here: the interleaving explorer checks it alone
// (tests/09_coroutines/model).
#pragma once

#include <atomic>
#include <cstdint>

#include <ws/atomic.hpp>
#include <ws/not_implemented.hpp>

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
        // TODO(exercise 4): add `waiter` to the list in state_ unless the list is set.
        // Rule: the check ("is it set?") and the enqueue must be one atomic step: a set() that
        // runs between them would take the list without this waiter and nobody would ever wake
        // it. Say which operation each memory order pairs with. Checked by
        // Lesson09Ex4.ASetBetweenTheCheckAndTheSuspensionIsNotLost and the explorer tests.
        (void)waiter;
        throw ws::NotImplemented{"lesson 09, exercise 4: WaitList::try_add"};
    }

    // Marks the list set and returns the waiters added before (newest first, linked by next),
    // each to be woken once; later calls return nullptr.
    Waiter* set() {
        // TODO(exercise 4): mark the list set and take the waiters, in one atomic step.
        // Rule: a waiter that sees "set" (is_set, or try_add refused) sees what the setter did
        // before set(), and the setter sees what each waiter it takes stored before try_add
        // (its next, its coroutine handle). Say which memory order gives each, and which
        // operation it pairs with. Checked by Lesson09Ex4 and the explorer tests.
        throw ws::NotImplemented{"lesson 09, exercise 4: WaitList::set"};
    }

  private:
    static constexpr std::uintptr_t kEmpty = 0;  // not set, nobody waits
    static constexpr std::uintptr_t kSet = 1;    // set (no Waiter lives at address 1)
    ws::atomic<std::uintptr_t> state_{kEmpty};   // kEmpty, kSet, or the newest Waiter*
};
// ANCHOR_END: wait_list

}  // namespace ws::lesson09
