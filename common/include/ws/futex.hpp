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
#pragma once

#include <atomic>
#include <cstdint>

namespace ws {

// Sleeps while `word` holds `expected` (returns at once if it does not), until a futex_wake,
// or spuriously.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept;

// Wakes up to `count` threads sleeping in futex_wait on `word`.
void futex_wake(std::atomic<std::uint32_t>& word, std::uint32_t count) noexcept;

}  // namespace ws
