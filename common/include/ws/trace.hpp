// A timeline of what each worker did: when it ran tasks, tried to steal (from whom, how many it
// got), took from the injector, parked and woke, helped while it waited. It exists to be
// looked at (./workshop trace N writes it in the Chrome trace format and as a picture).
//
// Compiled in only in trace builds (the `trace` preset defines WS_TRACE=1). Everywhere else
// WS_TRACE_EVENT(...), WS_TRACE_WORKER(...) and WS_TRACE_LOCAL(...) expand to nothing, so a
// pool's hooks cost nothing at all (bench/trace_overhead.sh nothing checks the object code).
//
// How it records without locks: each worker owns one Lane, a buffer sized up front, and is the
// only thread that writes it (a worker finds its lane through a thread_local pointer, so the
// hooks need no access to the pool). Nothing reads a lane while the pool runs: events() is for
// after the run, once wait_idle() or the pool's destructor has ordered the workers' writes
// before the reader. A full lane drops further events and counts them, it never grows
// (growing would move the buffer while its owner writes).
//
// What it costs (bench/trace_overhead.sh): recording is two clock reads per task and little
// else, so it shows most on the finest tasks; the figures are in ARCHITECTURE.md (tracing).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string_view>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace ws::trace {

enum class What : std::uint8_t {
    task_begin,
    task_end,
    steal,          // a = the victim worker, b = how many tasks it got (0: found nothing)
    injector_take,  // from the tasks spawned outside the pool (lesson 05's shared queue, the
                    // injector from lesson 06 on); b = how many tasks it got (0: not counted)
    park,           // the worker goes to sleep
    wake,           // it is awake again
    help_begin,     // a waiting worker starts running other tasks (lesson 07's join)
    help_end,
};

struct Event {
    std::int64_t ns;  // since the recorder was made
    What what;
    std::int32_t a;
    std::int32_t b;
};

namespace detail {

// The events' clock: the processor's time-stamp counter where there is one (x86-64). Reading it
// takes about 10 ns; steady_clock::now() (clock_gettime through the vDSO) took 20-45 ns on the
// machine where the overhead was measured, and with two reads per task that was most of what
// tracing cost on the spawn tree. Elsewhere, steady_clock's own ticks. Lanes of different
// cores are compared on one axis, so this assumes a counter that runs at a constant rate and in
// step on every core (the constant_tsc and nonstop_tsc flags of /proc/cpuinfo), as Linux does
// when it uses the counter as its own clock source.
inline std::int64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    return static_cast<std::int64_t>(__rdtsc());
#else
    return std::chrono::steady_clock::now().time_since_epoch().count();
#endif
}

// Nanoseconds per tick of ticks(), measured against steady_clock over a few milliseconds (each
// end read between two counter reads, again if something came in between).
inline double measure_ns_per_tick() {
#if defined(__x86_64__) || defined(__i386__)
    using Clock = std::chrono::steady_clock;
    struct Sample {
        Clock::time_point time;
        std::int64_t ticks;
    };
    const auto sample = [] {
        Sample s{};
        for (int tries = 0; tries < 100; ++tries) {
            const std::int64_t before = ticks();
            s.time = Clock::now();
            const std::int64_t after = ticks();
            s.ticks = before + (after - before) / 2;
            if (after - before < 2'000) break;  // a few hundred ns: not interrupted
        }
        return s;
    };
    const Sample first = sample();
    while (Clock::now() - first.time < std::chrono::milliseconds(3)) {
    }
    const Sample last = sample();
    return std::chrono::duration<double, std::nano>(last.time - first.time).count() /
           static_cast<double>(last.ticks - first.ticks);
#else
    using Period = std::chrono::steady_clock::period;
    return 1e9 * static_cast<double>(Period::num) / static_cast<double>(Period::den);
#endif
}

}  // namespace detail

// One worker's events. Aligned to a cache line of its own: its owner writes size_ with every
// event, and two lanes in one line would have the workers' caches pass it back and forth
// (false sharing).
class alignas(64) Lane {
  public:
    explicit Lane(std::size_t capacity) : events_(capacity) {}

    void record(What what, std::int32_t a, std::int32_t b) noexcept {
        if (size_ == events_.size()) {
            ++dropped_;
            return;
        }
        const auto ns =
            static_cast<std::int64_t>(static_cast<double>(detail::ticks() - start_) * ns_per_tick_);
        events_[size_++] = Event{ns, what, a, b};
    }

