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

#include <ws/not_implemented.hpp>

namespace ws::lesson05 {

// Exercises 2-4: an event count with a count of searching workers.
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
// total order S; the proof of "no lost wake-up" (park()) reasons in S.
class Parker {
  public:
    // Up to 65,535 workers (16-bit counts); more → std::length_error.
    explicit Parker(std::size_t num_workers) : num_workers_(num_workers) {
        if (num_workers > 0xffff) throw std::length_error("Parker: at most 65,535 workers");
    }

    // --- worker side ----------------------------------------------------------------------

    // The worker ran out of its own work and starts looking elsewhere (exercise 3).
    void begin_search() noexcept {
        // TODO(exercise 3): from now until it finds work or parks, this worker counts in
        // searching(). Rule: seq_cst, like every access to state_: a spawn that sees this
        // searcher wakes nobody and relies on this search to see its task. Checked by
        // Lesson05Ex3. As given, nobody is ever counted as searching.
    }

    // A searching worker found a task (exercise 3). If it was the last searcher, nobody is
    // looking any more, and a spawn that saw it searching relied on it: if `more_work()` (the
    // same recheck as park()'s) still sees a task, wake one sleeper to take over the search
    // ("the last searcher to find work wakes another"). If it sees none, nobody needs waking:
    // a later spawn finds no searcher and wakes a sleeper itself.
    template <typename HasWork>
    void end_search(HasWork&& more_work) {
        // TODO(exercise 3): this worker no longer counts as searching; the last searcher to
        // find work hands the search over to a sleeper while more_work() still sees a task,
        // and wakes nobody for no work. Rule: whether it was the last is known only from the
        // step that takes it out of the count, and more_work() must look after that step: a
        // spawn that saw this worker searching woke nobody. Checked by Lesson05Ex3.
        (void)more_work;
    }

    // Announce, recheck, sleep. `has_work()` must look at every queue a task can be published
    // to (with seq_cst loads) and at the pool's stop flag. Returns true if the worker slept;
    // either way it returns as a searcher: the caller looks for work again.
    template <typename HasWork>
    bool park(HasWork&& has_work);

    // --- spawner side ---------------------------------------------------------------------

    // After publishing a task (with a seq_cst store or RMW): wake one sleeper, unless somebody
    // is searching already (exercise 3) or nobody sleeps. While nobody sleeps this is one load.
    void notify_one() noexcept {
        // TODO(exercise 2): if someone sleeps, one sleeper wakes; while nobody sleeps the
        // spawner pays one load, no lock and no system call. Rule: either this sees a sleeper's
        // announcement or that sleeper's recheck sees the task published before this call, and
        // only seq_cst on both sides guarantees one of the two. Checked by Lesson05Ex2.
        // TODO(exercise 3): nobody is woken while somebody is searching: that searcher will find
        // the task. Rule: searchers and sleepers are read from one value of state_, and it is
        // still one load while nobody sleeps. Checked by Lesson05Ex3.
        // As given, it wakes nobody.
    }

    // Shutdown (exercise 4): wakes every sleeper, and from now on park() returns at once.
    void notify_all() noexcept;

