// ws::FutexMutex: a mutex whose uncontended lock and unlock are one atomic instruction each,
// inline at the call site, and whose waiters sleep in the kernel (ws::futex_wait), not spin.
//
// It does what std::mutex does, with the same algorithm glibc's mutex uses (three states:
// unlocked, locked, locked with sleepers): the lock of the third mutex in U. Drepper's "Futexes
// Are Tricky", with glibc's exchange in unlock instead of the paper's decrement. It exists
// for one path: lesson 05's outside spawn into an idle pool, where the wake-up latency counts
// every instruction between spawn() and the woken worker's first instruction of the task.
// std::mutex is a call into the C library; after 300 ms of idleness the first call into a code
// page nobody touched lately costs about a microsecond on the book's virtual machines, and a
// spawn and the woken worker's take make four of them (lesson 05's chapter has the figures).
// Usable with std::lock_guard and std::unique_lock (BasicLockable). Not recursive.
#pragma once

#include <atomic>
#include <cstdint>

#include <ws/futex.hpp>

namespace ws {

// ANCHOR: futex_mutex
class FutexMutex {
  public:
    FutexMutex() noexcept = default;
    FutexMutex(const FutexMutex&) = delete;
    FutexMutex& operator=(const FutexMutex&) = delete;

    void lock() noexcept {
        std::uint32_t seen = kUnlocked;
        // acquire on success: pairs with unlock()'s release; what the last owner wrote under
        // the lock is visible to us. relaxed on failure: we only read the state to decide.
        if (state_.compare_exchange_strong(seen, kLocked, std::memory_order_acquire,
                                           std::memory_order_relaxed)) {
            return;
        }
        lock_contended(seen);
    }

    void unlock() noexcept {
        // release: pairs with the acquire of whichever RMW takes the lock next (lock()'s CAS or
        // an exchange in lock_contended()). If someone may sleep, wake one; it takes the lock
        // in the contended state, so the next unlock wakes the one after it.
        if (state_.exchange(kUnlocked, std::memory_order_release) == kLockedWithSleepers) {
            futex_wake(state_, 1);
        }
    }

  private:
    static constexpr std::uint32_t kUnlocked = 0;
    static constexpr std::uint32_t kLocked = 1;
    static constexpr std::uint32_t kLockedWithSleepers = 2;

    // Marks the lock as having sleepers, then sleeps until an exchange finds it unlocked. The
    // exchange that takes the lock also leaves it marked: we cannot know whether others still
    // sleep, so our unlock must wake one (at worst one system call too many, never a lost one).
    // Out of line and cold: the fast path in lock() stays two instructions at every call site.
    [[gnu::noinline, gnu::cold]] void lock_contended(std::uint32_t seen) noexcept {
        // acquire, on both exchanges: when one returns kUnlocked it takes the lock, and it pairs
        // with the release exchange of the unlock() that stored that kUnlocked.
        if (seen != kLockedWithSleepers)
            seen = state_.exchange(kLockedWithSleepers, std::memory_order_acquire);
        while (seen != kUnlocked) {
            futex_wait(state_, kLockedWithSleepers);  // returns at once if the word changed
            seen = state_.exchange(kLockedWithSleepers, std::memory_order_acquire);
        }
    }

    std::atomic<std::uint32_t> state_{kUnlocked};
};
// ANCHOR_END: futex_mutex

}  // namespace ws
