// Given code, carried from lesson 07's solution, unchanged.
// (./workshop sync writes this copy; edit the source lesson's file instead.)
// Lesson 04: the Chase-Lev work-stealing deque, lock-free.
//
// One owner thread pushes and pops at the bottom (LIFO); any number of thieves steal at the top
// (FIFO). Owner and thieves meet only over the last item, and a single CAS on `top` decides who
// gets it.
//
//        top (thieves CAS it up)                bottom (only the owner writes it)
//         v                                      v
//   ... | item t | item t+1 | ... | item b-1 |  (free) ...     slots: index & (capacity - 1)
//
// The indices only grow, and they are signed: pop lowers `bottom` before it looks at `top`, so
// on an empty deque bottom is briefly top - 1 (-1 on a fresh one).
//
// The atomics are ws::atomic<T>, which is std::atomic<T> (<ws/atomic.hpp>). Only the
// interleaving explorer's tests (tests/04_chase_lev/model) build with an instrumented atomic
// that tries the interleavings and the values the C++ memory model allows each load to read.
//
// ANCHOR: orderings
// Memory orderings. No standalone fences (ThreadSanitizer does not model them). Where
// release/acquire is not enough, seq_cst *operations*, which all lie in one total order S:
//   - pop:   bottom.store(b, seq_cst)  then  top.load(seq_cst)       (store-load)
//   - steal: top.load(seq_cst)          then  bottom.load(seq_cst)    (load-load)
// These four in S are what keeps owner and thief from taking the same item (the proof: the
// guide's lesson 04 chapter). Every CAS on `top` is seq_cst too, more than it needs. Each
// operation below says which order it uses, what it pairs with and what breaks without it.
// ANCHOR_END: orderings
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
#include <ws/steal.hpp>

namespace ws::lesson08 {

// ANCHOR: class
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

    // Any thread: true if the deque looks empty, with the loads a parking worker's recheck
    // needs. top first, as in steal(), so a concurrent steal cannot make bottom look below top.
    bool is_empty() const noexcept {
        // seq_cst: the load of bottom pairs with push's seq_cst store in S (the parker's proof);
        // as acquire, a recheck and a spawner could miss each other. top: as in steal().
        const std::int64_t t = top_.load(std::memory_order_seq_cst);
        const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
        return b <= t;
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
    // so its copy is always current, and reading it spares push and pop a chain of dependent
    // loads (buffer_, then the buffer's mask and slots) that would have to wait for pop's
    // seq_cst store. owner_top_ is different: thieves move top_, so the copy is stale as soon
    // as it is read; but top never goes down, so the copy can overstate the size, never
    // understate it, and push loads top_ again only when the copy says the ring is full. (No
    // copy of bottom_: the owner, its only writer, reads its own last store back relaxed.)
    // On bottom_'s line, which the owner writes anyway.
    std::int64_t owner_top_ = 0;
    std::int64_t owner_mask_ = 0;
    ws::atomic<T>* owner_slots_ = nullptr;
    // Owner only: every buffer this deque ever used, the live one last. Retired buffers are
    // freed only by the destructor (see grow()).
    std::vector<std::unique_ptr<Buffer>> buffers_;
};
// ANCHOR_END: class

// ANCHOR: push
template <typename T>
void ChaseLevDeque<T>::push(T item) {
    // relaxed: only the owner writes bottom, so it reads its own last store.
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    // The owner's copy of top is a lower bound (top only grows), so b - owner_top_ can only
    // overstate the size: when it says there is room, there is. Only when it says full is top
    // loaded again. acquire: pairs with the release of thieves' CASes in steal(), so their slot
    // reads happen before we reuse a slot; without it a thief could read our new item: one
    // lost, one twice.
    if (b - owner_top_ > owner_mask_) [[unlikely]] {
        owner_top_ = top_.load(std::memory_order_acquire);
        if (b - owner_top_ > owner_mask_) grow(owner_top_, b);  // full: b - top == capacity
    }
    // relaxed: a thief takes slot b only after it has seen the release store of bottom below.
    owner_slot(b).store(item, std::memory_order_relaxed);
    // seq_cst: steal()'s acquire pairs with it (the item), and it is the publication in S that
    // the parker's proof needs; as release, notify_one() and a worker's recheck could both miss.
    bottom_.store(b + 1, std::memory_order_seq_cst);
}
// ANCHOR_END: push

// ANCHOR: pop
template <typename T>
std::optional<T> ChaseLevDeque<T>::pop() {
    // relaxed: as in push, the owner's own last store.
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    // Where item b would be, worked out before the seq_cst store below: loads after it wait.
    ws::atomic<T>& slot = owner_slot(b);
    // Reserve index b before looking at top. seq_cst: pairs with steal()'s seq_cst load of
    // bottom through S; as release, the load below could pass it and both take index b.
    bottom_.store(b, std::memory_order_seq_cst);
    // seq_cst: in S after the reservation, and before any thief's load that reads a newer top;
    // acquire is not in S and could read top before thieves see the reservation: both take b.
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    if (t > b) {
        // Empty: undo the reservation. release: pairs with steal()'s load of bottom; relaxed,
        // a thief that reads this value could see stale slots below it.
        bottom_.store(b + 1, std::memory_order_release);
        return std::nullopt;
    }
    // relaxed: the owner wrote this slot itself.
    T item = slot.load(std::memory_order_relaxed);
    if (t < b) return item;  // more than one item: no thief can take index b

    // t == b: the last item, which a thief may be stealing right now: one CAS decides (its
    // atomicity does; seq_cst like every CAS on top). Failure: relaxed, we use nothing.
    const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                                  std::memory_order_relaxed);
    // Either way the deque is now empty with top == b+1: put bottom back to match.
    // release: as in the empty case above.
    bottom_.store(b + 1, std::memory_order_release);
    if (!won) return std::nullopt;  // a thief took it
    return item;
}
// ANCHOR_END: pop

