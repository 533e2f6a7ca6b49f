// Given code, carried from lesson 06's solution, unchanged.
// (./workshop sync writes this copy; edit the source lesson's file instead.)
// Lesson 05: parking idle workers.
//
// A worker with nothing to do should sleep (no CPU), wake promptly when work arrives, never
// sleep through a task that was published while it was deciding to sleep (a lost wake-up), and
// a spawn should not wake a crowd of workers for one task (a thundering herd).
//
// Parker: an event count — announce, recheck, sleep — whose spawner side is one load of a
// shared word while nobody sleeps, and which wakes only when nobody is already searching.
//
// The worker side:
//     if (!parker.park([&] { return stopping || has_work(); })) ...
// park() announces the intention to sleep, calls the recheck, and sleeps only if it says
// false. The spawner side: publish the task, then notify_one().
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include <ws/atomic.hpp>
#include <ws/futex.hpp>

namespace ws::lesson07 {

// ANCHOR: parker_class
// An event count with a count of searching workers.
//
// A worker is in one of three states, and Parker counts two of them in one atomic word:
//   working    running tasks from its own deque (not counted);
//   searching  out of local work, looking elsewhere: the global queue, other deques;
//   sleeping   announced in park(): from then on it is counted in `sleepers` until a waker
//              claims it (or it cancels), and it sleeps until it takes a wake token.
//
//   state_:  bit 32: stop  |  bits 16-31: searching  |  bits 0-15: sleepers
//   tokens_: wake tokens handed out by wakers and not yet taken (a futex word).
//
// Every operation on state_ and every publication of a task is seq_cst, so they all lie in one
// total order S; the proof that no wake-up is lost (lesson 05's solution walk-through in the
// guide) reasons in S.
class Parker {
  public:
    // Up to 65,535 workers (16-bit counts); more → std::length_error.
    explicit Parker(std::size_t num_workers) {
        if (num_workers > 0xffff) throw std::length_error("Parker: at most 65,535 workers");
    }

    // --- worker side ----------------------------------------------------------------------

    // The worker ran out of its own work and starts looking elsewhere.
    void begin_search() noexcept {
        // seq_cst: pairs with notify_one()'s load: if that comes first in S, the scan after this
        // sees its task (the proof's busy-workers case). Weaker would lose no wake-up, only time:
        // a scan that missed the task ends in park(), whose seq_cst announcement is after that
        // load in S too, so its recheck sees the task (the explorer's scenarios agree).
        state_.fetch_add(kSearcher, std::memory_order_seq_cst);
    }

    // A searching worker found a task. If it was the last searcher, nobody is
    // looking any more, and a spawn that saw it searching relied on it: if `more_work()` (the
    // same recheck as park()'s) still sees a task, wake one sleeper to take over the search
    // ("the last searcher to find work wakes another"). If it sees none, nobody needs waking:
    // a later spawn finds no searcher and wakes a sleeper itself.
    template <typename HasWork>
    void end_search(HasWork&& more_work) {
        // seq_cst: in S after the load of any spawner that saw us searching, so the recheck
        // below sees its task; without it that task could wait with nobody searching.
        const std::uint64_t prev = state_.fetch_sub(kSearcher, std::memory_order_seq_cst);
        if (searching(prev) == 1 && sleepers(prev) > 0 && more_work()) wake_one();
    }

    // Announce, recheck, sleep. `has_work()` must look at every queue a task can be published
    // to (with seq_cst loads) and at the pool's stop flag. Returns true if the worker slept;
    // either way it returns as a searcher: the caller looks for work again.
    template <typename HasWork>
    bool park(HasWork&& has_work);

    // --- spawner side ---------------------------------------------------------------------

    // After publishing a task (with a seq_cst store or RMW): wake one sleeper, unless somebody
    // is searching already or nobody sleeps. While nobody sleeps this is one load.
    void notify_one() noexcept {
        // seq_cst: pairs with park()'s announcement in S (store-load after our publication); as
        // acquire, it could miss the sleeper while the sleeper's recheck misses our task.
        const std::uint64_t s = state_.load(std::memory_order_seq_cst);
        if (searching(s) > 0 || sleepers(s) == 0) return;
        wake_one();
    }

    // Shutdown: wakes every sleeper, and from now on park() returns at once.
    void notify_all() noexcept;

    bool stopping() const noexcept {
        // seq_cst like every access to state_; its acquire half pairs with notify_all()'s CAS.
        return (state_.load(std::memory_order_seq_cst) & kStop) != 0;
    }

    // --- observation (statistics and tests) -----------------------------------------------
    // relaxed: snapshots; nothing is read on the strength of them.
    std::uint32_t sleepers() const noexcept {
        return sleepers(state_.load(std::memory_order_relaxed));
    }
    std::uint32_t searching() const noexcept {
        return searching(state_.load(std::memory_order_relaxed));
    }
    std::uint64_t parks() const noexcept { return parks_.load(std::memory_order_relaxed); }
    std::uint64_t wakeups() const noexcept { return wakeups_.load(std::memory_order_relaxed); }

  private:
    static constexpr std::uint64_t kSleeper = 1;
    static constexpr std::uint64_t kSearcher = std::uint64_t{1} << 16;
    static constexpr std::uint64_t kStop = std::uint64_t{1} << 32;

    static std::uint32_t sleepers(std::uint64_t s) noexcept {
        return static_cast<std::uint32_t>(s & 0xffff);
    }
    static std::uint32_t searching(std::uint64_t s) noexcept {
        return static_cast<std::uint32_t>((s >> 16) & 0xffff);
    }

