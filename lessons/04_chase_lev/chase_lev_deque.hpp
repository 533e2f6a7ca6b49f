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
// TODO(exercise 3): the memory orderings. Exercises 1 and 2 may use memory_order_relaxed
// everywhere, which is right for one thread and wrong for several. When you are done, every
// atomic operation in push, pop and steal has the weakest order that is still correct under
// the C++ memory model (not just on x86), and next to it a comment: which operation it pairs
// with, and what could happen without it. Rules: an item a thief takes must be fully visible to
// it, and the owner and a thief must never both take the last item; no
// std::atomic_thread_fence (ThreadSanitizer does not model fences). The chapter explains the
// tools (release/acquire, store buffering, the single total order S); choosing is yours.
// Checked by Lesson04Ex3 (its Explorer tests try every order the memory model allows).
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

    // `inline` because they are defined below the class: g++ -O2 inlines a function not
    // declared inline only when it is tiny, and as calls push and pop cost 1.5-2x (bench
    // bench_lesson04, *_vs_floor; the generated code: lesson 04's solution page).
    inline void push(T item);       // owner only
    inline std::optional<T> pop();  // owner only; newest first (LIFO)
    inline ws::Steal<T> steal();    // any thread; oldest first (FIFO)

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

    // The owner's side (see the owner's private view below).
    ws::atomic<T>& owner_slot(std::int64_t index) noexcept {
        return owner_slots_[static_cast<std::size_t>(index & owner_mask_)];
    }
    void use_buffer(Buffer* buf) noexcept {
        owner_mask_ = buf->mask();
        owner_slots_ = buf->slots();
    }

    // top: the oldest item's index; written only by successful CASes (thieves, or the owner
    // taking the last item). On a cache line of its own: thieves hammer it.
    alignas(64) ws::atomic<std::int64_t> top_{0};
    // bottom: one past the newest item; written only by the owner. The live buffer pointer sits
    // on the same line: a thief reads both in every steal.
    alignas(64) ws::atomic<std::int64_t> bottom_{0};
    ws::atomic<Buffer*> buffer_{nullptr};
    // The owner's private view: a copy of the live buffer's geometry and a lower bound of top.
    // Plain variables that only the owner reads and writes. It is the only writer of buffer_,
    // so its copy is always current: reading it instead of the atomic spares push and pop a
    // chain of dependent loads (buffer_, then the buffer's mask and slots) that would
    // otherwise have to wait for pop's seq_cst store to complete.
    // owner_top_ is different: thieves move top_, so the owner's copy is stale as soon as it is
    // read. But top never goes down, so the copy can overstate the size, never understate it.
    // They share bottom_'s line: the owner writes that line in every push and pop anyway, so
    // they add no sharing with thieves.
    std::int64_t owner_top_ = 0;
    std::int64_t owner_mask_ = 0;
    ws::atomic<T>* owner_slots_ = nullptr;
    // Owner only: every buffer this deque ever used, the live one last. Retired buffers are
    // freed only by the destructor (see grow() for why, and for the bound on their size).
    std::vector<std::unique_ptr<Buffer>> buffers_;
};

template <typename T>
void ChaseLevDeque<T>::push(T item) {
    // TODO(exercise 1): the item becomes the newest one, and a thief can see it only once it
    // is in its slot. Rule: only the owner writes bottom; it reaches the slots through its
    // own view of the buffer (owner_slot), and it reads top only when its own copy of top
    // (owner_top_) says the ring is full; a ring that is still full then grows first
    // (exercise 4 writes grow). Relaxed orders are fine until exercise 3. Checked by
    // Lesson04Ex1.
    (void)item;
    throw ws::NotImplemented("lesson 04, exercise 1: ChaseLevDeque::push");
}

template <typename T>
std::optional<T> ChaseLevDeque<T>::pop() {
    // TODO(exercise 1): returns the newest item, or nothing when the deque is empty — and an
    // empty pop leaves the deque as it found it. Rule: a thief may be reading top and bottom
    // at any moment, so the owner must claim the item before it looks at top, not after.
    // Checked by Lesson04Ex1.
    // TODO(exercise 2): when owner and thief go for the same last item, exactly one of them
    // gets it, and whoever wins, the deque is left empty with bottom consistent, ready for the
    // next push. Rule: one atomic step that both sides take decides the race, never a look
    // followed by a write: a thief can slip in between the two. Checked by Lesson04Ex2.
    throw ws::NotImplemented("lesson 04, exercise 1: ChaseLevDeque::pop");
}

template <typename T>
ws::Steal<T> ChaseLevDeque<T>::steal() {
    // TODO(exercise 1): returns the oldest item, or Steal<T>::empty() when there is none.
    // Rule: a thief sees the deque only through the atomics (top_, bottom_, buffer_), never
    // through the owner's private copies. Checked by Lesson04Ex1.
    // TODO(exercise 2): with other thieves and the owner racing for the same index, every item
    // is taken exactly once; a thief that loses the race says so (Steal<T>::retry()) rather
    // than waiting. Rule: after a thief has won, the owner may reuse that slot at once.
    // Checked by Lesson04Ex2.
    throw ws::NotImplemented("lesson 04, exercise 1: ChaseLevDeque::steal");
}

// Owner only, from push() when the ring is full.
template <typename T>
void ChaseLevDeque<T>::grow(std::int64_t top, std::int64_t bottom) {
    // TODO(exercise 4): afterwards the ring has twice the room and every item of [top, bottom)
    // is still at its index, for the owner and for thieves alike. Rule: a thief that loaded
    // the old buffer a moment ago may still read from it. Checked by Lesson04Ex4.
    (void)top;
    (void)bottom;
    throw ws::NotImplemented("lesson 04, exercise 4: ChaseLevDeque::grow");
}

}  // namespace ws::lesson04
