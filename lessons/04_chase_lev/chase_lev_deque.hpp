// Lesson 04: the Chase-Lev work-stealing deque, lock-free. (Starter code: see the TODOs.)
//
// One owner thread pushes and pops at the bottom (LIFO); any number of thieves steal at the top
// (FIFO). The owner's push and pop touch only their own end; owner and thieves meet only over
// the last item, and a single CAS on `top` decides who gets it.
//
//        top (thieves CAS it up)                bottom (only the owner writes it)
//         v                                      v
//   ... | item t | item t+1 | ... | item b-1 |  (free) ...     slots: index & (capacity - 1)
//
// The indices only ever grow (no wrap-around of the numbers themselves, only of the slots), and
// they are signed: the owner's pop decrements `bottom` before it looks at `top`, so on an empty
// deque bottom - 1 is briefly below top — with unsigned indices 0 - 1 would wrap to 2^64 - 1 and
// the empty deque would look full.
//
// The atomics are ws::atomic<T>, which is std::atomic<T> (<ws/atomic.hpp>): write them exactly
// as std::atomic. The Explorer tests (tests/04_chase_lev/model) build your deque with an
// instrumented atomic that tries the interleavings and every value the C++ memory model allows
// a load to read, so an order that is too weak fails there on any machine.
//
// TODO(exercise 3): the memory orderings. Exercises 1 and 2 use memory_order_relaxed
// everywhere, which is right for one thread and wrong for several. Give every atomic operation
// in push, pop and steal the order it needs, with a comment saying which operation it pairs
// with and what would break without it. pop needs store-load ordering (store bottom, then load
// top) and steal load-load ordering (load top, then load bottom), all four in one total order:
// use seq_cst operations there, not std::atomic_thread_fence, which ThreadSanitizer does not
// understand. Check with ./workshop test 4 --exercise 3 --tsan.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <ws/atomic.hpp>
#include <ws/not_implemented.hpp>
#include <ws/steal.hpp>

namespace ws::lesson04 {

template <typename T>
class ChaseLevDeque {
    // Slots are ws::atomic<T>: a thief reads a slot *before* its CAS and may lose, while the
    // owner reuses that slot — a data race (undefined behaviour) on a plain T. Relaxed atomic
    // loads and stores of a pointer are plain `mov`s, so the atomicity costs nothing.
    static_assert(std::is_trivially_copyable_v<T>,
                  "ChaseLevDeque<T> holds T in ws::atomic<T> slots: T must be trivially "
                  "copyable (store owning pointers, e.g. Task*)");

  public:
    // The capacity is rounded up to a power of two (at least 1); the deque grows when full.
    explicit ChaseLevDeque(std::size_t initial_capacity = 64) {
        if (initial_capacity > kMaxCapacity)
            throw std::length_error("ChaseLevDeque: initial capacity too large");
        buffers_.push_back(std::make_unique<Buffer>(static_cast<std::int64_t>(
            std::bit_ceil(initial_capacity == 0 ? 1 : initial_capacity))));
        // relaxed: the deque is not shared yet; whoever gets it later synchronises with us.
        buffer_.store(buffers_.back().get(), std::memory_order_relaxed);
        use_buffer(buffers_.back().get());
    }

    // Frees every buffer (the live one and the retired ones). Items still inside are not
    // destroyed: T is trivially copyable; an owner of pointers drains the deque first.
    ~ChaseLevDeque() = default;

    ChaseLevDeque(const ChaseLevDeque&) = delete;
    ChaseLevDeque& operator=(const ChaseLevDeque&) = delete;

    void push(T item);       // owner only
    std::optional<T> pop();  // owner only; newest first (LIFO)
    ws::Steal<T> steal();    // any thread; oldest first (FIFO)

    // Items inside; exact for the owner when no thief is active, approximate otherwise.
    std::size_t size() const noexcept {
        // relaxed: a snapshot for statistics and heuristics; nothing is read on the strength
        // of it. During a pop, bottom is briefly below top: clamp to zero.
        const std::int64_t b = bottom_.load(std::memory_order_relaxed);
        const std::int64_t t = top_.load(std::memory_order_relaxed);
        return b > t ? static_cast<std::size_t>(b - t) : 0;
    }

    std::size_t capacity() const noexcept {
        // acquire: pairs with the release in grow(), so a non-owner sees the buffer it points
        // to fully built (without it, reading its size would be a data race).
        return static_cast<std::size_t>(buffer_.load(std::memory_order_acquire)->capacity());
    }

  private:
    static constexpr std::size_t kMaxCapacity = std::size_t{1} << 40;

    // A fixed-size ring of slots; index i lives in slot i & (capacity - 1).
    class Buffer {
      public:
        explicit Buffer(std::int64_t capacity)
            : mask_(capacity - 1), slots_(new ws::atomic<T>[static_cast<std::size_t>(capacity)]) {}
        std::int64_t capacity() const noexcept { return mask_ + 1; }
        std::int64_t mask() const noexcept { return mask_; }
        ws::atomic<T>* slots() noexcept { return slots_.get(); }
        ws::atomic<T>& at(std::int64_t index) noexcept {
            return slots_[static_cast<std::size_t>(index & mask_)];
        }

