// Stopping a thread right after it writes (or reads) a given address: a hardware watchpoint.
//
// Some interleavings need a thread held at one exact instruction with no code of the test's own
// there to wait in: between a deque's push (its store of bottom) and the next statement, say,
// where the deque holds plain pointers and calls nothing. A WriteWatch arms a watchpoint on an
// address for the calling thread only (perf_event_open with PERF_TYPE_BREAKPOINT and
// HW_BREAKPOINT_W: the CPU's debug registers, 4 on x86). After each write by that thread to the
// watched bytes the kernel sends it a synchronous SIGTRAP (`sigtrap`, Linux 5.13 and later), and
// its handler calls on_write(context) in the writing thread, after the write and before the
// next instruction: on_write may wait there, the store already visible to other threads, until
// the test has let them act.
//
// Reads too: a watch made with WatchAccess::reads_and_writes reports every access of the calling
// thread, loads included (HW_BREAKPOINT_RW; x86's debug registers have no read-only watch), so a
// test can hold a thread right after it *read* a value: after wait_idle's check of a counter
// under a mutex, say, with the mutex still held, while another thread changes the counter. Such
// a thread may read the watched bytes more than once: its on_write should hold only at the access
// the test means (the first, when nothing else of that thread touches them first). on_write
// should not touch the watched bytes itself: that access traps too (SIGTRAP is blocked while
// on_write runs, so the signal comes after it returns).
//
// on_write runs in a signal handler: it must be async-signal-safe. Only lock-free atomics
// (std::atomic<bool>, <int>, <pointer>), wait_for_flag() below, and nothing that allocates,
// locks (no mutex, no std::cout, no gtest assertion) or reads /proc. Writes by other threads do
// not trigger it, nor does the kernel writing on the thread's behalf (exclude_kernel).
//
// Requirements, which available() and why_unavailable() report, so that a test can skip
// saying which one is missing: Linux 5.13 or later (sigtrap; older kernels reject the attribute:
// EINVAL), perf events allowed to an unprivileged process for its own threads
// (/proc/sys/kernel/perf_event_paranoid at most 2; containers often forbid perf_event_open with
// seccomp: EPERM or EACCES, ENOSYS), and a free debug register (ENOSPC, e.g. under a debugger
// that uses them). SIGTRAP gets a handler of this file's, installed once and never removed; a
// SIGTRAP that is not a watchpoint of a live WriteWatch of that thread is ignored.
//
// Not under ThreadSanitizer: available() is false there. TSan performs an atomic store inside
// its runtime, holding its own locks (the thread's slot, and for a release store the lock of
// the address's sync object), so a thread held right after the store would still hold them: the
// handler's own atomics deadlock on the slot (seen: __tsan::SlotLock), and any thread that loads
// the watched atomic with acquire waits for the held one. AddressSanitizer is fine.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#if defined(__linux__)
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>
#endif

#if defined(__SANITIZE_THREAD__)
#define WS_WRITE_WATCH_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WS_WRITE_WATCH_UNDER_TSAN 1
#endif
#endif

namespace ws::testing {

// Which accesses of the calling thread a WriteWatch reports (see above).
enum class WatchAccess {
    writes,            // stores and read-modify-writes (HW_BREAKPOINT_W)
    reads_and_writes,  // loads too (HW_BREAKPOINT_RW)
};

// Waits until `flag` is true or `timeout` has passed; returns the flag. Async-signal-safe (a
// lock-free atomic, clock_gettime and nanosleep, both async-signal-safe by POSIX): meant for a
// WriteWatch's on_write, which holds the writing thread until the test lets it go on.
inline bool wait_for_flag(const std::atomic<bool>& flag, std::chrono::nanoseconds timeout) noexcept;

class WriteWatch {
  public:
    using OnWrite = void (*)(void* context) noexcept;

    // Arms a watchpoint on the `length` bytes at `address` (1, 2, 4 or 8, aligned to it) for the
    // calling thread; on_write(context) runs in that thread after each of its writes there (and
    // its reads, with WatchAccess::reads_and_writes). At most one WriteWatch per address and
    // thread; several per thread (up to the debug registers).
    WriteWatch(const volatile void* address, std::size_t length, OnWrite on_write, void* context,
               WatchAccess access = WatchAccess::writes);
    // Disarms it. On the thread that armed it (it is the thread's watchpoint).
    ~WriteWatch();
    WriteWatch(const WriteWatch&) = delete;
    WriteWatch& operator=(const WriteWatch&) = delete;

    // Whether the watchpoint is armed; if not, why (which requirement above is missing).
    bool available() const noexcept { return fd_ >= 0; }
    const std::string& why_unavailable() const noexcept { return why_; }

  private:
    int fd_ = -1;
    std::string why_;
    OnWrite on_write_ = nullptr;
    void* context_ = nullptr;
    WriteWatch* next_ = nullptr;  // the thread's other live watches
#if defined(__linux__)
    static inline thread_local std::atomic<WriteWatch*> armed_{nullptr};  // this thread's watches

