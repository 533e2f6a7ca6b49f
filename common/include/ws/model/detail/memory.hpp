// The memory model: every atomic location's stores in modification order, each thread's vector
// clocks, and the seq_cst order's constraints. It answers one question for the explorer — which
// stores may this load read? — and records what each operation does. Which one a load does
// read is the explorer's choice (explore.hpp lists the rules and what is left out).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ws/model/detail/clock.hpp>
#include <ws/model/detail/hooks.hpp>
#include <ws/model/detail/sc_order.hpp>

namespace ws::model::detail {

// consume is treated as acquire, as compilers do.
inline bool acquires(std::memory_order o) noexcept {
    return o == std::memory_order_consume || o == std::memory_order_acquire ||
           o == std::memory_order_acq_rel || o == std::memory_order_seq_cst;
}
inline bool releases(std::memory_order o) noexcept {
    return o == std::memory_order_release || o == std::memory_order_acq_rel ||
           o == std::memory_order_seq_cst;
}
inline bool is_seq_cst(std::memory_order o) noexcept {
    return o == std::memory_order_seq_cst;
}

struct Store {
    Bits value;
    int thread;           // who wrote it
    std::uint32_t event;  // the writer's event number
    std::uint32_t step;   // the trace step that wrote it
    bool seq_cst;
    Clock release;          // joined into an acquire reader's happens-before clock (its release
                            // sequence: empty for a relaxed store)
    Clock seq_cst_release;  // joined into a seq_cst reader's strongly-happens-before clock: set
                            // only when an seq_cst store heads the release sequence
    Clock writer;           // the writer's happens-before clock right after the store
};

// One thread's access to a location: its event number and the store it read or wrote.
struct Access {
    std::uint32_t event;
    std::uint32_t store;  // index in modification order
    std::uint32_t step;
};

struct Location {
    std::uint32_t id;  // creation order in this execution: "a<id>" in the trace
    const void* address;
    Format format;
    Where created_at;
    bool alive = true;
    int destroyed_by = -1;
    std::uint32_t destroyed_step = 0;
    std::vector<Store> stores;  // in modification order; [0] is the initial value
    // Per thread, its accesses in program order (the store indices never decrease: coherence).
    std::array<std::vector<Access>, kMaxThreads> accesses;
    // The seq_cst accesses, by rank in coherence order (see memory.cpp), with their S node.
    std::vector<std::pair<std::uint32_t, int>> seq_cst;
    // Per thread: the store its last load read (+1) and its write count then (spin detection).
    std::array<std::pair<std::uint32_t, std::uint32_t>, kMaxThreads> last_read{};
};

class Memory {
  public:
    // Every operation of a thread starts with begin(): it numbers the event.
    void begin(int thread);

    void thread_started(int parent, int child);  // the spawn synchronises with the start
    void thread_joined(int joiner, int joined);  // the end synchronises with the join

    Location& create(int thread, const void* address, Bits initial, Format format,
                     const Where& where, std::uint32_t step);
    Location* find(const void* address);
    const Location& location(std::uint32_t id) const { return *locations_[id]; }
    // Marks it destroyed. Returns an access of another thread that does not happen before
    // the destruction (a race on reclamation), or nullptr; `racer` gets that thread.
    const Access* destroy(int thread, Location& loc, std::uint32_t step, int& racer);

    // The stores a load with this order may read, as indices, the newest first (never empty).
    std::vector<std::uint32_t> readable(int thread, const Location& loc, std::memory_order order);
    // Reads store `index`. Returns true if the thread seems to spin: it read the same store as
    // its last load of this location and wrote nothing in between.
    bool load(int thread, Location& loc, std::uint32_t index, std::memory_order order,
              std::uint32_t step);
    void store(int thread, Location& loc, Bits value, std::memory_order order, std::uint32_t step);
    // Reads the newest store and writes `value` after it, atomically.
    void read_modify_write(int thread, Location& loc, Bits value, std::memory_order order,
                           std::uint32_t step);

    // A load that reads a store that has not run yet (load buffering, see explore.hpp): a
    // promise. It reads nothing now; for a seq_cst load it takes its place in S's graph (after
    // what strongly happens before it) and returns its node, else -1.
    int promise(int thread, std::memory_order order);
    // Keeps the promise that `thread`'s event `event` made, with store `index` (the newest):
    // records the read; false if S can then no longer exist (the execution is impossible).
    bool keep_promise(int thread, std::uint32_t event, int node, Location& loc, std::uint32_t index,
                      std::uint32_t step);
    // Does the atomic's construction happen before what `thread` does next? If not, an access
    // is a data race on its (non-atomic) initialisation: the object was not published properly.
    bool constructed_before(int thread, const Location& loc) const {
        const Store& init = loc.stores.front();
        return init.thread == thread ||
               threads_[thread].happens_before.includes(init.thread, init.event);
    }
    bool happens_before(int thread, std::uint32_t event, const Store& store) const {
        return store.writer.includes(thread, event);
    }
    std::uint32_t event(int thread) const { return threads_[thread].happens_before.at[thread]; }

  private:
    struct ThreadView {
        Clock happens_before;   // [u]: u's events that happen before this thread's next one
        Clock strongly_before;  // the same for "strongly happens before" (used for S)
        std::uint32_t writes = 0;
        std::vector<std::pair<std::uint32_t, int>> seq_cst_nodes;  // (event, S node)
    };

    std::uint32_t coherence_floor(int thread, const Location& loc) const;
    std::vector<int> seq_cst_predecessors(int thread, const Clock& strongly_before) const;
    void neighbours(const Location& loc, std::uint32_t rank, std::vector<int>& before,
                    std::vector<int>& after) const;
    bool seq_cst_read_allowed(int thread, const Location& loc, std::uint32_t index) const;
    void add_seq_cst(int thread, Location& loc, std::uint32_t rank);
    void record(int thread, Location& loc, std::uint32_t index, std::uint32_t step);

    std::vector<std::unique_ptr<Location>> locations_;
    std::unordered_map<const void*, Location*> by_address_;
    std::array<ThreadView, kMaxThreads> threads_{};
    ScOrder s_;
};

}  // namespace ws::model::detail
