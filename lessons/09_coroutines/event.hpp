// Lesson 09: Event, set once, awaited by any number of coroutines. A waiter that finds it unset
// suspends (its worker goes on with other tasks); set() is the waker: it puts every waiter back
// on the pool with resume_on.
#pragma once

#include <coroutine>

#include "pool_awaitables.hpp"
#include "thread_pool.hpp"
#include "wait_list.hpp"

namespace ws::lesson09 {

// ANCHOR: event
class Event {
  public:
    explicit Event(ThreadPool& pool) noexcept : pool_(&pool) {}
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;

    bool is_set() const noexcept { return waiters_.is_set(); }

    // Sets the event (once; later calls do nothing) and resumes every coroutine suspended on
    // it, each as a task of the pool.
    void set() {
        ThreadPool& pool = *pool_;  // a woken waiter may free *this: nothing below touches it
        for (WaitList::Waiter* waiter = waiters_.set(); waiter != nullptr;) {
            // Read both before waking: the woken coroutine may run at once, on another worker,
            // finish, and free the frame that holds this waiter.
            WaitList::Waiter* const next = waiter->next;
            const std::coroutine_handle<> coroutine = static_cast<Awaiter*>(waiter)->coroutine;
            wake(pool, coroutine);  // cannot fail, so the waiters after this one are not lost
            waiter = next;
        }
    }

    // co_await event: continues at once if the event is set, else when it is.
    struct Awaiter : WaitList::Waiter {
        Event* event;
        std::coroutine_handle<> coroutine;

        explicit Awaiter(Event& e) noexcept : event(&e) {}
        bool await_ready() const noexcept { return event->is_set(); }
        // Returning false resumes the coroutine at once: the event was set in the meantime.
        bool await_suspend(std::coroutine_handle<> self) {
            coroutine = self;
            return event->waiters_.try_add(this);
        }
        void await_resume() const noexcept {}
    };
    Awaiter operator co_await() noexcept { return Awaiter(*this); }

  private:
    ThreadPool* pool_;
    WaitList waiters_;
};
// ANCHOR_END: event

}  // namespace ws::lesson09