      private:
        std::int64_t mask_;
        std::unique_ptr<ws::atomic<T>[]> slots_;
    };

    void grow(std::int64_t top, std::int64_t bottom);

    // The owner's side (see owner_bottom_ below).
    ws::atomic<T>& owner_slot(std::int64_t index) noexcept {
        return owner_slots_[static_cast<std::size_t>(index & owner_mask_)];
    }
    void use_buffer(Buffer* buf) noexcept {
        owner_mask_ = buf->mask();
        owner_slots_ = buf->slots();
    }
    // Stores bottom, keeping the owner's copy equal to it. (The copy is written after the
    // atomic store, so that a compiler can keep it in a register up to the next atomic
    // operation: the pop that follows a push then needs no load at all.)
    void set_bottom(std::int64_t value, std::memory_order order) noexcept {
        bottom_.store(value, order);
        owner_bottom_ = value;
    }

    // top: the oldest item's index; written only by successful CASes (thieves, or the owner
    // taking the last item). On a cache line of its own: thieves hammer it.
    alignas(64) ws::atomic<std::int64_t> top_{0};
    // bottom: one past the newest item; written only by the owner. The live buffer pointer sits
    // on the same line: a thief reads both in every steal.
    alignas(64) ws::atomic<std::int64_t> bottom_{0};
    ws::atomic<Buffer*> buffer_{nullptr};
    // The owner's private view: its own copy of bottom_ and of the live buffer's geometry.
    // Plain variables that only the owner reads and writes: it is the only writer of bottom_
    // and buffer_, so the copies are always current. Reading them instead of the atomics
    // spares push and pop a chain of dependent loads (bottom_, then buffer_, then the buffer's
    // mask and slots) that would otherwise have to wait for pop's seq_cst store to complete:
    // that chain made a push+pop pair twice as slow (bench_lesson04, owner_push_pop).
    // They share bottom_'s line: the owner writes that line in every push and pop anyway, so
    // they add no sharing with thieves, and pop's `xchg` waits for stores to one line fewer
    // (chapter 04's first host: 1.35-1.57x the floor on a line of their own, 1.30-1.46x here).
    std::int64_t owner_bottom_ = 0;
    std::int64_t owner_mask_ = 0;
    ws::atomic<T>* owner_slots_ = nullptr;
    // Owner only: every buffer this deque ever used, the live one last. Retired buffers are
    // freed only by the destructor (see grow() for why, and for the bound on their size).
    std::vector<std::unique_ptr<Buffer>> buffers_;
};

template <typename T>
void ChaseLevDeque<T>::push(T item) {
    // TODO(exercise 1): with b = owner_bottom_ and t = top_, store `item` in owner_slot(b),
    // then set_bottom(b + 1, ...). If the ring is full (b - t > owner_mask_), call grow(t, b)
    // first (exercise 4). Use std::memory_order_relaxed on every atomic operation for now;
    // exercise 3 chooses the orders.
    (void)item;
    throw ws::NotImplemented("lesson 04, exercise 1: ChaseLevDeque::push");
}

template <typename T>
std::optional<T> ChaseLevDeque<T>::pop() {
    // TODO(exercise 1): take the newest item. Reserve it first, set_bottom(b, ...) with
    // b = owner_bottom_ - 1, then read top_: if the deque was empty (top > b), put bottom back
    // to b + 1 and return nothing; otherwise return the item in owner_slot(b).
    // TODO(exercise 2): when top == b this is the last item and a thief may be taking it right
    // now: let one CAS on top_ (from b to b + 1) decide who gets it, and put bottom back to
    // b + 1 either way.
    throw ws::NotImplemented("lesson 04, exercise 1: ChaseLevDeque::pop");
}

template <typename T>
ws::Steal<T> ChaseLevDeque<T>::steal() {
    // TODO(exercise 1): take the oldest item: read top_, then bottom_; if top >= bottom return
    // Steal<T>::empty(); otherwise read the item at index top in buffer_ (->at(top)), advance
    // top_ and return Steal<T>::success(item). (A thief must not use the owner_ variables.)
    // TODO(exercise 2): other thieves and the owner race for the same index: advance top_ with
    // one compare_exchange_strong from t to t + 1, and return Steal<T>::retry() if it fails.
    // Which must come first, reading the slot or the CAS?
    throw ws::NotImplemented("lesson 04, exercise 1: ChaseLevDeque::steal");
}

// Owner only, from push() when the ring is full.
template <typename T>
void ChaseLevDeque<T>::grow(std::int64_t top, std::int64_t bottom) {
    // TODO(exercise 4): make a Buffer of twice the live one's capacity (buffers_.back()), copy
    // every index in [top, bottom) to the same index in it, append it to buffers_ (the old one
    // stays there: why?), publish it in buffer_ and switch the owner's view with use_buffer().
    (void)top;
    (void)bottom;
    throw ws::NotImplemented("lesson 04, exercise 4: ChaseLevDeque::grow");
}

}  // namespace ws::lesson04
