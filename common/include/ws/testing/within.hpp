// Calling something that may hang with a short bound of the test's own, instead of waiting for
// the watchdog's 30 s: a test of a bug that makes wait_idle or a destructor block forever fails
// in a second or two, with a message that says what did not return.
//
// DetachedCall runs f() on a thread of its own; wait_for(timeout) waits at most that long for
// it to return. A call that never returns is left behind, blocked on a detached thread, and
// everything it uses must then outlive the test: leak it (std::unique_ptr::release) rather than
// destroy it, or a destructor that waits for the same thing (a pool's, joining its workers)
// hangs the test after all. run_within(timeout, f) is the one-call form.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace ws::testing {

class DetachedCall {
  public:
    template <typename F>
    explicit DetachedCall(F f) : state_(std::make_shared<State>()) {
        std::thread([state = state_, f = std::move(f)]() mutable {
            std::exception_ptr error;
            try {
                f();
            } catch (...) {
                error = std::current_exception();
            }
            std::lock_guard lock(state->mutex);
            state->error = error;
            state->returned = true;
            state->cv.notify_all();
        }).detach();
    }

    // Whether f has returned (or thrown), waiting at most `timeout` for it.
    bool wait_for(std::chrono::milliseconds timeout) {
        std::unique_lock lock(state_->mutex);
        return state_->cv.wait_for(lock, timeout, [&] { return state_->returned; });
    }

    // Whether f has returned (or thrown), waiting at most `timeout` for it, and no longer once
    // hangs() is true: a sign, polled every few milliseconds, that f never will return, which
    // fails a test at once instead of after the whole bound.
    template <typename Hangs>
    bool wait_for(std::chrono::milliseconds timeout, Hangs hangs) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (!wait_for(std::chrono::milliseconds(5))) {
            if (hangs() || std::chrono::steady_clock::now() >= deadline) return false;
        }
        return true;
    }

    // What f threw, once wait_for has returned true (nullptr if it returned normally).
    std::exception_ptr error() const {
        std::lock_guard lock(state_->mutex);
        return state_->error;
    }

  private:
    struct State {
        std::mutex mutex;
        std::condition_variable cv;
        bool returned = false;
        std::exception_ptr error;
    };
    std::shared_ptr<State> state_;  // shared with the thread, which may outlive this object
};

// Whether f() returned (or threw) within `timeout`; see DetachedCall for what a call that does
// not return leaves behind.
template <typename F>
bool run_within(std::chrono::milliseconds timeout, F f) {
    DetachedCall call(std::move(f));
    return call.wait_for(timeout);
}

}  // namespace ws::testing