    void wake_one() noexcept;
    void cancel() noexcept;
    void take_token() noexcept;
    void hand_tokens(std::uint32_t n) noexcept;

    // ws::atomic is std::atomic, except in the explorer's scenarios (tests/05_parking/model),
    // which see every access to these two and check the orders under the C++ memory model.
    alignas(64) ws::atomic<std::uint64_t> state_{0};
    alignas(64) ws::atomic<std::uint32_t> tokens_{0};
    alignas(64) std::atomic<std::uint64_t> parks_{0};
    std::atomic<std::uint64_t> wakeups_{0};
};
// ANCHOR_END: parker_class

// ANCHOR: park
// Announce, recheck, sleep. Why no wake-up is lost (a spawn either sees this announcement or is
// seen by the recheck): lesson 05's solution walk-through in the guide.
template <typename HasWork>
bool Parker::park(HasWork&& has_work) {
    // Announce: one RMW moves us from searching to sleeping and tells us whether shutdown began.
    // seq_cst: pairs with notify_one()'s load in S (store-load before the recheck); without it
    // both could miss: a lost wake-up.
    const std::uint64_t prev = state_.fetch_add(kSleeper - kSearcher, std::memory_order_seq_cst);
    if ((prev & kStop) != 0 || has_work()) {
        cancel();
        return false;
    }
    parks_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
    take_token();
    wakeups_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
    return true;
}
// ANCHOR_END: park

// ANCHOR: wake
// Claims one sleeper (moving it to searching on its behalf) and hands it a token. Who takes the
// token does not matter: any announced sleeper will, and the counts stay right because every
// announced sleeper leaves `sleepers` exactly once, by being claimed or by cancel().
inline void Parker::wake_one() noexcept {
    // seq_cst like every access to state_ (any order would do: it reads the caller's value or
    // a later one). The CAS decides.
    std::uint64_t s = state_.load(std::memory_order_seq_cst);
    while (sleepers(s) > 0 && searching(s) == 0) {
        // seq_cst like every access to state_; atomicity claims the sleeper. Failure: seq_cst
        // too, as the load above (the reloaded value decides again).
        if (state_.compare_exchange_weak(s, s - kSleeper + kSearcher, std::memory_order_seq_cst)) {
            hand_tokens(1);
            return;
        }
    }
}

// The recheck found work (or shutdown began): undo the announcement.
inline void Parker::cancel() noexcept {
    // seq_cst like every access to state_ (any order would do: it reads our announcement or a
    // later value).
    std::uint64_t s = state_.load(std::memory_order_seq_cst);
    for (;;) {
        if (sleepers(s) == 0) {
            // Every announced sleeper has been claimed, us included: a waker moved "us" to
            // searching and handed a token, which is ours to take (it is there or on its way).
            take_token();
            return;
        }
        // seq_cst like every access to state_; its atomicity is what matters.
        if (state_.compare_exchange_weak(s, s - kSleeper + kSearcher, std::memory_order_seq_cst))
            return;
    }
}

inline void Parker::take_token() noexcept {
    // relaxed: only a hint for the CAS below, which decides.
    std::uint32_t t = tokens_.load(std::memory_order_relaxed);
    for (;;) {
        if (t == 0) {
            // Sleeps while tokens_ is 0 (no CPU), or returns at once if a token came meanwhile.
            // The private futex directly, not std::atomic::wait, which in libstdc++ spins and
            // yields first and uses the process-shared futex (lesson 05's chapter, "The wake
            // path"). The reload is relaxed: the CAS below is the acquire that matters; a stale
            // value only sends us round the loop.
            ws::futex_wait(tokens_, 0);
            t = tokens_.load(std::memory_order_relaxed);
            continue;
        }
        // acquire: pairs with the release in hand_tokens(): we see what the waker did before
        // (a task, the stop flag), so the first scan after waking finds them. Relaxed would lose
        // no wake-up: a scan that missed them ends in park() again, whose seq_cst announcement
        // comes after the waker's claim in S, so its recheck sees them.
        if (tokens_.compare_exchange_weak(t, t - 1, std::memory_order_acquire,
                                          std::memory_order_relaxed))
            return;
    }
}

inline void Parker::hand_tokens(std::uint32_t n) noexcept {
    // release: pairs with the acquire CAS in take_token(), so that the woken worker's first
    // scan sees what we published before waking it (else only its next park()'s recheck would).
    tokens_.fetch_add(n, std::memory_order_release);
    // One FUTEX_WAKE for n threads: one token, one thread woken (no herd). A sleeper that has
    // not reached the kernel yet finds tokens_ changed and does not sleep.
    ws::futex_wake(tokens_, n);
}
// ANCHOR_END: wake

// ANCHOR: notify_all
inline void Parker::notify_all() noexcept {
    // seq_cst like every access to state_; the CAS below decides.
    std::uint64_t s = state_.load(std::memory_order_seq_cst);
    // One CAS sets the stop bit and claims every sleeper, so no announcement can slip between
    // the two: a worker that announces later sees kStop in its RMW and does not sleep. seq_cst
    // like every access to state_ (its atomicity is what matters).
    while (!state_.compare_exchange_weak(
        s, (s | kStop) - sleepers(s) * kSleeper + sleepers(s) * kSearcher,
        std::memory_order_seq_cst)) {
    }
    if (sleepers(s) > 0) hand_tokens(sleepers(s));
}
// ANCHOR_END: notify_all

}  // namespace ws::lesson07