    bool stopping() const noexcept {
        // seq_cst: like every access to state_ (and cheap: a load).
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

    std::size_t num_workers_;  // only for the stand-in notify_all() of the starter code
    // ws::atomic is std::atomic, except in the explorer's scenarios (tests/05_parking/model),
    // which see every access to these two and check the orders under the C++ memory model.
    alignas(64) ws::atomic<std::uint64_t> state_{0};
    alignas(64) ws::atomic<std::uint32_t> tokens_{0};
    alignas(64) std::atomic<std::uint64_t> parks_{0};
    std::atomic<std::uint64_t> wakeups_{0};
};

template <typename HasWork>
bool Parker::park(HasWork&& has_work) {
    // TODO(exercise 2): returns false, without sleeping and without leaving an announcement
    // behind, when has_work() sees work; otherwise sleeps without using the CPU until a waker
    // hands it a token, and returns true; parks() and wakeups() count the sleeps. Rule:
    // announce, then recheck, then sleep, never in another order; and every announcement
    // leaves sleepers exactly once, claimed by a waker or taken back. Checked by Lesson05Ex2.
    // TODO(exercise 3): a worker that parks stops counting as searching when it becomes a
    // sleeper. Rule: at the very same moment: a spawn that saw it as neither would wake nobody
    // while nobody searches. Checked by Lesson05Ex3.
    // TODO(exercise 4): once notify_all() has begun, park() never sleeps: it returns false.
    // Rule: a look at the stop flag before the announcement is too early: notify_all may run in
    // between, find no sleeper to claim, and this worker would then sleep for good. Checked by
    // Lesson05Ex4.
    (void)has_work;
    throw NotImplemented("lesson 05, exercise 2: Parker::park");
}

inline void Parker::wake_one() noexcept {
    // TODO(exercise 2): exactly one announced sleeper is claimed and gets a wake token, even
    // if it has not reached its sleep yet; with nobody asleep nothing happens and nothing is
    // kept for later. Rule: two wakers never claim the same sleeper. Checked by Lesson05Ex2.
    // TODO(exercise 3): the worker woken here counts as searching, and nobody is woken while
    // somebody searches. Rule: it counts from the moment it is claimed, not from when its thread
    // gets to run: until then every spawn would see nobody searching and wake one more sleeper.
    // Checked by Lesson05Ex3.
}

inline void Parker::cancel() noexcept {
    // TODO(exercise 2): afterwards it is as if this worker had never announced. Rule: a waker
    // may have claimed this announcement already, and its token must not be left behind to
    // wake a later, unrelated park(). Checked by Lesson05Ex2.
    // TODO(exercise 3): a cancelled park leaves the worker searching again. Rule: whichever way
    // the cancel goes (the announcement taken back, or already claimed by a waker, which counted
    // this worker as searching for it), it counts as one searcher, once. Checked by
    // Lesson05Ex3.
}

inline void Parker::take_token() noexcept {
    // relaxed: only a hint for the CAS below, which decides.
    std::uint32_t t = tokens_.load(std::memory_order_relaxed);
    for (;;) {
        if (t == 0) {
            // Sleeps while tokens_ is 0 (no CPU), or returns at once if a token came meanwhile.
            // The private futex directly, not std::atomic::wait: libstdc++'s wait spins and
            // yields first and uses the process-shared futex, which cost a wake-up about 2.5 us
            // (lesson 05's chapter). The reload is relaxed: the CAS below is the acquire that
            // matters; a stale value only sends us round the loop.
            ws::futex_wait(tokens_, 0);
            t = tokens_.load(std::memory_order_relaxed);
            continue;
        }
        // acquire: pairs with the release in hand_tokens(): whatever the waker did before
        // waking us (publishing a task, setting stop) is visible to us.
        if (tokens_.compare_exchange_weak(t, t - 1, std::memory_order_acquire,
                                          std::memory_order_relaxed))
            return;
    }
}

inline void Parker::hand_tokens(std::uint32_t n) noexcept {
    // release: pairs with the acquire CAS in take_token().
    tokens_.fetch_add(n, std::memory_order_release);
    // One FUTEX_WAKE for n threads: one token, one thread woken (no herd). A sleeper that has
    // not reached the kernel yet finds tokens_ changed and does not sleep.
    ws::futex_wake(tokens_, n);
}

inline void Parker::notify_all() noexcept {
    // TODO(exercise 4): afterwards stopping() is true, every worker asleep has been woken
    // (and counts as searching), and no later park() sleeps. Rule: a worker that announces
    // while the shutdown is under way must be woken by it or see it: no moment in between.
    // Checked by Lesson05Ex4.
    // As given, it hands one token to each worker without claiming anyone: the sleepers of this
    // moment wake up, but the counts go wrong, stopping() stays false, and once the tokens are
    // used up a later park() sleeps.
    hand_tokens(static_cast<std::uint32_t>(num_workers_));
}

}  // namespace ws::lesson05