    // After the run only (see the top of this file).
    const Event* begin() const noexcept { return events_.data(); }
    const Event* end() const noexcept { return events_.data() + size_; }
    std::size_t size() const noexcept { return size_; }
    std::uint64_t dropped() const noexcept { return dropped_; }

  private:
    friend class Recorder;
    std::vector<Event> events_;
    std::size_t size_ = 0;
    std::uint64_t dropped_ = 0;
    std::int64_t start_ = 0;  // ticks() at time 0
    double ns_per_tick_ = 1.0;
};

class Recorder {
  public:
    explicit Recorder(std::size_t workers, std::size_t events_per_worker = std::size_t{1} << 20)
        : ns_per_tick_(detail::measure_ns_per_tick()) {
        lanes_.reserve(workers);
        for (std::size_t i = 0; i < workers; ++i)
            lanes_.emplace_back(events_per_worker);
        // Time 0 once the lanes exist: allocating them takes tens of milliseconds.
        start_ = detail::ticks();
        for (Lane& lane : lanes_) {
            lane.start_ = start_;
            lane.ns_per_tick_ = ns_per_tick_;
        }
    }

    // Nanoseconds since time 0, on the clock of the events.
    std::int64_t now_ns() const {
        return static_cast<std::int64_t>(static_cast<double>(detail::ticks() - start_) *
                                         ns_per_tick_);
    }

    std::size_t workers() const noexcept { return lanes_.size(); }
    Lane& lane(std::size_t worker) { return lanes_.at(worker); }
    const Lane& lane(std::size_t worker) const { return lanes_.at(worker); }

  private:
    double ns_per_tick_;
    std::int64_t start_ = 0;
    std::vector<Lane> lanes_;
};

namespace detail {
inline Recorder*& installed() noexcept {
    static Recorder* recorder = nullptr;
    return recorder;
}
inline Lane*& this_threads_lane() noexcept {
    thread_local Lane* lane = nullptr;
    return lane;
}
}  // namespace detail

// The recorder that pools made from now on record into (nullptr: none). Install it before the
// pool is made and keep it until the pool is gone.
inline void install(Recorder* recorder) noexcept {
    detail::installed() = recorder;
}

// Called by worker `index` when it starts: from then on its events go to its lane of the
// installed recorder (if there is one and it has that many lanes).
inline void attach_worker(std::size_t index) noexcept {
    Recorder* r = detail::installed();
    detail::this_threads_lane() = r != nullptr && index < r->workers() ? &r->lane(index) : nullptr;
}

// a and b as the event defines them (a victim, a count): any integer type, stored as 32 bits.
template <typename A = int, typename B = int>
void record(What what, A a = -1, B b = 0) noexcept {
    if (Lane* lane = detail::this_threads_lane())
        lane->record(what, static_cast<std::int32_t>(a), static_cast<std::int32_t>(b));
}

// The recorder's events in the Chrome Trace Event format (JSON; Perfetto and chrome://tracing
// open it): one thread lane per worker; tasks, parked time and helping as slices (B/E),
// steals and injector takes as instant events with their victim and count. `other`, if not
// empty, is more JSON members ("name":value,...) for the trace's otherData object.
void write_chrome_trace(std::ostream& out, const Recorder& recorder, std::string_view other = {});

}  // namespace ws::trace

// WS_TRACE_LOCAL(name, expression): a constant only trace builds have, for an event that needs
// a value from before the code it records (WS_TRACE_LOCAL(before, counter.load(...)); ...
// WS_TRACE_EVENT(steal, victim, counter.load(...) - before);). Elsewhere the expression is not
// even evaluated, and the line declares nothing. WS_TRACE_DO(expression): an expression only
// trace builds evaluate, for a hook too long for one event (a helper that records several).
#if defined(WS_TRACE) && WS_TRACE
#define WS_TRACE_WORKER(index) ::ws::trace::attach_worker(index)
#define WS_TRACE_EVENT(...) ::ws::trace::record(::ws::trace::What::__VA_ARGS__)
#define WS_TRACE_LOCAL(name, ...) const auto name = (__VA_ARGS__)
#define WS_TRACE_DO(...) (__VA_ARGS__)
#else
#define WS_TRACE_WORKER(index) ((void)0)
#define WS_TRACE_EVENT(...) ((void)0)
#define WS_TRACE_LOCAL(name, ...) static_assert(true)
#define WS_TRACE_DO(...) ((void)0)
#endif
