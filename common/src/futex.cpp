#include <ws/futex.hpp>

#include <climits>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace ws {

// The kernel reads the word itself: std::atomic<std::uint32_t> is a plain 32-bit word in
// memory (libstdc++'s own wait relies on the same layout).
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

#if defined(__linux__)

namespace {
std::uint32_t* address_of(std::atomic<std::uint32_t>& word) noexcept {
    return reinterpret_cast<std::uint32_t*>(&word);
}
}  // namespace

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
    // EAGAIN (the word changed already) and EINTR (a signal) both mean "recheck": the caller
    // loops, so the result is not needed.
    syscall(SYS_futex, address_of(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>& word, std::uint32_t count) noexcept {
    const int n = count > static_cast<std::uint32_t>(INT_MAX) ? INT_MAX : static_cast<int>(count);
    syscall(SYS_futex, address_of(word), FUTEX_WAKE_PRIVATE, n, nullptr, nullptr, 0);
}

#else  // elsewhere: the standard library's portable version

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
    word.wait(expected, std::memory_order_relaxed);
}

void futex_wake(std::atomic<std::uint32_t>& word, std::uint32_t count) noexcept {
    if (count == 1) {
        word.notify_one();
    } else {
        word.notify_all();
    }
}

#endif

}  // namespace ws