// ANCHOR: steal
template <typename T>
ws::Steal<T> ChaseLevDeque<T>::steal() {
    // seq_cst: if pop()'s seq_cst load of top read an older value, S puts it before this load
    // and so before our load of bottom. acquire is not in S: both could then take index t.
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    // seq_cst: S puts pop()'s reservation before it when it matters, so it reads that or a later
    // bottom (acquire, not in S, might not). Its acquire half pairs with push's release: the item.
    const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
    if (t >= b) return ws::Steal<T>::empty();
    // acquire: pairs with grow()'s release store: we see the copied slots and the size. An old
    // buffer (a growth after our load of bottom) is fine: it still holds index t (see grow()).
    Buffer* buf = buffer_.load(std::memory_order_acquire);
    // Read the item *before* the CAS: once the CAS succeeds the owner may reuse the slot.
    // relaxed: the acquire load of bottom above already made the slot's store visible.
    T item = buf->at(t).load(std::memory_order_relaxed);
    // seq_cst: claims index t (atomicity: one winner). Its release half pairs with push's acquire
    // of top; without it our slot read could see the owner's next item. Failure: relaxed.
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                      std::memory_order_relaxed)) {
        return ws::Steal<T>::retry();  // another thief or the owner took index t first
    }
    return ws::Steal<T>::success(item);
}
// ANCHOR_END: steal

// ANCHOR: grow
// Owner only, from push() when the ring is full: a buffer twice the size with the live range
// [top, bottom) copied over, published with a release store. The old buffer is retired, not
// freed: a thief may have loaded its pointer and not read its slot yet. The owner never writes
// to it again, so such a thief still reads the right item. The retired buffers together are
// smaller than the live one.
template <typename T>
void ChaseLevDeque<T>::grow(std::int64_t top, std::int64_t bottom) {
    Buffer* old = buffers_.back().get();  // the live one
    auto bigger = std::make_unique<Buffer>(old->capacity() * 2);
    // relaxed: the owner wrote these slots itself, and the release below publishes the copies.
    // Thieves may steal some of [top, bottom) meanwhile; those copies are never read.
    for (std::int64_t i = top; i < bottom; ++i)
        bigger->at(i).store(old->at(i).load(std::memory_order_relaxed), std::memory_order_relaxed);
    Buffer* raw = bigger.get();
    buffers_.push_back(std::move(bigger));  // may throw: then nothing has changed
    // release: pairs with the acquire loads of buffer_ in steal() and capacity(); without it a
    // thief could read a slot of the new buffer before the copy reached it.
    buffer_.store(raw, std::memory_order_release);
    use_buffer(raw);
}
// ANCHOR_END: grow

}  // namespace ws::lesson08
