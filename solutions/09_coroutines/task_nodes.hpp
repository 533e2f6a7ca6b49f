// Given code, carried from lesson 07's solution, unchanged.
// (./workshop sync writes this copy; edit the source lesson's file instead.)
// Lesson 07, given code (not an exercise): recycling the pool's task nodes.
//
// A spawned task travels through the deques and the injector in a node (ThreadPool::TaskNode).
// A malloc on the spawning thread and a free on the thread that ran the task cost more than a
// tiny task itself, so nodes are recycled, and never freed before the pool:
//   - every node lives in a block the pool owns (so a cache that outlives the pool holds
//     dangling pointers but never frees anything);
//   - each worker keeps a free list of its own (WorkerCache), which only its thread touches:
//     a node goes back to the worker that ran it, and that worker's next spawn takes it again;
//   - a worker whose list grows past kKeepPerWorker gives it all back, as one chain, to a
//     lock-free stack of surplus chains;
//   - a thread outside the pool keeps its own cache in a thread_local, keyed by the pool's id,
//     and refills it by taking the whole stack at once.
//
// Node is the pool's node type: default-constructible, with the two links this file uses,
// `Node* next` (in a free list) and `Node* ahead` (a node further down the same list, to
// prefetch).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace ws::lesson09 {

template <typename Node>
class TaskNodes {
  public:
    // What each worker keeps for itself; only its own thread touches it.
    struct WorkerCache {
        Node* free_nodes = nullptr;  // recycled nodes, newest first
        std::size_t free_count = 0;
        Node* recently_freed[4] = {};  // the last nodes freed, for Node::ahead
        unsigned recent = 0;
    };

    // `prepare` readies each fresh node for the pool, once (ThreadPool: the job's run function
    // and the pool it belongs to).
    explicit TaskNodes(std::function<void(Node&)> prepare)
        : prepare_(std::move(prepare)),
          id_(next_id_.fetch_add(1, std::memory_order_relaxed)) {}  // relaxed: a unique number

    TaskNodes(const TaskNodes&) = delete;
    TaskNodes& operator=(const TaskNodes&) = delete;

    // A node for one spawn, with `next` null: from `mine`, the calling worker's cache, or — when
    // mine is null, for a thread outside the pool — from the calling thread's outside cache.
    // std::bad_alloc when it needs a fresh block and there is no memory.
    Node* allocate(WorkerCache* mine);
    // On the worker that ran the node (whose task is already destroyed): keeps it in `mine`.
    void free(WorkerCache& mine, Node* node) noexcept;
    // Outside the pool: a node that allocate(nullptr) just handed out and that was never queued
    // (the spawn failed) goes back into the calling thread's outside cache.
    void give_back(Node* node) noexcept;

  private:
    static constexpr std::size_t kNodeBlock = 64;       // nodes allocated at once
    static constexpr std::size_t kKeepPerWorker = 256;  // a worker's cache above this goes back

    // The calling thread's cache of task nodes when it spawns from outside a pool: nodes of the
    // pool `pool_id` (from a pool that has since died they are dangling, and simply dropped).
    struct OutsideCache {
        std::uint64_t pool_id = 0;
        Node* nodes = nullptr;
    };
    static inline thread_local OutsideCache tl_outside_cache_{};
    static inline std::atomic<std::uint64_t> next_id_{1};  // 0: no pool (an empty cache)

    Node* new_nodes();

    std::function<void(Node&)> prepare_;
    const std::uint64_t id_;  // tells a thread's outside cache which pool its nodes belong to
    // Surplus chains from the workers: a lock-free stack that is only ever emptied whole.
    alignas(64) std::atomic<Node*> returned_{nullptr};
    std::mutex blocks_mutex_;
    std::vector<std::unique_ptr<Node[]>> blocks_;  // guarded by blocks_mutex_
};

// ANCHOR: nodes
template <typename Node>
Node* TaskNodes<Node>::allocate(WorkerCache* mine) {
    Node* node = nullptr;
    if (mine != nullptr) {
        WorkerCache& cache = *mine;
        if (cache.free_nodes == nullptr) {
            // acquire: pairs with the release CAS in free() — the nodes' fields are ours
            cache.free_nodes = returned_.exchange(nullptr, std::memory_order_acquire);
            cache.free_count = 0;  // unknown; only bounds how much we keep
        }
        if (cache.free_nodes == nullptr) cache.free_nodes = new_nodes();
        node = cache.free_nodes;
        cache.free_nodes = node->next;
        if (cache.free_count > 0) --cache.free_count;
    } else {
        OutsideCache& cache = tl_outside_cache_;
        if (cache.pool_id != id_) cache = {id_, nullptr};  // another pool's nodes: drop them
        Node* cached = cache.nodes;
        // acquire: pairs with the release CAS in free(), as above
        if (cached == nullptr) cached = returned_.exchange(nullptr, std::memory_order_acquire);
        if (cached == nullptr) cached = new_nodes();
        node = cached;
        cache.nodes = node->next;
    }
    // The nodes ahead are most likely in the cache of the worker that ran them: start bringing
    // one over now, a few spawns before it is needed. (A hint only: `ahead` may be stale, but
    // it always points into the pool's blocks, and a prefetch never faults.)
    if (node->ahead != nullptr) __builtin_prefetch(node->ahead, 1);
    node->next = nullptr;
    return node;
}

// A chain of fresh nodes, in a block the pool owns.
template <typename Node>
Node* TaskNodes<Node>::new_nodes() {
    auto block = std::make_unique<Node[]>(kNodeBlock);
    for (std::size_t i = 0; i < kNodeBlock; ++i) {
        prepare_(block[i]);
        block[i].next = i + 1 < kNodeBlock ? &block[i + 1] : nullptr;
    }
    Node* first = block.get();
    std::lock_guard lock(blocks_mutex_);
    blocks_.push_back(std::move(block));
    return first;
}

// On the worker that ran the node. Keeps it; a surplus goes back to the shared stack as one
// chain (the pool's whole cache, in the flat-spawn case, flows from workers to the outside
// spawner this way).
template <typename Node>
void TaskNodes<Node>::free(WorkerCache& mine, Node* node) noexcept {
    // The list pops newest first, so the node freed 4 frees ago comes 4 pops after this one.
    node->ahead = mine.recently_freed[mine.recent];
    mine.recently_freed[mine.recent] = node;
    mine.recent = (mine.recent + 1) % 4;
    node->next = mine.free_nodes;
    mine.free_nodes = node;
    if (++mine.free_count < kKeepPerWorker) return;
    Node* first = mine.free_nodes;
    Node* last = first;
    while (last->next != nullptr)
        last = last->next;
    mine.free_nodes = nullptr;
    mine.free_count = 0;
    Node* head = returned_.load(std::memory_order_relaxed);  // relaxed: the CAS checks it
    do {
        last->next = head;
        // release: the chain's links (and the nodes' reset tasks) go with it; pairs with the
        // acquire exchanges in allocate(). A push onto a stack that is only ever emptied
        // whole has no ABA problem.
    } while (!returned_.compare_exchange_weak(head, first, std::memory_order_release,
                                              std::memory_order_relaxed));
}

// Outside the pool, on the thread whose allocate(nullptr) handed the node out: back where it
// came from (that call set the cache's pool to this one).
template <typename Node>
void TaskNodes<Node>::give_back(Node* node) noexcept {
    OutsideCache& cache = tl_outside_cache_;
    node->next = cache.nodes;
    cache.nodes = node;
}
// ANCHOR_END: nodes

}  // namespace ws::lesson09