    static void on_sigtrap(int, siginfo_t* info, void*) {
        constexpr int kTrapPerf = 6;  // TRAP_PERF (asm-generic/siginfo.h): a perf event's sigtrap
        if (info->si_code != kTrapPerf) return;
        // Every watch of this thread is told: the handler cannot tell which address fired
        // without si_perf_data, which glibc's siginfo_t does not name. A test arms one watch per
        // address it cares about, and its on_write looks at what it needs to.
        for (WriteWatch* w = armed_.load(std::memory_order_relaxed); w != nullptr; w = w->next_)
            w->on_write_(w->context_);
    }

    static bool install_handler(std::string& why) {
        static const int result = [] {  // once per process; the handler stays
            struct sigaction action {};
            action.sa_sigaction = &WriteWatch::on_sigtrap;
            action.sa_flags = SA_SIGINFO | SA_RESTART;
            sigemptyset(&action.sa_mask);
            return sigaction(SIGTRAP, &action, nullptr) == 0 ? 0 : errno;
        }();
        if (result != 0) why = std::string("sigaction(SIGTRAP) failed: ") + std::strerror(result);
        return result == 0;
    }
#endif
};

#if defined(__linux__)
inline bool wait_for_flag(const std::atomic<bool>& flag,
                          std::chrono::nanoseconds timeout) noexcept {
    static_assert(std::atomic<bool>::is_always_lock_free,
                  "a signal handler needs a lock-free flag");
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const std::int64_t deadline =
        std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec + timeout.count();
    // acquire: pairs with the release store of whoever sets the flag, so that what it did
    // before is visible here once the flag is seen.
    while (!flag.load(std::memory_order_acquire)) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec > deadline)
            return flag.load(std::memory_order_acquire);
        const timespec pause{0, 50'000};  // 50 us: asleep, so it leaves the CPU to the others
        nanosleep(&pause, nullptr);
    }
    return true;
}

inline WriteWatch::WriteWatch(const volatile void* address, std::size_t length, OnWrite on_write,
                              void* context, WatchAccess access)
    : on_write_(on_write), context_(context) {
#if defined(WS_WRITE_WATCH_UNDER_TSAN)
    (void)address;
    (void)length;
    (void)access;
    why_ =
        "not under ThreadSanitizer: it stores an atomic inside its runtime, under locks of its "
        "own, so a thread held right after the store would hold them (see write_watch.hpp)";
    return;
#endif
    if (!install_handler(why_)) return;
    perf_event_attr attr{};
    attr.type = PERF_TYPE_BREAKPOINT;
    attr.size = sizeof(attr);
    attr.bp_type = access == WatchAccess::writes ? HW_BREAKPOINT_W : HW_BREAKPOINT_RW;
    attr.bp_addr = reinterpret_cast<std::uintptr_t>(address);
    attr.bp_len = length == 1   ? HW_BREAKPOINT_LEN_1
                  : length == 2 ? HW_BREAKPOINT_LEN_2
                  : length == 4 ? HW_BREAKPOINT_LEN_4
                                : HW_BREAKPOINT_LEN_8;
    attr.sample_period = 1;  // every access
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.sigtrap = 1;         // a synchronous SIGTRAP to the writing thread
    attr.remove_on_exec = 1;  // the kernel requires it with sigtrap
    // pid 0, cpu -1: the calling thread only, on any CPU.
    const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        why_ = std::string("perf_event_open (a hardware ") +
               (access == WatchAccess::writes ? "write" : "read/write") +
               " watchpoint) failed: " + std::strerror(error);
        if (error == EACCES || error == EPERM)
            why_ +=
                " (perf events not allowed here: /proc/sys/kernel/perf_event_paranoid above "
                "2, or a container's seccomp filter)";
        else if (error == EINVAL || error == ENOENT || error == E2BIG)
            why_ += " (needs Linux 5.13 or later for sigtrap, and hardware breakpoints)";
        else if (error == ENOSYS)
            why_ += " (no perf_event_open: kernel without perf events, or seccomp)";
        else if (error == ENOSPC)
            why_ += " (no free debug register: a debugger uses them?)";
        return;
    }
    fd_ = static_cast<int>(fd);
    // Linked in after the event exists, before any write it could report: relaxed, only this
    // thread (and its own signal handler, which it interrupts) reads the list.
    next_ = armed_.load(std::memory_order_relaxed);
    armed_.store(this, std::memory_order_relaxed);
}

inline WriteWatch::~WriteWatch() {
    if (fd_ < 0) return;
    close(fd_);  // no more SIGTRAPs from it: the event is gone
    // Unlinked only after: a SIGTRAP of a write just before still finds us.
    WriteWatch* prev = nullptr;
    for (WriteWatch* w = armed_.load(std::memory_order_relaxed); w != nullptr;
         prev = w, w = w->next_) {
        if (w != this) continue;
        if (prev == nullptr)
            armed_.store(next_, std::memory_order_relaxed);
        else
            prev->next_ = next_;
        break;
    }
}
#else
inline bool wait_for_flag(const std::atomic<bool>& flag, std::chrono::nanoseconds) noexcept {
    return flag.load(std::memory_order_acquire);
}
inline WriteWatch::WriteWatch(const volatile void*, std::size_t, OnWrite on_write, void* context,
                              WatchAccess)
    : why_("needs Linux (perf_event_open)"), on_write_(on_write), context_(context) {}
inline WriteWatch::~WriteWatch() = default;
#endif

}  // namespace ws::testing
