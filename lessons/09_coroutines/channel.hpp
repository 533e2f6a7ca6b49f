// Lesson 09: Channel<T>, a bounded FIFO between coroutines. send suspends the sender while the
// buffer is full, receive suspends the receiver while it is empty; whoever makes room or brings
// a value wakes one of them with wake (resume_on that cannot fail: a waiter taken off its queue
// must not be lost). One mutex guards the buffer and both queues of waiters, so "look, then
// queue myself" is one step no waker can fall between.
#pragma once

#include <coroutine>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include <ws/not_implemented.hpp>

#include "pool_awaitables.hpp"
#include "thread_pool.hpp"

namespace ws::lesson09 {

template <typename T>
class Channel {
  public:
    // capacity: the values the buffer holds before a sender waits; 0 → std::invalid_argument.
    Channel(ThreadPool& pool, std::size_t capacity)
        : pool_(&pool), capacity_(checked(capacity)), buffer_(capacity) {}
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;

    class SendAwaiter;
    class ReceiveAwaiter;

    // co_await channel.send(v): continues once v is in the buffer or handed to a receiver.
    SendAwaiter send(T value) { return SendAwaiter(*this, std::move(value)); }
    // co_await channel.receive(): the oldest value, once there is one.
    ReceiveAwaiter receive() noexcept { return ReceiveAwaiter(*this); }

    // ANCHOR: send
    class SendAwaiter {
      public:
        SendAwaiter(Channel& channel, T value) : channel_(&channel), value_(std::move(value)) {}
        bool await_ready() const noexcept { return false; }
        bool await_suspend(std::coroutine_handle<> self) {
            // TODO(exercise 5): hand value_ to a waiting receiver (and wake it), or put it in
            // the buffer if there is room (and go on: return false), or else queue this sender
            // and suspend. Rule: "look, then queue myself" must be one step under the mutex, a
            // receiver's slot is filled before it is woken, and nobody is woken while the mutex
            // is held. Checked by Lesson09Ex5 (the channel tests).
            (void)self;
            throw ws::NotImplemented{"lesson 09, exercise 5: Channel::send"};
        }
        void await_resume() const noexcept {}

      private:
        friend class Channel;
        Channel* channel_;
        T value_;
        std::coroutine_handle<> coroutine_;
    };
    // ANCHOR_END: send

    // ANCHOR: receive
    class ReceiveAwaiter {
      public:
        explicit ReceiveAwaiter(Channel& channel) noexcept : channel_(&channel) {}
        bool await_ready() const noexcept { return false; }
        bool await_suspend(std::coroutine_handle<> self) {
            // TODO(exercise 5): take the oldest buffered value into slot_ (and let the oldest
            // waiting sender's value take its place, waking that sender), or else queue this
            // receiver and suspend. Rule: as for send. Checked by Lesson09Ex5.
            (void)self;
            throw ws::NotImplemented{"lesson 09, exercise 5: Channel::receive"};
        }
        T await_resume() { return std::move(*slot_); }

      private:
        friend class Channel;
        Channel* channel_;
        std::optional<T> slot_;
        std::coroutine_handle<> coroutine_;
    };
    // ANCHOR_END: receive

  private:
    // Once an awaiter has taken something under the mutex, nothing may throw: a receiver that
    // has taken a waiting sender off its queue and then fails to put its value in the buffer
    // would lose both. So the buffer is a ring of `capacity` slots allocated once, here, and
    // values move in and out without throwing (hence the static_assert). Queueing a waiter may
    // throw, but before anything is taken: the exception reaches the awaiting coroutine.
    static_assert(std::is_nothrow_move_constructible_v<T>,
                  "Channel<T>: T's move must not throw (it runs under the channel's mutex)");
    class Ring {
      public:
        explicit Ring(std::size_t capacity) : slots_(capacity) {}
        bool empty() const noexcept { return size_ == 0; }
        std::size_t size() const noexcept { return size_; }
        T& front() noexcept { return *slots_[head_]; }
        void push_back(T&& value) noexcept {  // only when size() < capacity
            slots_[(head_ + size_) % slots_.size()].emplace(std::move(value));
            ++size_;
        }
        void pop_front() noexcept {
            slots_[head_].reset();
            head_ = (head_ + 1) % slots_.size();
            --size_;
        }

      private:
        std::vector<std::optional<T>> slots_;
        std::size_t head_ = 0;
        std::size_t size_ = 0;
    };

    static std::size_t checked(std::size_t capacity) {
        if (capacity == 0) throw std::invalid_argument("Channel: capacity must be at least 1");
        return capacity;
    }

    ThreadPool* pool_;
    std::size_t capacity_;
    std::mutex mutex_;
    Ring buffer_;                            // guarded by mutex_, at most capacity_ values
    std::deque<SendAwaiter*> senders_;       // guarded by mutex_: suspended, buffer full
    std::deque<ReceiveAwaiter*> receivers_;  // guarded by mutex_: suspended, buffer empty
};

}  // namespace ws::lesson09
