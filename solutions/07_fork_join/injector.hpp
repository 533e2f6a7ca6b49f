// Given code, carried from lesson 06's solution, unchanged.
// (./workshop sync writes this copy; edit the source lesson's file instead.)
// Lesson 06: the global injector — an unbounded multi-producer multi-consumer FIFO, lock-free.
//
// Items live in a singly linked list of blocks of kBlockSize slots. Producers claim a slot at
// the tail with one CAS on `tail_.index`, consumers claim one at the head with one CAS on
// `head_.index`; after that, the slot is theirs alone. A per-slot flag says when the producer
// has finished writing the item, so a consumer that claimed a slot a little early waits for
// those few instructions instead of reading a half-written item.
//
//   head_ ─> [block: slot 0 .. slot 62 | next] ─> [block ...] ─> [block: ... | next = null] <─
//   tail_
//
// Positions only ever grow. Position p is slot (p % kLap) of its block, where kLap = kBlockSize
// + 1: the extra offset kBlockSize never names a slot. It marks "the block is used up and the
// thread that took its last slot is moving this end to the next block"; others wait the few
// instructions that takes. Because positions never repeat, a CAS on an index cannot succeed on a
// stale view (no ABA), and a thread that read a stale block pointer always fails its CAS.
//
// Reclamation (who frees a block, and why nobody can still touch it): see release_reads().
//
// Progress: no locks, and every claim is one CAS that fails only because another thread's
// succeeded. Strictly it is not lock-free: a thread that stalls in one of two windows of a few
// instructions makes others wait for it — a producer between its claim and the write of its
// slot (the consumer of that slot waits), and the thread that took a block's last slot until it
// has moved that end to the next block (the others at that end wait). The same trade-off as
// crossbeam's Injector (which Rayon uses); it buys one CAS per item and no ABA problem.
//
// Memory orderings: no standalone fences (clang 14's ThreadSanitizer does not model them). The
// claim of a tail position is a seq_cst CAS and every empty check loads the tail with seq_cst,
// so a pool can use the injector in a Dekker-style "publish, then check for sleepers" /
// "announce sleep, then recheck" protocol (lesson 05). Each operation says what it pairs with.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <thread>
#include <type_traits>
#include <utility>

#include <ws/cpu_relax.hpp>
#include <ws/steal.hpp>

#include "chase_lev_deque.hpp"

namespace ws::lesson07 {

namespace detail {
// Waiting for another thread to finish a step of a few instructions: spin briefly, then yield
// the core (on a machine with fewer cores than threads, the thread we wait for may need it).
class Backoff {
  public:
    void wait() noexcept {
        if (step_ < 6) {
            for (int i = 0; i < (1 << step_); ++i)
                ws::cpu_relax();
            ++step_;
        } else {
            std::this_thread::yield();
        }
    }

  private:
    int step_ = 0;
};
}  // namespace detail

// ANCHOR: class
template <typename T>
class Injector {
    static_assert(std::is_nothrow_move_constructible_v<T>,
                  "Injector<T> moves items out of its slots: T must be nothrow-movable");

  public:
    static constexpr std::uint64_t kBlockSize = 63;  // slots per block
    static constexpr std::uint64_t kMaxBatch = 32;   // most items one steal_batch_and_pop moves

    Injector() {
        Block* first = new_block();
        // relaxed: the injector is not shared yet; whoever receives it gets it through some
        // synchronisation (a thread's start, a mutex) that publishes these stores too.
        head_.block.store(first, std::memory_order_relaxed);
        tail_.block.store(first, std::memory_order_relaxed);
    }

    // Destroys the items still inside and frees every block. No other thread may use the
    // injector any more.
    ~Injector();

    Injector(const Injector&) = delete;
    Injector& operator=(const Injector&) = delete;

    // Any thread. Allocates a block every kBlockSize pushes; if that throws std::bad_alloc,
    // nothing was pushed and the injector is unchanged.
    void push(T item);

    // Any thread: the oldest item, empty, or retry (another consumer claimed it first).
    ws::Steal<T> steal();

    // The thread that owns `dest` (it pushes there): claims up to kMaxBatch + 1 of the oldest
    // items (about half of what is queued, within the head's block, and no more than `dest` has
    // room for), returns the oldest and pushes the others into `dest`, oldest first. One CAS for
    // the whole batch; `dest` never grows, so nothing here allocates or throws.
    ws::Steal<T> steal_batch_and_pop(ChaseLevDeque<T>& dest);

