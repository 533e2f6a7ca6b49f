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
// The atomics are ws::atomic<T>, which is std::atomic<T> (<ws/atomic.hpp>); the interleaving
// explorer's tests (tests/06_injector/model) build with an instrumented one instead.
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

#include <ws/atomic.hpp>
#include <ws/cpu_relax.hpp>
#include <ws/not_implemented.hpp>
#include <ws/steal.hpp>

#include "chase_lev_deque.hpp"

namespace ws::lesson06 {

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
    alignas(64) ws::atomic<std::int64_t> live_blocks_{0};
};

template <typename T>
void Injector<T>::push(T item) {
    // TODO(exercise 1): the item gets the next position, is constructed in its slot and becomes
    // readable (written) — from any number of producers at once, each position given to one.
    // Rules: the claim of a position is the publication the parking protocol reasons about, so
    // it lies in S; a producer touches a block only once its claim succeeded; whoever takes a
    // block's last slot moves the tail on to a new block while the others wait at the phantom
    // offset. Checked by Lesson06Ex1.
    (void)item;
    throw NotImplemented("lesson 06, exercise 1: Injector::push");
}

template <typename T>
ws::Steal<T> Injector<T>::steal() {
    // TODO(exercise 1): returns the oldest item, each exactly once across consumers; empty
    // when the head has caught up with the tail, retry when another consumer won the race.
    // Rules: claim first, touch the slot after; the consumer of a block's last slot moves the
    // head on (advance_head) before anyone can pass; every slot read is released
    // (release_reads), or its block is never freed. Checked by Lesson06Ex1.
    throw NotImplemented("lesson 06, exercise 1: Injector::steal");
}

template <typename T>
ws::Steal<T> Injector<T>::steal_batch_and_pop(ChaseLevDeque<T>& dest) {
    // TODO(exercise 3): one claim takes about half of what is queued (at most kMaxBatch + 1):
    // the oldest is returned, the others land in `dest`, in order. Rules: one block at a time;
    // once claimed, nothing may be lost — and growing `dest` can throw, so claim no more than
    // it holds without growing. As given, it takes a single item and moves nothing.
    // Checked by Lesson06Ex3.
    (void)dest;
    return steal();
}

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

template <typename T>
void Injector<T>::release_reads(Block* block, std::uint64_t n) noexcept {
    // TODO(exercise 2): a block is freed exactly once, by whichever consumer finishes it, and
    // only when no thread can touch it any more. Rule: one counter per block decides, and only
    // the consumer whose release completes it may free it. As given, used-up blocks are never
    // freed. Checked by Lesson06Ex2.
    (void)block;
    (void)n;
}

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

}  // namespace ws::lesson06
