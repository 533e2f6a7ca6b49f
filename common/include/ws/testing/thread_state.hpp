// Watching and steering the threads of this process from a test, to force an interleaving
// instead of waiting for luck to show it (Linux; elsewhere kCanSteerThreads is false and the
// functions do nothing, so a test that needs them should skip).
//
// Watching. thread_ids() lists the process's threads (/proc/self/task), so a test can tell a
// pool's workers apart as the threads its constructor added (new_threads). asleep(tid) says
// whether a thread is blocked in the kernel (state 'S': on a condition variable, a mutex, in a
// sleep); wait_until_asleep() waits until some threads have been asleep at every poll for a
// while, long enough to be sure that they wait for something and are not just passing through a
// lock: two callers of wait_idle asleep before the last task finishes, the workers asleep before
// a spawn. blocked_on_futex(tid) tells a thread blocked on a mutex or a condition variable from
// one in sleep_for, and futex_word_of(tid) says which word it waits on (whose mutex, whose
// condition variable); sleeps_so_far(tid) counts its sleeps, so a test can see one begin, and
// still_asleep_since(tid, count) whether anything woke it since.
// run_delay(tid) is how long it has waited, runnable, for a CPU: on a loaded machine, the part
// of a wall-clock interval that the machine is answerable for (<ws/testing/latency.hpp>).
//
// Steering. Some interleavings need a thread to stop at one exact place, between two lock
// operations say, with no code of the test's own there to wait in. pin_to_cpu() puts threads on
// one CPU and make_idle_priority() gives one of them SCHED_IDLE: from then on, whenever that
// thread wakes another thread on its CPU, the scheduler switches to the woken thread at once (a
// woken normal thread always preempts a SCHED_IDLE one), so "the thread it wakes runs before it
// goes on" holds every time. Neither needs privileges (a thread may lower its own priority and
// the scheduling of its own process's threads), but SCHED_IDLE cannot be undone without
// CAP_SYS_NICE: use it only on threads that end with the test (a pool's workers, a helper). On a
// loaded machine a SCHED_IDLE thread gets little CPU time: give the test generous timeouts. And
// there the scheduler (EEVDF, Linux 6.6 and later) picks by deadline, not only by policy: a
// thread that was owed CPU time when it became SCHED_IDLE may still run on before the thread it
// woke. A thread born SCHED_IDLE (it inherits the policy and the CPU of the thread that creates
// it) is owed nothing, and request_short_slice() gives the thread to be woken an earlier
// deadline; even so, beside one busy process per core a forced interleaving can fail to happen
// now and then, so a test that relies on it should try a few times; a SpinnerOnCpu on that CPU
// meanwhile keeps the SCHED_IDLE thread from running while the woken one waits for its turn.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <dirent.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#endif

