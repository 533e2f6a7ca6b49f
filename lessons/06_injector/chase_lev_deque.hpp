// Given code, carried from lesson 05's solution, unchanged.
// (./workshop sync writes this copy; edit the source lesson's file instead.)
// Lesson 04: the Chase-Lev work-stealing deque, lock-free.
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
// ANCHOR: orderings
// Memory orderings. No standalone fences:
// clang 14's ThreadSanitizer does not model std::atomic_thread_fence, so a fence-based version
// would look racy to it, and clang compiles a seq_cst fence to `mfence`, which makes the owner's
// pop several times slower. Instead the two places that need store-load ordering use seq_cst
// *operations*, which TSan sees and which compile to `xchg` (store) and plain `mov` (loads):
//   - pop:   bottom.store(b, seq_cst)  then  top.load(seq_cst)
//   - steal: top.load(seq_cst)          then  bottom.load(seq_cst)
// and every write of `top` is a seq_cst CAS. All of them lie in the one total order S of seq_cst
// operations, which is what the no-loss argument needs (see pop()). Everything else is
// release/acquire or relaxed, and each operation below says what it pairs with.
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

#include <ws/steal.hpp>

namespace ws::lesson06 {

// ANCHOR: class
template <typename T>
class ChaseLevDeque {
    // Slots are std::atomic<T>: a thief reads a slot *before* its CAS and may lose, while the
    // owner reuses that slot — a data race (undefined behaviour) on a plain T. Relaxed atomic
    // loads and stores of a pointer are plain `mov`s, so the atomicity costs nothing.
    static_assert(std::is_trivially_copyable_v<T>,
                  "ChaseLevDeque<T> holds T in std::atomic<T> slots: T must be trivially "
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

    // Any thread (lesson 05): true if the deque looks empty, with the loads a parking worker's
    // recheck needs. seq_cst: pairs with push's seq_cst store of bottom (see push()); top is
    // loaded first, as in steal(), so a concurrent steal cannot make bottom look below top.
    bool is_empty() const noexcept {
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
            : mask_(capacity - 1), slots_(new std::atomic<T>[static_cast<std::size_t>(capacity)]) {}
        std::int64_t capacity() const noexcept { return mask_ + 1; }
        std::int64_t mask() const noexcept { return mask_; }
        std::atomic<T>* slots() noexcept { return slots_.get(); }
        std::atomic<T>& at(std::int64_t index) noexcept {
            return slots_[static_cast<std::size_t>(index & mask_)];
        }

      private:
        std::int64_t mask_;
        std::unique_ptr<std::atomic<T>[]> slots_;
    };

    void grow(std::int64_t top, std::int64_t bottom);

    // The owner's side (see owner_bottom_ below).
    std::atomic<T>& owner_slot(std::int64_t index) noexcept {
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
    alignas(64) std::atomic<std::int64_t> top_{0};
    // bottom: one past the newest item; written only by the owner. The live buffer pointer sits
    // on the same line: a thief reads both in every steal.
    alignas(64) std::atomic<std::int64_t> bottom_{0};
    std::atomic<Buffer*> buffer_{nullptr};
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
    std::atomic<T>* owner_slots_ = nullptr;
    // Owner only: every buffer this deque ever used, the live one last. Retired buffers are
    // freed only by the destructor (see grow() for why, and for the bound on their size).
    std::vector<std::unique_ptr<Buffer>> buffers_;
};
// ANCHOR_END: class

// ANCHOR: push
template <typename T>
void ChaseLevDeque<T>::push(T item) {
    const std::int64_t b = owner_bottom_;  // the owner's copy of bottom_: no atomic load needed
    // acquire: pairs with the release half of a thief's successful CAS on top in steal(). Slot
    // t-1 was read by that thief *before* its CAS; seeing top = t here makes that read happen
    // before our store below, which may reuse the same slot (index t-1 + capacity). Without it
    // the thief's read could return the new item: one item lost, another taken twice.
    const std::int64_t t = top_.load(std::memory_order_acquire);
    if (b - t > owner_mask_) [[unlikely]]
        grow(t, b);  // full: b - t == capacity
    // relaxed: nobody may read slot b before the release store of bottom below publishes it.
    owner_slot(b).store(item, std::memory_order_relaxed);
    // seq_cst (lesson 05; release in lesson 04): pairs with the thieves' seq_cst (hence
    // acquire) load of bottom in steal() and is_empty(). A thief that sees bottom = b+1 also
    // sees the item in slot b — and everything the caller wrote before push (the Task behind a
    // Task*). seq_cst also puts this publication in the single order S of lesson 05's parking
    // protocol: the spawner's seq_cst load of the parker's state comes after it, so either that
    // load sees a worker's announcement to sleep, or the worker's recheck (is_empty()) sees
    // this store. With release, the store could still sit in the store buffer while the load
    // runs, and both sides would miss each other: a lost wake-up. On x86 this is an `xchg`.
    set_bottom(b + 1, std::memory_order_seq_cst);
}
// ANCHOR_END: push

// ANCHOR: pop
template <typename T>
std::optional<T> ChaseLevDeque<T>::pop() {
    const std::int64_t b = owner_bottom_ - 1;
    // Where item b would be, worked out before the seq_cst store below: loads after that store
    // wait for it to complete, loads before it do not.
    std::atomic<T>& slot = owner_slot(b);
    // Reserve slot b *before* looking at top: from now on a thief that sees this store will not
    // go for index b. seq_cst (an `xchg`): pairs with the seq_cst load of top right below and
    // with the thieves' seq_cst loads of top and bottom. It is the store-load ordering the whole
    // algorithm rests on: with release here (a plain `mov` that can wait in the store buffer)
    // the load of top below can be performed first; the owner then sees an old top, takes b
    // without a CAS, while a thief that does not see the reservation yet steals b as well.
    set_bottom(b, std::memory_order_seq_cst);
    // seq_cst: see the store above. Why it suffices: suppose we read top = t' < b, so we take
    // item b without a CAS, and a thief takes index b too, i.e. it read top = b and its CAS
    // moved top from b to b+1. Every write of top is a seq_cst CAS, and our load read a value
    // older than b, so our load precedes the CAS that wrote b in S; that CAS precedes the
    // thief's load of top (which read it), which precedes its load of bottom. Our store of
    // bottom precedes our load. So in S: our store < our load < CAS(b) < thief's loads, and the
    // thief's seq_cst load of bottom returns our b or a later value: it sees top >= bottom and
    // backs off — or, if we pushed again meanwhile, it gets that newer item at index b.
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    if (t > b) {
        // Empty. Undo the reservation. release: a thief that reads this value must also see
        // the slots written before it; a relaxed store would break the chain from push's
        // release (C++ release sequences no longer continue through plain stores).
        set_bottom(b + 1, std::memory_order_release);
        return std::nullopt;
    }
    // relaxed: the owner wrote this slot itself.
    T item = slot.load(std::memory_order_relaxed);
    if (t < b) return item;  // more than one item: no thief can reach index b (see above)

    // t == b: the last item, which a thief may be stealing right now. One CAS decides. seq_cst
    // like every write of top, so that every write of top is in S (the argument above needs it;
    // on x86 every order compiles to the same `lock cmpxchg`). Failure: relaxed, we use nothing.
    const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                                  std::memory_order_relaxed);
    // Either way the deque is now empty with top == b+1: put bottom back to match.
    // release: as for the empty case above.
    set_bottom(b + 1, std::memory_order_release);
    if (!won) return std::nullopt;  // a thief took it
    return item;
}
// ANCHOR_END: pop

// ANCHOR: steal
template <typename T>
ws::Steal<T> ChaseLevDeque<T>::steal() {
    // seq_cst: this load and the load of bottom below are ordered in S (load-load), mirroring
    // pop's store-then-load; pop() spells out the argument. (acquire would do here, given that
    // every write of top is a seq_cst CAS, but on x86 and ARMv8 a seq_cst load costs the same
    // as an acquire one, and the argument stays in one total order.)
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    // seq_cst: in S after our load of top, so we see the owner's reservation in pop() whenever
    // the owner could have missed our CAS. It is also an acquire that pairs with push's release
    // store of bottom: we see the item in slot t. Without seq_cst (acquire only), owner and thief
    // could both take the same item when two are left (store buffering, see pop()).
    const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
    if (t >= b) return ws::Steal<T>::empty();
    // acquire: pairs with the release store in grow(); we see the new buffer's copied slots
    // and its size. A thief may still get an old buffer here (a growth after our load of
    // bottom): that is why old buffers stay alive, and they still hold index t correctly.
    Buffer* buf = buffer_.load(std::memory_order_acquire);
    // Read the item *before* the CAS: once the CAS succeeds, top has moved past t and the owner
    // may reuse the slot at once (push's acquire load of top pairs with our CAS). relaxed: the
    // acquire load of bottom above already made the slot's store visible.
    T item = buf->at(t).load(std::memory_order_relaxed);
    // seq_cst: claims index t against other thieves and the owner's last-item CAS (atomicity
    // picks one winner); its release half pairs with push's acquire load of top (slot reuse);
    // and being seq_cst puts it in S for pop()'s argument. Failure: relaxed, we return and use
    // nothing we read.
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                      std::memory_order_relaxed)) {
        return ws::Steal<T>::retry();  // another thief or the owner took index t first
    }
    return ws::Steal<T>::success(item);
}
// ANCHOR_END: steal

