// Given code, carried from lesson 07's solution, unchanged.
// (./workshop sync writes this copy; edit the source lesson's file instead.)
// Lesson 06: the global injector — an unbounded multi-producer multi-consumer FIFO, no locks.
//
// Items live in a singly linked list of blocks of kBlockSize slots. Producers claim a slot at
// the tail with one CAS on `tail_.index`, consumers claim one at the head with one CAS on
// `head_.index`; after that, the slot is theirs alone. A consumer that claimed a slot before
// its producer finished writing it waits for the slot's `written` flag.
//
//   head_ ─> [block: slot 0 .. slot 62 | next] ─> [block ...] ─> [block: ... | next = null] <─
//   tail_
//
// Progress: no locks, one CAS per claim; but a thread stalled between its claim and the end of
// its step (writing the slot, or moving an end to the next block) makes others at that slot or
// end wait for it, so strictly it is not lock-free.
//
// The atomics are ws::atomic<T>, which is std::atomic<T> (<ws/atomic.hpp>); the interleaving
// explorer's tests (tests/06_injector/model) build with an instrumented one instead.
//
// Memory orderings: no standalone fences (ThreadSanitizer does not model them). The claim of a
// tail position is a seq_cst CAS and every emptiness check loads the tail with seq_cst, so the
// parker's "publish, then check for sleepers" / "announce, then recheck" protocol can use it.
// Each operation says what it pairs with.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <thread>
#include <type_traits>
#include <utility>

#include <ws/atomic.hpp>
#include <ws/cpu_relax.hpp>
#include <ws/steal.hpp>

#include "chase_lev_deque.hpp"

namespace ws::lesson09 {

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

    // True if no item is inside: the recheck of a worker about to sleep.
    bool is_empty() const noexcept {
        // acquire: pairs with the release of every write of head_.index: the tail load below
        // is then not behind the one its writer saw; without it, a head ahead of the tail.
        const std::uint64_t head = head_.index.load(std::memory_order_acquire);
        // seq_cst: pairs with push's seq_cst claim in S (the parker's proof); as acquire, a
        // recheck could miss a task whose spawner missed the sleeper: a lost wake-up.
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
    // Positions only grow. Position p is slot p % kLap of its block; the extra offset
    // kBlockSize names no slot: it marks "the block is used up, and the thread that took its
    // last slot is moving this end to the next block" (others wait for it). As positions never
    // repeat, a CAS on an index cannot succeed on a stale view (no ABA).
    static constexpr std::uint64_t kLap = kBlockSize + 1;

    struct Slot {
        // Set once the producer has constructed the item in `storage`.
        ws::atomic<bool> written{false};
        alignas(T) unsigned char storage[sizeof(T)];

        T* item() noexcept { return std::launder(reinterpret_cast<T*>(storage)); }
    };

    struct Block {
        ws::atomic<Block*> next{nullptr};
        // How many slots have been read and released; the consumer that brings it to
        // kBlockSize frees the block (see release_reads()).
        ws::atomic<std::uint64_t> reads_done{0};
        Slot slots[kBlockSize];
    };

    // One end of the queue: a position and the block it lies in, on a cache line of its own
    // (producers hammer the tail, consumers the head).
    struct alignas(64) End {
        ws::atomic<std::uint64_t> index{0};
        ws::atomic<Block*> block{nullptr};
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
        // item and what the producer wrote before; without it, a half-constructed item.
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
            // acquire: pairs with the release store in advance_head() (and the claims after it):
            // head_.block is then this position's block or later; without it, the wrong block.
            const std::uint64_t head = head_.index.load(std::memory_order_acquire);
            const std::uint64_t offset = head % kLap;
            if (offset == kBlockSize) {  // a consumer is moving the head to the next block
                backoff.wait();
                continue;
            }
            // acquire: pairs with the release store in advance_head(): the block is built. Not
            // dereferenced before the caller's CAS succeeds (a stale block makes it fail).
            Block* block = head_.block.load(std::memory_order_acquire);
            // seq_cst, as in is_empty(): a search that begins after a spawner's check in S sees
            // its claim (the parker's proof). After the head (acquire): never behind it.
            const std::uint64_t tail = tail_.index.load(std::memory_order_seq_cst);
            return {head, offset, block, tail};
        }
    }