namespace ws::testing {

#if defined(__linux__)
inline constexpr bool kCanSteerThreads = true;
using ThreadId = pid_t;

// The kernel's id of the calling thread (what /proc/self/task lists).
inline ThreadId current_thread_id() {
    return static_cast<ThreadId>(syscall(SYS_gettid));
}

// Every thread of this process, in increasing order.
inline std::vector<ThreadId> thread_ids() {
    std::vector<ThreadId> ids;
    if (DIR* dir = opendir("/proc/self/task")) {
        while (const dirent* entry = readdir(dir)) {
            if (entry->d_name[0] != '.')
                ids.push_back(static_cast<ThreadId>(std::atoi(entry->d_name)));
        }
        closedir(dir);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

// The threads that exist now and were not in `before` (a pool's workers: take thread_ids()
// before constructing it; std::thread's constructor returns once the thread exists).
inline std::vector<ThreadId> new_threads(const std::vector<ThreadId>& before) {
    std::vector<ThreadId> added;
    for (ThreadId id : thread_ids()) {
        if (!std::binary_search(before.begin(), before.end(), id)) added.push_back(id);
    }
    return added;
}

// The thread's scheduling state: 'R' running or runnable, 'S' asleep (blocked), 'D', 'T', ...;
// '?' if it no longer exists.
inline char thread_state(ThreadId tid) {
    // /proc/self/task/TID/stat: "tid (comm) S ...": the state follows the last ')'.
    std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size()) return '?';
    return line[close + 2];
}

inline bool asleep(ThreadId tid) {
    return thread_state(tid) == 'S';
}

// Whether the thread is blocked in a futex wait: on a mutex or a condition variable, not in a
// sleep or another system call.
inline bool blocked_on_futex(ThreadId tid) {
    std::ifstream file("/proc/self/task/" + std::to_string(tid) + "/syscall");
    long number = -1;
    return (file >> number) && number == SYS_futex && asleep(tid);
}

// The futex word the thread is blocked on (a mutex's, a condition variable's), or 0 if it is not
// blocked in a futex wait: /proc/self/task/TID/syscall holds the system call's number, then its
// arguments, the first of which, for a futex wait, is the word's address.
inline std::uintptr_t futex_word_of(ThreadId tid) {
    std::ifstream file("/proc/self/task/" + std::to_string(tid) + "/syscall");
    long number = -1;
    std::string word;
    if (!(file >> number >> word) || number != SYS_futex || !asleep(tid)) return 0;
    return static_cast<std::uintptr_t>(std::stoull(word, nullptr, 16));
}

// How many times the thread has gone to sleep so far (voluntary context switches: a sleep, a
// futex wait; a yield is not one); -1 if it no longer exists.
inline long sleeps_so_far(ThreadId tid) {
    std::ifstream status("/proc/self/task/" + std::to_string(tid) + "/status");
    std::string line;
    const std::string key = "voluntary_ctxt_switches:";
    while (std::getline(status, line)) {
        if (line.compare(0, key.size(), key) == 0) return std::atol(line.c_str() + key.size());
    }
    return -1;
}

// Whether the thread has slept on, undisturbed, since sleeps_so_far(tid) gave `sleeps` while it
// was blocked on a futex: it is still blocked there and has not gone to sleep again. A wake (the
// FUTEX_WAKE of a mutex's unlock, say) makes the thread runnable ('R') before the waker's system
// call returns, and if it has run and gone back to sleep since, its count has grown: so this is
// false from the moment of the wake on, whether or not the woken thread has had a CPU yet. The
// count is read after the state: reading /proc/.../syscall of a sleeping thread waits until it
// is off its CPU, by when its latest sleep is counted. A signal delivered to the thread (none in
// a test run) would wake it too.
inline bool still_asleep_since(ThreadId tid, long sleeps) {
    return blocked_on_futex(tid) && sleeps_so_far(tid) == sleeps;
}

// How long the thread has spent runnable but waiting for a CPU so far, its run-queue delay: the
// second field of /proc/self/task/TID/schedstat ("time on a CPU, time waiting for one, number of
// turns", in ns); nullopt if unknown (no such thread, or a kernel without schedstats: a test
// then falls back to the plain wall clock). Sleeping (sleep_for, a futex or condition-variable
// wait, any blocking call) is never in it: it is time the thread wanted to run. The kernel adds a
// wait when it ends, as the thread gets a CPU, so the figure of a thread waiting right now lacks
// that wait; the figure of a running thread (the caller's own) or of a sleeping one is up to date.
inline std::optional<std::chrono::nanoseconds> run_delay(ThreadId tid) {
    std::ifstream schedstat("/proc/self/task/" + std::to_string(tid) + "/schedstat");
    long long on_cpu = 0, waiting = 0;
    if (!(schedstat >> on_cpu >> waiting)) return std::nullopt;
    return std::chrono::nanoseconds{waiting};
}

// Waits until `done(tid)` holds for every thread in `tids` at `polls` polls in a row, 1 ms
// apart; false if that has not happened within `timeout`.
template <typename Pred>
bool wait_until_all(const std::vector<ThreadId>& tids, Pred done, std::chrono::milliseconds timeout,
                    int polls = 20) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int in_a_row = 0;
    while (in_a_row < polls) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        const bool all = std::all_of(tids.begin(), tids.end(), done);
        in_a_row = all ? in_a_row + 1 : 0;
        if (in_a_row < polls) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

// Every thread in `tids` asleep for `polls` ms in a row (see wait_until_all).
inline bool wait_until_asleep(const std::vector<ThreadId>& tids, std::chrono::milliseconds timeout,
                              int polls = 20) {
    return wait_until_all(tids, asleep, timeout, polls);
}

// The first `at_most` CPUs the calling thread may run on, in order; fewer if it may run on fewer.
inline std::vector<int> cpus_of_this_thread(std::size_t at_most) {
    std::vector<int> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < at_most; ++cpu) {
        if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
    return cpus;
}

// A CPU the calling thread may run on (the first of its affinity mask), or -1.
inline int a_cpu_of_this_thread() {
    const std::vector<int> cpus = cpus_of_this_thread(1);
    return cpus.empty() ? -1 : cpus.front();
}

// Lets the thread run on `cpu` only. Returns whether that worked.
inline bool pin_to_cpu(ThreadId tid, int cpu) {
    if (cpu < 0) return false;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(tid, sizeof(set), &set) == 0;
}

// Gives the thread SCHED_IDLE (see above). Returns whether that worked.
inline bool make_idle_priority(ThreadId tid) {
    sched_param param{};
    param.sched_priority = 0;
    return sched_setscheduler(tid, SCHED_IDLE, &param) == 0;
}

// Asks for a short time slice (0.1 ms) for a normal thread: the EEVDF scheduler (Linux 6.6 and
// later) gives it an earlier deadline, so that, woken, it runs before the thread that woke it
// even when that one has been waiting behind other processes for long. Returns whether that
// worked (older kernels ignore the request; then it only helps less).
inline bool request_short_slice(ThreadId tid) {
    struct {  // struct sched_attr (linux/sched/types.h)
        std::uint32_t size, policy;
        std::uint64_t flags;
        std::int32_t nice;
        std::uint32_t priority;
        std::uint64_t runtime, deadline, period;
    } attr{};
    attr.size = sizeof(attr);
    attr.policy = SCHED_OTHER;
    attr.runtime = 100'000;  // ns
    return syscall(SYS_sched_setattr, tid, &attr, 0u) == 0;
}
#else
inline constexpr bool kCanSteerThreads = false;
using ThreadId = int;
inline ThreadId current_thread_id() {
    return 0;
}
inline std::vector<ThreadId> thread_ids() {
    return {};
}
inline std::vector<ThreadId> new_threads(const std::vector<ThreadId>&) {
    return {};
}
inline char thread_state(ThreadId) {
    return '?';
}
inline bool asleep(ThreadId) {
    return false;
}
inline bool blocked_on_futex(ThreadId) {
    return false;
}
inline std::uintptr_t futex_word_of(ThreadId) {
    return 0;
}
inline long sleeps_so_far(ThreadId) {
    return -1;
}
inline bool still_asleep_since(ThreadId, long) {
    return false;
}
inline std::optional<std::chrono::nanoseconds> run_delay(ThreadId) {
    return std::nullopt;
}
template <typename Pred>
bool wait_until_all(const std::vector<ThreadId>&, Pred, std::chrono::milliseconds, int = 20) {
    return false;
}
inline bool wait_until_asleep(const std::vector<ThreadId>&, std::chrono::milliseconds, int = 20) {
    return false;
}
inline std::vector<int> cpus_of_this_thread(std::size_t) {
    return {};
}
inline int a_cpu_of_this_thread() {
    return -1;
}
inline bool pin_to_cpu(ThreadId, int) {
    return false;
}
inline bool make_idle_priority(ThreadId) {
    return false;
}
inline bool request_short_slice(ThreadId) {
    return false;
}
#endif

// Calls f() on a new thread born with SCHED_IDLE on `cpu` (it inherits both from the calling
// thread, which is pinned and made SCHED_IDLE first: call this only on a thread that ends with
// the test, such as a DetachedCall's). Any thread that f() wakes on that CPU then runs before
// f() goes on. Rethrows what f() threw.
template <typename F>
void call_born_idle_on(int cpu, F&& f) {
    const auto me = current_thread_id();
    pin_to_cpu(me, cpu);
    make_idle_priority(me);
    std::exception_ptr error;
    std::thread([&] {
        try {
            f();
        } catch (...) {
            error = std::current_exception();
        }
    }).join();
    if (error) std::rethrow_exception(error);
}

// A thread that spins on `cpu` while the object exists, so that a SCHED_IDLE thread there gets
// no turn while a normal thread it woke waits for one (EEVDF may pick the SCHED_IDLE thread
// when the woken one is not yet eligible).
class SpinnerOnCpu {
  public:
    explicit SpinnerOnCpu(int cpu)
        : thread_([this, cpu] {
              pin_to_cpu(current_thread_id(), cpu);
              while (on_.load(std::memory_order_relaxed)) {
              }
          }) {}
    SpinnerOnCpu(const SpinnerOnCpu&) = delete;
    SpinnerOnCpu& operator=(const SpinnerOnCpu&) = delete;
    ~SpinnerOnCpu() {
        on_.store(false, std::memory_order_relaxed);  // a stop flag: it publishes nothing
        thread_.join();
    }

  private:
    std::atomic<bool> on_{true};
    std::thread thread_;
};

}  // namespace ws::testing
