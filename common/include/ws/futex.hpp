// ws::futex_wait / ws::futex_wake: sleep on a 32-bit atomic word, and wake its sleepers, with
// the operating system's primitive directly (Linux: the private futex operations).
//
// std::atomic<T>::wait/notify do the same job portably; the parkers of lessons 05-07 sleep on
// their token word with these calls instead, and so do ws::FutexMutex's waiters. libstdc++ 12's
// wait first spins (12 pauses, then 4 sched_yield calls), every wait and notify also updates or
// reads a waiter count in a table shared by the whole process, and it uses the process-shared
// futex operations (the kernel then looks up the page behind the word). None of that is wrong,
// but on the way from "a task was spawned into an idle pool" to "a worker runs it" it cost
// about 2.5 us of the 20 or so (lesson 05's chapter has the measurements).
//
// Neither call orders memory: the word's own atomic operations do that (the waker changes the
// word, then wakes; the sleeper rereads it after waking). A wake-up may also be spurious, so a
// waiter always rechecks its condition in a loop.
//
// In the explorer's build (WS_MODEL_CHECK, <ws/atomic.hpp>) a word declared ws::atomic is a
// ws::model::Atomic, and the overloads at the end of this file take it: there a wait returns at
// once and a wake does nothing (below).
#pragma once

#include <atomic>
#include <cstdint>

#if defined(WS_MODEL_CHECK)
#include <ws/model/atomic.hpp>
#endif

namespace ws {

// Sleeps while `word` holds `expected` (returns at once if it does not), until a futex_wake,
// or spuriously.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept;

// Wakes up to `count` threads sleeping in futex_wait on `word`.
void futex_wake(std::atomic<std::uint32_t>& word, std::uint32_t count) noexcept;

#if defined(WS_MODEL_CHECK)
// The futex on a ws::atomic word, as the interleaving explorer sees it (<ws/model/explore.hpp>).
// The explorer runs one thread at a time and cannot see a thread blocked in the kernel (one
// that blocked would stop the whole exploration), so a wait returns at once, which a real
// futex_wait may always do (spuriously). The caller's loop then rereads the word, and the
// explorer takes a thread that rereads a value it has already read, without writing in between,
// to be waiting until another thread writes it; if none ever does, the execution fails as a
// livelock ("every thread waits for another"), which is how a lost wake-up shows. No thread is
// ever blocked, so a wake does nothing. Neither call is an operation of the model: a futex orders
// nothing (above); the word's own atomic operations, which the model sees, are what there is to
// check. Outside explore() (a thread of a model build that the explorer does not run) a wait
// returns at once too, so the caller's loop spins instead of sleeping.
inline void futex_wait(ws::model::Atomic<std::uint32_t>&, std::uint32_t) noexcept {}
inline void futex_wake(ws::model::Atomic<std::uint32_t>&, std::uint32_t) noexcept {}
#endif

}  // namespace ws