    void advance_head(Block* block, std::uint64_t phantom);
    void release_reads(Block* block, std::uint64_t n) noexcept;

    End head_;
    End tail_;
    alignas(64) ws::atomic<std::int64_t> live_blocks_{0};
};
// ANCHOR_END: class

// ANCHOR: push
template <typename T>
void Injector<T>::push(T item) {
    Block* spare = nullptr;  // the next block, allocated *before* we claim a block's last slot
    detail::Backoff backoff;
    for (;;) {
        // acquire: pairs with the release store of tail_.index below (and the claims after it):
        // tail_.block is then this position's block or later; without it, the wrong block.
        std::uint64_t tail = tail_.index.load(std::memory_order_acquire);
        const std::uint64_t offset = tail % kLap;
        if (offset == kBlockSize) {  // another producer is moving the tail to the next block
            backoff.wait();
            continue;
        }
        // acquire: pairs with the release store of tail_.block below: the block is built. A
        // later block than `tail`'s makes the CAS fail; we touch `block` only after it succeeds.
        Block* block = tail_.block.load(std::memory_order_acquire);
        // Allocating now keeps the window in which other producers wait for us short.
        if (offset + 1 == kBlockSize && spare == nullptr) spare = new_block();
        // seq_cst: claims position `tail` (atomicity: one producer each); pairs in S with the
        // recheck's load in is_empty(); as acq_rel, a lost wake-up. Failure: relaxed, retry.
        if (!tail_.index.compare_exchange_weak(tail, tail + 1, std::memory_order_seq_cst,
                                               std::memory_order_relaxed)) {
            backoff.wait();
            continue;
        }
        if (offset + 1 == kBlockSize) {
            // We took the block's last slot; the tail is now at the phantom offset and every
            // other producer waits. Move the tail to slot 0 of a new block, then link it.
            // release: pairs with the acquire load of tail_.block above: the block is built.
            tail_.block.store(spare, std::memory_order_release);
            // release: pairs with the acquire load of tail_.index above: a producer that sees
            // the new position sees the new block pointer; without it, the wrong block.
            tail_.index.store(tail + 2, std::memory_order_release);
            // release: pairs with the acquire load in advance_head(): the consumer that moves the
            // head to the new block (and whoever sees that head) sees the tail there too.
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
    // seq_cst: claims position `head` (one CAS wins). Its release half pairs with the acquire
    // loads of head_.index: their tail load is not behind ours. acq_rel would do. Failure: relaxed.
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
    // acquire: pairs with the release store of `next` in push(): the next block is built, and
    // the tail is past this one. Its producer links it right after its claim; we wait for that.
    while ((next = block->next.load(std::memory_order_acquire)) == nullptr)
        backoff.wait();
    // release: pairs with the acquire load of head_.block in view_head(): the block is built.
    head_.block.store(next, std::memory_order_release);
    // release: pairs with the acquire loads of head_.index: whoever sees the new position sees
    // the new block pointer and the tail's move (via `next`); without it, the wrong block.
    head_.index.store(phantom + 1, std::memory_order_release);
}

// Who frees a block: the consumer whose release brings `reads_done` to kBlockSize, i.e. the
// last of the consumers that claimed and read its slots. Why nobody can still touch it then:
// the guide's lesson 06 chapter, "Reclaiming a block".
template <typename T>
void Injector<T>::release_reads(Block* block, std::uint64_t n) noexcept {
    // acq_rel: release publishes our accesses to the block to whoever frees it; acquire (for
    // the one that frees it) makes everyone else's happen before the delete: no use-after-free.
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

}  // namespace ws::lesson09