    // True if no item is inside. The tail is loaded with seq_cst (see the top of this file).
    bool is_empty() const noexcept {
        // acquire: pairs with the release store of head_.index by a consumer that moved to a
        // new block, so the seq_cst load of the tail below reads at least the tail that
        // consumer saw (otherwise the head could look ahead of the tail).
        const std::uint64_t head = head_.index.load(std::memory_order_acquire);
        // seq_cst: the recheck of a worker about to sleep; pairs with push's seq_cst CAS.
        const std::uint64_t tail = tail_.index.load(std::memory_order_seq_cst);
        // Counted in real slots: a head at a phantom offset equals slot 0 of the next block.
        return logical(head) >= logical(tail);
    }

    // Items inside; approximate under concurrency.
    std::size_t size() const noexcept {
        // relaxed: a snapshot for statistics; nothing is read on the strength of it.
        const std::uint64_t head = logical(head_.index.load(std::memory_order_relaxed));
        const std::uint64_t tail = logical(tail_.index.load(std::memory_order_relaxed));
        return tail > head ? static_cast<std::size_t>(tail - head) : 0;
    }

    // Blocks allocated and not yet freed: lets a test see that reclamation works.
    std::size_t live_blocks() const noexcept {
        // relaxed: a counter for tests, read after the threads that used it were joined.
        return static_cast<std::size_t>(live_blocks_.load(std::memory_order_relaxed));
    }

  private:
    static constexpr std::uint64_t kLap = kBlockSize + 1;

    struct Slot {
        // Set once the producer has constructed the item in `storage`.
        std::atomic<bool> written{false};
        alignas(T) unsigned char storage[sizeof(T)];

        T* item() noexcept { return std::launder(reinterpret_cast<T*>(storage)); }
    };

    struct Block {
        std::atomic<Block*> next{nullptr};
        // How many slots have been read and released; the consumer that brings it to
        // kBlockSize frees the block (see release_reads()).
        std::atomic<std::uint64_t> reads_done{0};
        Slot slots[kBlockSize];
    };

    // One end of the queue: a position and the block it lies in, on a cache line of its own
    // (producers hammer the tail, consumers the head).
    struct alignas(64) End {
        std::atomic<std::uint64_t> index{0};
        std::atomic<Block*> block{nullptr};
    };

    // Position -> count of real slots before it (the phantom offsets do not count).
    static std::uint64_t logical(std::uint64_t position) noexcept {
        return position / kLap * kBlockSize + std::min(position % kLap, kBlockSize);
    }

    Block* new_block() {
        auto* block = new Block;
        // relaxed: a statistic (see live_blocks()).
        live_blocks_.fetch_add(1, std::memory_order_relaxed);
        return block;
    }

    void delete_block(Block* block) noexcept {
        delete block;
        // relaxed: a statistic.
        live_blocks_.fetch_sub(1, std::memory_order_relaxed);
    }

    // Waits until the producer that claimed `slot` has written it, then moves the item out.
    static T take(Slot& slot) noexcept {
        detail::Backoff backoff;
        // acquire: pairs with the release store of `written` in push(): we see the constructed
        // item (and whatever the producer wrote before pushing it). Without it we could read a
        // half-constructed item.
        while (!slot.written.load(std::memory_order_acquire))
            backoff.wait();
        T* item = slot.item();
        T value(std::move(*item));
        item->~T();
        return value;
    }

    // A consumer's view before a claim: the head's position, offset and block, and the tail,
    // loaded in that order once the head is not at a phantom offset.
    struct HeadView {
        std::uint64_t head;
        std::uint64_t offset;
        Block* block;
        std::uint64_t tail;
    };
    HeadView view_head() const noexcept {
        detail::Backoff backoff;
        for (;;) {
            // acquire: pairs with the release store of head_.index in advance_head(): we see
            // head_.block pointing to the block of this position (or a later one).
            const std::uint64_t head = head_.index.load(std::memory_order_acquire);
            const std::uint64_t offset = head % kLap;
            if (offset == kBlockSize) {  // a consumer is moving the head to the next block
                backoff.wait();
                continue;
            }
            // acquire: pairs with the release store of head_.block in advance_head(). Not
            // dereferenced before the caller's CAS succeeds (a stale block makes it fail).
            Block* block = head_.block.load(std::memory_order_acquire);
            // seq_cst: see is_empty(). Loaded after the head, so it is never behind it.
            const std::uint64_t tail = tail_.index.load(std::memory_order_seq_cst);
            return {head, offset, block, tail};
        }
    }

    void advance_head(Block* block, std::uint64_t phantom);
    void release_reads(Block* block, std::uint64_t n) noexcept;