// ANCHOR: grow
// Owner only, from push() when the ring is full: a buffer twice the size with the live range
// [top, bottom) copied over, published with a release store.
//
// The old buffer is not freed here: a thief may have loaded the old pointer in steal() and not
// read its slot yet; freeing it now would be a use-after-free. The owner never writes to a
// retired buffer again, so such a late thief still reads the right item there, and its CAS on
// top decides as usual. Reclaiming earlier needs hazard pointers or epochs, which would put a
// cost on every steal; keeping them is cheap because growth is geometric: the retired buffers
// have capacities c, 2c, ..., 2^(k-1)c for a live buffer of 2^k c, so together they hold
// (2^k - 1)c < 2^k c slots — always less than the live buffer. A deque never holds more than
// twice its live buffer, i.e. less than four times its high-water mark (plus the initial c).
template <typename T>
void ChaseLevDeque<T>::grow(std::int64_t top, std::int64_t bottom) {
    Buffer* old = buffers_.back().get();  // the live one
    auto bigger = std::make_unique<Buffer>(old->capacity() * 2);
    // relaxed: the owner wrote these slots itself, and the release below publishes the copies.
    // Thieves may steal some of [top, bottom) meanwhile; their copies are simply never read.
    for (std::int64_t i = top; i < bottom; ++i)
        bigger->at(i).store(old->at(i).load(std::memory_order_relaxed), std::memory_order_relaxed);
    Buffer* raw = bigger.get();
    buffers_.push_back(std::move(bigger));  // may throw: then nothing has changed
    // release: pairs with the acquire loads of buffer_ in steal() and capacity(): a thief that
    // sees the new buffer sees its copied slots and its size. Without it, a thief could read a
    // slot of the new buffer before the copy reached it.
    buffer_.store(raw, std::memory_order_release);
    use_buffer(raw);
}
// ANCHOR_END: grow

}  // namespace ws::lesson06
