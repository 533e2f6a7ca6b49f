// The memory model (see memory.hpp and, for the rules, explore.hpp).
//
// Coherence order on one location, as ranks: a store at index i of the modification order has
// rank 2i, a load that read store i has rank 2i + 1 (a read-modify-write that wrote store i has
// rank 2i). Operation A is coherence-ordered before B (C++20 [atomics.order]/3) exactly when
// rank(A) < rank(B); two loads of the same store are not ordered. The seq_cst order S must
// agree with that order between seq_cst operations, and with "strongly happens before".
#include "ws/model/detail/memory.hpp"

#include <algorithm>

namespace ws::model::detail {

void Memory::begin(int thread) {
    ThreadView& v = threads_[thread];
    // C++20 [intro.races]/12: A strongly happens before D if A is sequenced before some B that
    // happens before some C sequenced before D. The latest event of u known to happen before
    // this thread's previous event is such a B, so every event of u *strictly before* it is
    // strongly before this event. (A release/acquire pair that is not seq_cst on both ends
    // orders only what lies strictly before and after it; seq_cst pairs are added in load().)
    for (int u = 0; u < kMaxThreads; ++u) {
        if (u != thread && v.happens_before.at[u] > 0)
            v.strongly_before.at[u] = std::max(v.strongly_before.at[u], v.happens_before.at[u] - 1);
    }
    v.strongly_before.at[thread] = v.happens_before.at[thread];  // sequenced before
    ++v.happens_before.at[thread];
}

void Memory::thread_started(int parent, int child) {
    threads_[child] = ThreadView{};
    threads_[child].happens_before = threads_[parent].happens_before;
    threads_[child].strongly_before = threads_[parent].happens_before;
}

void Memory::thread_joined(int joiner, int joined) {
    threads_[joiner].happens_before.join(threads_[joined].happens_before);
    threads_[joiner].strongly_before.join(threads_[joined].happens_before);
}

Location& Memory::create(int thread, const void* address, Bits initial, Format format,
                         const Where& where, std::uint32_t step) {
    auto loc = std::make_unique<Location>();
    loc->id = static_cast<std::uint32_t>(locations_.size());
    loc->address = address;
    loc->format = format;
    loc->created_at = where;
    // The initialisation is not atomic: whoever reads it later happens after it (a thread
    // start, a release/acquire pair), or else the program has a data race.
    loc->stores.push_back(Store{
        initial, thread, event(thread), step, false, {}, {}, threads_[thread].happens_before});
    record(thread, *loc, 0, step);
    by_address_[address] = loc.get();  // a location reborn at a reused address is a new one
    locations_.push_back(std::move(loc));
    return *locations_.back();
}

Location* Memory::find(const void* address) {
    const auto it = by_address_.find(address);
    return it == by_address_.end() ? nullptr : it->second;
}

const Access* Memory::destroy(int thread, Location& loc, std::uint32_t step, int& racer) {
    loc.alive = false;
    loc.destroyed_by = thread;
    loc.destroyed_step = step;
    const Clock& hb = threads_[thread].happens_before;
    for (int u = 0; u < kMaxThreads; ++u) {
        if (u == thread || loc.accesses[u].empty()) continue;
        if (!hb.includes(u, loc.accesses[u].back().event)) {
            racer = u;
            return &loc.accesses[u].back();
        }
    }
    return nullptr;
}

// The oldest store this thread may read: no older than any store that an access happening
// before this point read or wrote (write-read and read-read coherence, and the thread's own
// earlier accesses).
std::uint32_t Memory::coherence_floor(int thread, const Location& loc) const {
    const Clock& hb = threads_[thread].happens_before;
    std::uint32_t floor = 0;
    for (int u = 0; u < kMaxThreads; ++u) {
        const auto& acc = loc.accesses[u];
        const auto it =
            std::upper_bound(acc.begin(), acc.end(), hb.at[u],
                             [](std::uint32_t event, const Access& a) { return event < a.event; });
        if (it != acc.begin()) floor = std::max(floor, std::prev(it)->store);
    }
    return floor;
}

std::vector<std::uint32_t> Memory::readable(int thread, const Location& loc,
                                            std::memory_order order) {
    const auto newest = static_cast<std::uint32_t>(loc.stores.size() - 1);
    const std::uint32_t floor = coherence_floor(thread, loc);
    std::vector<std::uint32_t> out;
    for (std::uint32_t i = newest + 1; i-- > floor;) {
        // The newest store is always consistent with S: nothing is coherence-after reading it.
        if (i == newest || !is_seq_cst(order) || seq_cst_read_allowed(thread, loc, i))
            out.push_back(i);
    }
    return out;
}

// For each thread, its latest seq_cst operation that strongly happens before this one.
std::vector<int> Memory::seq_cst_predecessors(int thread, const Clock& strongly_before) const {
    std::vector<int> out;
    for (int u = 0; u < kMaxThreads; ++u) {
        const auto& nodes = threads_[u].seq_cst_nodes;
        const std::uint32_t limit = u == thread ? event(thread) - 1 : strongly_before.at[u];
        const auto it = std::upper_bound(
            nodes.begin(), nodes.end(), limit,
            [](std::uint32_t e, const std::pair<std::uint32_t, int>& n) { return e < n.first; });
        if (it != nodes.begin()) out.push_back(std::prev(it)->second);
    }
    return out;
}

// The seq_cst accesses of `loc` just below `rank` and just above it in coherence order: S
// must put the first before an operation of that rank, and the second after it. (The ones
// further away are ordered through these.)
void Memory::neighbours(const Location& loc, std::uint32_t rank, std::vector<int>& before,
                        std::vector<int>& after) const {
    const auto& sc = loc.seq_cst;
    auto by_rank = [](const std::pair<std::uint32_t, int>& a, std::uint32_t r) {
        return a.first < r;
    };
    const auto low = std::lower_bound(sc.begin(), sc.end(), rank, by_rank);
    if (low != sc.begin()) {
        const std::uint32_t r = std::prev(low)->first;
        for (auto it = low; it != sc.begin() && std::prev(it)->first == r; --it)
            before.push_back(std::prev(it)->second);
    }
    auto high = low;
    while (high != sc.end() && high->first == rank)
        ++high;
    for (auto it = high; it != sc.end() && it->first == high->first; ++it)
        after.push_back(it->second);
}

// May a seq_cst load read store `index`? Only if S can still exist: reading it puts the load
// after the seq_cst operations coherence-before it and strongly-before it, and before those
// coherence-after it, so no path may lead from the latter back to the former.
bool Memory::seq_cst_read_allowed(int thread, const Location& loc, std::uint32_t index) const {
    Clock strongly = threads_[thread].strongly_before;
    strongly.join(loc.stores[index].seq_cst_release);
    std::vector<int> before = seq_cst_predecessors(thread, strongly);
    std::vector<int> after;
    neighbours(loc, 2 * index + 1, before, after);
    return !s_.reaches_any(after, before);
}

void Memory::add_seq_cst(int thread, Location& loc, std::uint32_t rank) {
    const int node = s_.add_node();
    std::vector<int> before = seq_cst_predecessors(thread, threads_[thread].strongly_before);
    std::vector<int> after;
    neighbours(loc, rank, before, after);
    for (int b : before)
        s_.add_edge(b, node);
    for (int a : after)
        s_.add_edge(node, a);
    const auto at = std::upper_bound(
        loc.seq_cst.begin(), loc.seq_cst.end(), rank,
        [](std::uint32_t r, const std::pair<std::uint32_t, int>& a) { return r < a.first; });
    loc.seq_cst.insert(at, {rank, node});
    threads_[thread].seq_cst_nodes.emplace_back(event(thread), node);
}

void Memory::record(int thread, Location& loc, std::uint32_t index, std::uint32_t step) {
    loc.accesses[thread].push_back(Access{event(thread), index, step});
}

bool Memory::load(int thread, Location& loc, std::uint32_t index, std::memory_order order,
                  std::uint32_t step) {
    ThreadView& v = threads_[thread];
    const Store& read = loc.stores[index];
    if (acquires(order)) v.happens_before.join(read.release);
    if (is_seq_cst(order)) {
        // A seq_cst store (heading the release sequence) read by a seq_cst load: the store and
        // everything strongly before it is strongly before this load.
        v.strongly_before.join(read.seq_cst_release);
        add_seq_cst(thread, loc, 2 * index + 1);
    }
    record(thread, loc, index, step);
    auto& last = loc.last_read[thread];
    const bool spinning = last.first == index + 1 && last.second == v.writes;
    last = {index + 1, v.writes};
    return spinning;
}

void Memory::store(int thread, Location& loc, Bits value, std::memory_order order,
                   std::uint32_t step) {
    ThreadView& v = threads_[thread];
    Store s{value, thread, event(thread), step, is_seq_cst(order), {}, {}, v.happens_before};
    // C++20: a release sequence is the release store and the read-modify-writes after it; a
    // relaxed store (even by the same thread) starts none and continues none.
    if (releases(order)) s.release = v.happens_before;
    if (is_seq_cst(order)) {
        s.seq_cst_release = v.strongly_before;
        s.seq_cst_release.at[thread] = event(thread);
    }
    const auto index = static_cast<std::uint32_t>(loc.stores.size());
    loc.stores.push_back(s);
    record(thread, loc, index, step);
    ++v.writes;
    if (is_seq_cst(order)) add_seq_cst(thread, loc, 2 * index);
}

void Memory::read_modify_write(int thread, Location& loc, Bits value, std::memory_order order,
                               std::uint32_t step) {
    ThreadView& v = threads_[thread];
    const Store read = loc.stores.back();  // atomicity: the newest, and nothing in between
    if (acquires(order)) v.happens_before.join(read.release);
    if (is_seq_cst(order)) v.strongly_before.join(read.seq_cst_release);
    // It continues the release sequence of the store it read, and heads one if it releases.
    Store s{value,
            thread,
            event(thread),
            step,
            is_seq_cst(order),
            read.release,
            read.seq_cst_release,
            v.happens_before};
    if (releases(order)) s.release.join(v.happens_before);
    if (is_seq_cst(order)) {
        Clock mine = v.strongly_before;
        mine.at[thread] = event(thread);
        s.seq_cst_release.join(mine);
    }
    const auto index = static_cast<std::uint32_t>(loc.stores.size());
    loc.stores.push_back(s);
    record(thread, loc, index, step);
    ++v.writes;
    if (is_seq_cst(order)) add_seq_cst(thread, loc, 2 * index);
}

int Memory::promise(int thread, std::memory_order order) {
    if (!is_seq_cst(order)) return -1;
    const int node = s_.add_node();
    for (int b : seq_cst_predecessors(thread, threads_[thread].strongly_before))
        s_.add_edge(b, node);
    threads_[thread].seq_cst_nodes.emplace_back(event(thread), node);
    return node;
}

bool Memory::keep_promise(int thread, std::uint32_t event, int node, Location& loc,
                          std::uint32_t index, std::uint32_t step) {
    // The explorer breaks a promise if the thread touched the location again in between, so
    // this read is still the thread's latest access here: the list stays in program order.
    loc.accesses[thread].push_back(Access{event, index, step});
    if (node < 0) return true;
    // Its place in coherence order is known only now: after the seq_cst accesses that come
    // before store `index`. The store is the newest, so nothing seq_cst comes after it.
    const std::uint32_t rank = 2 * index + 1;
    std::vector<int> before, after;
    neighbours(loc, rank, before, after);
    if (s_.reaches_any({node}, before)) return false;
    for (int b : before)
        s_.add_edge(b, node);
    const auto at = std::upper_bound(
        loc.seq_cst.begin(), loc.seq_cst.end(), rank,
        [](std::uint32_t r, const std::pair<std::uint32_t, int>& a) { return r < a.first; });
    loc.seq_cst.insert(at, {rank, node});
    return true;
}

}  // namespace ws::model::detail
