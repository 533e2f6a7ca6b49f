// The Chase-Lev work-stealing deque of lesson 04, under ws::lesson07.
//
// One owner pushes and pops at the bottom (LIFO); any thread steals at the top (FIFO). Owner
// and thieves meet only over the last item, and a CAS on `top_` decides who gets it.
//
// Memory orderings, without standalone fences (clang 14's ThreadSanitizer does not model
// std::atomic_thread_fence): the two places that need store-load order use seq_cst
// operations — pop: bottom_.store(seq_cst) then top_.load(seq_cst); steal: top_.load(seq_cst)
// then bottom_.load(seq_cst) — and every write of top_ is a seq_cst CAS, so all of them lie in
// the single total order S. push's bottom_ store is seq_cst as well: the pool's parking
// protocol (thread_pool.cpp, wake_one) needs "push, then load sleepers_" in S.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include <ws/steal.hpp>

namespace ws::lesson07 {

template <typename T>
class ChaseLevDeque {
    static_assert(std::is_trivially_copyable_v<T>, "store owning pointers, e.g. Job*");

  public:
    explicit ChaseLevDeque(std::size_t initial_capacity = 64) {
        buffers_.push_back(std::make_unique<Buffer>(static_cast<std::int64_t>(
            std::bit_ceil(initial_capacity == 0 ? 1 : initial_capacity))));
        buffer_.store(buffers_.back().get(), std::memory_order_relaxed);  // before any sharing
    }
    ChaseLevDeque(const ChaseLevDeque&) = delete;
    ChaseLevDeque& operator=(const ChaseLevDeque&) = delete;

    // Owner only.
    void push(T item) {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed);  // only we write it
        // acquire: pairs with the thieves' top_ CAS, so a slot is reused only after the thief
        // that took its previous item has read it
        const std::int64_t t = top_.load(std::memory_order_acquire);
        Buffer* buf = buffer_.load(std::memory_order_relaxed);  // only we write it
        if (b - t >= buf->capacity) buf = grow(buf, t, b);
        buf->at(b).store(item, std::memory_order_relaxed);  // published by the store below
        // seq_cst (a release at least): a thief that sees the new bottom_ sees the item; and
        // the parking protocol orders this store before the pusher's load of sleepers_
        bottom_.store(b + 1, std::memory_order_seq_cst);
    }

    // Owner only; newest first.
    std::optional<T> pop() {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
        Buffer* buf = buffer_.load(std::memory_order_relaxed);
        // seq_cst store then seq_cst load of top_: a thief's CAS either comes before this
        // store in S (we see its top_) or it sees the lowered bottom_ (and backs off)
        bottom_.store(b, std::memory_order_seq_cst);
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        if (t > b) {  // it was empty
            bottom_.store(b + 1, std::memory_order_relaxed);
            return std::nullopt;
        }
        T item = buf->at(b).load(std::memory_order_relaxed);
        if (t == b) {  // the last item: race the thieves for it with their own CAS
            const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                                          std::memory_order_relaxed);
            bottom_.store(b + 1, std::memory_order_relaxed);
            if (!won) return std::nullopt;
        }
        return item;
    }

    // Any thread; oldest first.
    ws::Steal<T> steal() {
        std::int64_t t = top_.load(std::memory_order_seq_cst);           // then bottom_, in S
        const std::int64_t b = bottom_.load(std::memory_order_seq_cst);  // acquire: the item
        if (t >= b) return ws::Steal<T>::empty();
        // acquire: pairs with grow()'s release store, so the new buffer's contents are seen
        Buffer* buf = buffer_.load(std::memory_order_acquire);
        T item = buf->at(t).load(std::memory_order_relaxed);
        // seq_cst CAS: claims the item; if it fails, someone else took it (retry)
        if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                          std::memory_order_relaxed))
            return ws::Steal<T>::retry();
        return ws::Steal<T>::success(item);
    }

    // Items inside; approximate under concurrency (relaxed: for statistics and heuristics).
    std::size_t size() const noexcept {
        const std::int64_t b = bottom_.load(std::memory_order_relaxed);
        const std::int64_t t = top_.load(std::memory_order_relaxed);
        return b > t ? static_cast<std::size_t>(b - t) : 0;
    }
    // seq_cst loads: the parking protocol's re-check, which must see a push that came before
    // its sleepers_ increment in S.
    bool looks_empty_seq_cst() const noexcept {
        const std::int64_t t = top_.load(std::memory_order_seq_cst);
        return bottom_.load(std::memory_order_seq_cst) <= t;
    }
    std::size_t capacity() const noexcept {
        return static_cast<std::size_t>(buffer_.load(std::memory_order_relaxed)->capacity);
    }

  private:
    struct Buffer {
        explicit Buffer(std::int64_t cap) : capacity(cap), slots(new std::atomic<T>[cap]) {}
        std::atomic<T>& at(std::int64_t i) { return slots[i & (capacity - 1)]; }
        std::int64_t capacity;
        std::unique_ptr<std::atomic<T>[]> slots;
    };

    // Owner only: doubles the buffer. The old one is kept until the deque dies, because a
    // thief may still read from it.
    Buffer* grow(Buffer* old, std::int64_t t, std::int64_t b) {
        buffers_.push_back(std::make_unique<Buffer>(old->capacity * 2));
        Buffer* bigger = buffers_.back().get();
        for (std::int64_t i = t; i < b; ++i)
            bigger->at(i).store(old->at(i).load(std::memory_order_relaxed),
                                std::memory_order_relaxed);
        buffer_.store(bigger, std::memory_order_release);  // pairs with steal()'s acquire
        return bigger;
    }

    alignas(64) std::atomic<std::int64_t> top_{0};
    alignas(64) std::atomic<std::int64_t> bottom_{0};
    alignas(64) std::atomic<Buffer*> buffer_{nullptr};
    std::vector<std::unique_ptr<Buffer>> buffers_;  // owner only
};

}  // namespace ws::lesson07