    End head_;
    End tail_;
    alignas(64) std::atomic<std::int64_t> live_blocks_{0};
};
// ANCHOR_END: class

// ANCHOR: push
template <typename T>
void Injector<T>::push(T item) {
    Block* spare = nullptr;  // the next block, allocated *before* we claim a block's last slot
    detail::Backoff backoff;
    for (;;) {
        // acquire: pairs with the release store of tail_.index below by the producer that
        // linked a new block; we then also see tail_.block pointing to it (or to a later one).
        std::uint64_t tail = tail_.index.load(std::memory_order_acquire);
        const std::uint64_t offset = tail % kLap;
        if (offset == kBlockSize) {  // another producer is moving the tail to the next block
            backoff.wait();
            continue;
        }
        // acquire: pairs with the release store of tail_.block below (the block is built).
        // If it is already a later block than `tail` lies in, the CAS below fails: positions
        // never repeat. We do not touch `block` before the CAS succeeds.
        Block* block = tail_.block.load(std::memory_order_acquire);
        // Allocating now keeps the window in which other producers wait for us short.
        if (offset + 1 == kBlockSize && spare == nullptr) spare = new_block();
        // seq_cst: the claim of position `tail`. Atomicity gives each position to one producer;
        // seq_cst puts the claim in the single total order S that lesson 05's parking protocol
        // reasons in (a worker about to sleep loads the tail with seq_cst and sees this claim,
        // or the spawner sees that worker's announcement). Failure: relaxed, we start over.
        if (!tail_.index.compare_exchange_weak(tail, tail + 1, std::memory_order_seq_cst,
                                               std::memory_order_relaxed)) {
            backoff.wait();
            continue;
        }
        if (offset + 1 == kBlockSize) {
            // We took the block's last slot; the tail is now at the phantom offset and every
            // other producer waits. Move the tail to slot 0 of a new block, then link it.
            // release: pairs with the acquire load of tail_.block above (the block is built).
            tail_.block.store(spare, std::memory_order_release);
            // release: pairs with the acquire load of tail_.index above: a producer that sees
            // the new position also sees the new block pointer stored just before.
            tail_.index.store(tail + 2, std::memory_order_release);
            // release: pairs with the acquire load in advance_head(). The consumer that moves
            // the head to the new block sees the tail there too, and so does every consumer
            // that later sees that head (acquire chains): the head is never ahead of the tail.
            block->next.store(spare, std::memory_order_release);
            spare = nullptr;
        }
        Slot& slot = block->slots[offset];
        ::new (static_cast<void*>(slot.storage)) T(std::move(item));
        // release: pairs with the acquire load in take(): the consumer sees the item. This is
        // our last access to `block`; from here on a consumer may free it.
        slot.written.store(true, std::memory_order_release);
        if (spare != nullptr) delete_block(spare);  // allocated for a claim we then lost
        return;
    }
}
// ANCHOR_END: push

// ANCHOR: steal
template <typename T>
ws::Steal<T> Injector<T>::steal() {
    auto [head, offset, block, tail] = view_head();
    if (head >= tail) return ws::Steal<T>::empty();
    // seq_cst: claims position `head` against the other consumers (one CAS wins). An acq_rel
    // CAS would do for the queue itself; seq_cst costs the same `lock cmpxchg` on x86 and keeps
    // every claim in S. Failure: relaxed, we report the lost race.
    if (!head_.index.compare_exchange_strong(head, head + 1, std::memory_order_seq_cst,
                                             std::memory_order_relaxed)) {
        return ws::Steal<T>::retry();
    }
    // The slot is ours. The block cannot be freed before we release our read below.
    if (offset + 1 == kBlockSize) advance_head(block, head + 1);
    T value = take(block->slots[offset]);
    release_reads(block, 1);
    return ws::Steal<T>::success(std::move(value));
}
// ANCHOR_END: steal

// ANCHOR: steal_batch
template <typename T>
ws::Steal<T> Injector<T>::steal_batch_and_pop(ChaseLevDeque<T>& dest) {
    auto [head, offset, block, tail] = view_head();
    if (head >= tail) return ws::Steal<T>::empty();
    // Claimed tail positions in this block: up to the tail if it lies in the same block (its
    // offset may be the phantom one: then every slot is claimed), else to the block's end.
    const std::uint64_t in_block = (tail / kLap == head / kLap) ? tail - head : kBlockSize - offset;
    // About half of everything queued, so that other workers still find some (at least one),
    // at most kMaxBatch + 1, and never past the end of this block.
    const std::uint64_t half = (logical(tail) - logical(head) + 1) / 2;
    // Nor more than `dest` holds without growing: a growth allocates, and a std::bad_alloc after
    // our CAS would lose the claimed items (no other consumer can reach them) and strand the
    // block (its reads would never all be released). Only we push onto `dest` and thieves only
    // take from it, so the room seen here cannot shrink before our pushes.
    const std::uint64_t room = dest.capacity() - std::min(dest.size(), dest.capacity());
    const std::uint64_t n = std::min({in_block, half, kMaxBatch + 1, room + 1});
    // seq_cst: claims positions [head, head + n) at once; see steal().
    if (!head_.index.compare_exchange_strong(head, head + n, std::memory_order_seq_cst,
                                             std::memory_order_relaxed)) {
        return ws::Steal<T>::retry();
    }
    if (offset + n == kBlockSize) advance_head(block, head + n);
    T first = take(block->slots[offset]);
    for (std::uint64_t i = 1; i < n; ++i)
        dest.push(take(block->slots[offset + i]));
    release_reads(block, n);
    return ws::Steal<T>::success(std::move(first));
}
// ANCHOR_END: steal_batch

// ANCHOR: reclaim
// We claimed the block's last slot; the head sits at the phantom position `phantom`, and every
// other consumer waits until we move it to slot 0 of the next block.
template <typename T>
void Injector<T>::advance_head(Block* block, std::uint64_t phantom) {
    detail::Backoff backoff;
    Block* next;
    // acquire: pairs with the release store of `next` in push(). The producer that claimed
    // this block's last slot moves the tail and links the next block right after its claim,
    // which came before ours; we wait out those few instructions.
    while ((next = block->next.load(std::memory_order_acquire)) == nullptr)
        backoff.wait();
    // release: pairs with the acquire loads of head_.block in steal(): the block is built.
    head_.block.store(next, std::memory_order_release);
    // release: pairs with the acquire loads of head_.index: a consumer that sees the new
    // position also sees the block pointer stored just before, and (through our acquire of
    // `next`) the tail's move to the next block, so its later load of the tail is not behind.
    head_.index.store(phantom + 1, std::memory_order_release);
}

// Who frees a block: the consumer whose release brings `reads_done` to kBlockSize, i.e. the
// last of the kBlockSize consumers that each claimed and read one of its slots.
//
// Why nobody can still touch it then:
//  - Every thread dereferences a block only after a successful CAS that claimed one of its
//    positions (push, steal, steal_batch_and_pop read head_/tail_.block earlier, but do not
//    use the pointer before the claim; a stale pointer means the CAS fails, as positions never
//    repeat). All kBlockSize slots are claimed by now, so no new access can begin.
//  - A producer's last access to the block is its release store of `written`; the consumer of
//    that slot saw it (acquire) before it released its read here. The producer of the last slot
//    also wrote `next` before that.
//  - A consumer's accesses (the slot, `next` in advance_head()) come before its release here.
//  - The fetch_add below is acq_rel, and all fetch_adds on reads_done form one release sequence,
//    so the consumer that sees kBlockSize - n synchronises with every earlier release: every
//    access by every thread to this block happens before the delete.
//  - head_ and tail_ have moved past the block: the tail when its last slot was claimed, the
//    head in advance_head(), which the consumer of the last slot ran before releasing its read.
template <typename T>
void Injector<T>::release_reads(Block* block, std::uint64_t n) noexcept {
    // acq_rel: release publishes our accesses to the block to whoever frees it; acquire (for
    // the one that frees it) makes everyone else's accesses happen before the delete.
    if (block->reads_done.fetch_add(n, std::memory_order_acq_rel) + n == kBlockSize)
        delete_block(block);
}
// ANCHOR_END: reclaim

template <typename T>
Injector<T>::~Injector() {
    // relaxed: no other thread uses the injector any more (the caller made sure of it, e.g. by
    // joining them), so plain reads of our own atomics are enough.
    std::uint64_t head = head_.index.load(std::memory_order_relaxed);
    const std::uint64_t tail = tail_.index.load(std::memory_order_relaxed);
    Block* block = head_.block.load(std::memory_order_relaxed);
    for (; head < tail; ++head) {
        const std::uint64_t offset = head % kLap;
        if (offset == kBlockSize) {  // quiescent: only ever between two blocks' positions
            Block* next = block->next.load(std::memory_order_relaxed);
            delete_block(block);
            block = next;
            continue;
        }
        block->slots[offset].item()->~T();
    }
    while (block != nullptr) {
        Block* next = block->next.load(std::memory_order_relaxed);
        delete_block(block);
        block = next;
    }
}

}  // namespace ws::lesson07
