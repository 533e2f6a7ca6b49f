// Small helpers for tests that must not depend on the exercise under test to know when work
// is done: bounded polling and the process's CPU time.
#pragma once

#include <chrono>
#include <ctime>
#include <thread>

namespace ws::testing {

// Polls `done` until it is true or `timeout` passes; returns the last value of `done()`.
template <typename Pred>
bool wait_until(Pred done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return done();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
}

// CPU time consumed by every thread of this process so far, in seconds.
inline double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace ws::testing
