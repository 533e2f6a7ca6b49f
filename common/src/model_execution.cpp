// One execution: model threads passing a baton, and every operation's effect on the memory
// model. All shared state is guarded by mutex_; a model thread holds it inside a hook and
// waits on its own condition variable until the baton (current_) is its id again.
#include "ws/model/detail/execution.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <utility>

namespace ws::model::detail {

namespace {

struct Context {
    Execution* execution = nullptr;
    int thread = -1;
    bool in_hook = false;  // inside the explorer (it holds mutex_), not in scenario code
};
thread_local Context context;

// Marks the calling model thread as inside the explorer for a hook's duration: what it frees
// meanwhile is the explorer's own memory, never a scenario object (see quarantine()).
struct InHook {
    InHook() noexcept { context.in_hook = true; }
    ~InHook() { context.in_hook = false; }
    InHook(const InHook&) = delete;
    InHook& operator=(const InHook&) = delete;
};

std::string place(const Where& where) {
    std::string file = where.file;
    if (const auto slash = file.rfind('/'); slash != std::string::npos) file.erase(0, slash + 1);
    return file + ":" + std::to_string(where.line) + " (" + where.function + ")";
}

std::string thread_name(int id) {
    return "thread " + std::to_string(id);
}

}  // namespace

Execution::Execution(const Options& options, Schedule& schedule)
    : options_(options), schedule_(schedule) {}

Execution::~Execution() {
    // Only a run that ended normally is destroyed (a parked one is leaked): its threads are
    // joined, so nobody can use the quarantined memory any more.
    for (auto& t : threads_) {
        if (t->os.joinable()) t->os.join();
    }
    for (std::size_t i = 0; i < quarantined_count_; ++i)
        std::free(quarantined_[i]);
    std::free(quarantined_);
}

Execution* Execution::current() noexcept {
    return context.execution;
}

void Execution::run(const std::function<void()>& scenario) {
    auto main = std::make_unique<ModelThread>();
    main->id = 0;
    main->body = scenario;
    Lock lock(mutex_);  // before thread 0 can look at threads_
    threads_.push_back(std::move(main));
    current_ = 0;
    threads_[0]->os = std::thread(&Execution::thread_main, this, 0);
    ended_.wait(lock, [&] { return done_ || parked_; });
    if (parked_) {
        for (auto& t : threads_)
            t->os.detach();  // they wait forever on this (leaked) execution
        return;
    }
    lock.unlock();
    for (auto& t : threads_)
        t->os.join();
}

void Execution::thread_main(int id) {
    ModelThread* me = nullptr;
    {
        Lock lock(mutex_);
        me = threads_[static_cast<std::size_t>(id)].get();
        me->wake.wait(lock, [&] { return current_ == id; });
        context = {this, id};
    }
    try {
        me->body();
    } catch (const std::exception& e) {
        Lock lock(mutex_);
        fail(thread_name(id) + " threw an exception: " + e.what());
    } catch (...) {
        Lock lock(mutex_);
        fail(thread_name(id) + " threw an exception that is not a std::exception");
    }
    me->body = nullptr;  // what it captured is destroyed here, inside the model
    Lock lock(mutex_);
    add(Event{.kind = Event::Kind::end, .thread = id});
    me->state = State::ended;
    for (auto& t : threads_) {
        if (t->state == State::joining && t->joins == id) t->state = State::runnable;
    }
    pass_baton(lock, *me);
    context = {};  // from here on this thread frees memory normally, not into the quarantine
}

Execution::ModelThread& Execution::self() {
    return *threads_[static_cast<std::size_t>(context.thread)];
}

void Execution::schedule(Lock& lock) {
    ++steps_;
    ++steps_since_store_;
    if (steps_ > options_.max_steps) {
        park(lock, "the execution did not end within " + std::to_string(options_.max_steps) +
                       " atomic operations (Options::max_steps): a loop that never ends?");
    }
    if (steps_since_store_ > options_.livelock_steps) {
        park(lock, "livelock: " + std::to_string(options_.livelock_steps) +
                       " atomic operations without a single store: every thread waits for "
                       "another (Options::livelock_steps)");
    }
    pass_baton(lock, self());
}

std::vector<int> Execution::runnable_threads(const ModelThread& me) const {
    // In cyclic order from `me`: `me` first (if it may run), then the threads after it.
    std::vector<int> ids;
    const int n = static_cast<int>(threads_.size());
    for (int k = 0; k < n; ++k) {
        const ModelThread& t = *threads_[static_cast<std::size_t>((me.id + k) % n)];
        if (t.state == State::runnable) ids.push_back(t.id);
    }
    return ids;
}

void Execution::pass_baton(Lock& lock, ModelThread& me) {
    // Who may run next, and what choosing each costs. If `me` may go on, that is free and any
    // other thread is a preemption. If `me` spins (it yields), the thread after it goes on for
    // free and any other is a preemption, so that spin-waits do not multiply the schedules.
    // If `me` waits in join() or has ended, every choice is free.
    std::vector<int> ids = runnable_threads(me);
    bool preempts = me.state == State::runnable || me.state == State::spinning;
    if (ids.empty()) {
        // Nobody can run but spinning threads: let them look again.
        for (auto& t : threads_) {
            if (t->state == State::spinning) t->state = State::runnable;
        }
        ids = runnable_threads(me);
        preempts = true;
    }
    if (ids.empty()) {
        bool all_ended = true;
        for (const auto& t : threads_)
            all_ended = all_ended && t->state == State::ended;
        if (!all_ended) park(lock, "deadlock: every thread that has not ended waits in join()");
        done_ = true;
        current_ = -1;
        ended_.notify_all();
        return;
    }
    const std::size_t pick =
        ids.size() == 1 ? 0
                        : schedule_.choose_thread(ids, preempts,
                                                  static_cast<std::uint32_t>(events_.size() + 1));
    if (!schedule_.error().empty()) park(lock, schedule_.error());
    const int next = ids[pick];
    if (next == me.id) return;
    current_ = next;
    threads_[static_cast<std::size_t>(next)]->wake.notify_one();
    if (me.state == State::ended) return;
    me.wake.wait(lock, [&] { return current_ == me.id; });
}

Location& Execution::live(Lock& lock, const void* atomic, const char* what, const Where& where) {
    Location* loc = memory_.find(atomic);
    auto who = [&] { return thread_name(self().id) + " " + what + " at " + place(where); };
    if (loc == nullptr) {
        park(lock, who() +
                       " an atomic that was not created in this execution (create every "
                       "atomic inside the scenario)");
    }
    if (!loc->alive) {
        park(lock, "use after free: " + who() + " a" + std::to_string(loc->id) + " (created at " +
                       place(loc->created_at) + "), which " + thread_name(loc->destroyed_by) +
                       " destroyed at step " + std::to_string(loc->destroyed_step));
    }
    if (!memory_.constructed_before(self().id, *loc)) {
        park(lock, "data race on initialisation: " + who() + " a" + std::to_string(loc->id) +
                       " (created at " + place(loc->created_at) + ") by " +
                       thread_name(loc->stores.front().thread) +
                       ", whose construction does not happen before this access (was the "
                       "object published with a release store and found with an acquire "
                       "load?)");
    }
    return *loc;
}

void Execution::wrote(const ModelThread& writer) {
    steps_since_store_ = 0;
    for (auto& t : threads_) {
        if (t->id != writer.id && t->state == State::spinning) t->state = State::runnable;
    }
}

void Execution::fail(std::string what) {
    add(Event{.kind = Event::Kind::failure, .thread = context.thread, .text = what});
    if (failure_.empty()) failure_ = std::move(what);
}

void Execution::park(Lock& lock, std::string what) {
    fail(std::move(what));
    parked_ = true;
    current_ = -1;
    ended_.notify_all();
    std::condition_variable never;
    for (;;)
        never.wait(lock);
}

std::uint32_t Execution::add(Event event) {
    events_.push_back(std::move(event));
    return static_cast<std::uint32_t>(events_.size());
}

void Execution::created(const void* atomic, Bits initial, Format format, const Where& where) {
    InHook in_hook;
    Lock lock(mutex_);
    const int me = self().id;
    memory_.begin(me);
    memory_.create(me, atomic, initial, format, where,
                   static_cast<std::uint32_t>(events_.size() + 1));
}

void Execution::destroyed(const void* atomic) {
    InHook in_hook;
    Lock lock(mutex_);
    const int me = self().id;
    Location* loc = memory_.find(atomic);
    if (loc == nullptr) return;  // created outside the scenario: never modelled
    if (!loc->alive) {
        park(lock, thread_name(me) + " destroys a" + std::to_string(loc->id) + " (created at " +
                       place(loc->created_at) + ") a second time");
    }
    (void)touched(*loc, self(), -1);  // a promise on it can no longer be kept
    const auto step = static_cast<std::uint32_t>(events_.size() + 1);
    int racer = -1;
    const Access* access = memory_.destroy(me, *loc, step, racer);
    add(Event{.kind = Event::Kind::destroy, .thread = me, .location = loc->id});
    if (access != nullptr) {
        park(lock, thread_name(me) + " destroys a" + std::to_string(loc->id) + " (created at " +
                       place(loc->created_at) + "), but the access of " + thread_name(racer) +
                       " at step " + std::to_string(access->step) +
                       " does not happen before the destruction: a race on reclamation");
    }
}

Bits Execution::load(const void* atomic, std::memory_order order, const Where& where) {
    InHook in_hook;
    Lock lock(mutex_);
    schedule(lock);
    ModelThread& me = self();
    if (order == std::memory_order_release || order == std::memory_order_acq_rel)
        park(lock, thread_name(me.id) + ": a load with a release order at " + place(where) +
                       " (undefined behaviour)");
    Location& loc = live(lock, atomic, "loads", where);
    memory_.begin(me.id);
    std::vector<std::uint32_t> readable = memory_.readable(me.id, loc, order);
    // A thread that spun on this location (read the same store twice, then yielded) sees the
    // newest store now: stores become visible in finite time, and reading the old one again
    // would only spin once more. Without this, every turn of a spin-wait would be a choice.
    if (me.spun_on == static_cast<long>(loc.id)) readable.resize(1);
    me.spun_on = -1;
    const auto step = static_cast<std::uint32_t>(events_.size() + 1);
    const Schedule::Read pick = schedule_.choose_read(readable.size(), step);
    if (!schedule_.error().empty()) park(lock, schedule_.error());
    touched(loc, me, -1);
    Event e{.kind = Event::Kind::load,
            .thread = me.id,
            .order = order,
            .location = loc.id,
            .event = memory_.event(me.id),
            .where = where};
    if (pick.future) {
        // A store that has not run yet must write this value: a promise (explore.hpp).
        promises_.push_back(Promise{me.id, loc.id, pick.value, memory_.event(me.id), step, order,
                                    memory_.promise(me.id, order)});
        e.value = pick.value;
        e.promised = true;
        add(std::move(e));
        return pick.value;
    }
    const std::uint32_t index = readable[pick.index];
    if (memory_.load(me.id, loc, index, order, step)) {
        me.state = State::spinning;
        me.spun_on = loc.id;
    }
    e.value = loc.stores[index].value;
    e.store = index;
    e.newer = static_cast<std::uint32_t>(loc.stores.size() - 1 - index);
    add(std::move(e));
    return loc.stores[index].value;
}

void Execution::store(const void* atomic, Bits value, std::memory_order order, const Where& where) {
    InHook in_hook;
    Lock lock(mutex_);
    schedule(lock);
    ModelThread& me = self();
    if (acquires(order) && order != std::memory_order_seq_cst)
        park(lock, thread_name(me.id) + ": a store with an acquire order at " + place(where) +
                       " (undefined behaviour)");
    Location& loc = live(lock, atomic, "stores to", where);
    memory_.begin(me.id);
    const auto step = static_cast<std::uint32_t>(events_.size() + 1);
    memory_.store(me.id, loc, value, order, step);
    wrote(me);
    const auto index = static_cast<std::uint32_t>(loc.stores.size() - 1);
    const std::uint32_t keeps = touched(loc, me, index);
    add(Event{.kind = Event::Kind::store,
              .thread = me.id,
              .order = order,
              .location = loc.id,
              .value = value,
              .store = index,
              .event = memory_.event(me.id),
              .keeps = keeps,
              .where = where});
}

Bits Execution::read_modify_write(const void* atomic, const char* name, Apply apply, Bits operand,
                                  std::memory_order order, const Where& where) {
    InHook in_hook;
    Lock lock(mutex_);
    schedule(lock);
    ModelThread& me = self();
    Location& loc = live(lock, atomic, "updates", where);
    memory_.begin(me.id);
    const Bits old = loc.stores.back().value;
    const Bits value = apply(old, operand);
    const auto step = static_cast<std::uint32_t>(events_.size() + 1);
    memory_.read_modify_write(me.id, loc, value, order, step);
    wrote(me);
    const auto index = static_cast<std::uint32_t>(loc.stores.size() - 1);
    const std::uint32_t keeps = touched(loc, me, index);
    add(Event{.kind = Event::Kind::rmw,
              .thread = me.id,
              .order = order,
              .location = loc.id,
              .value = value,
              .old = old,
              .store = index,
              .event = memory_.event(me.id),
              .keeps = keeps,
              .name = name,
              .where = where});
    return old;
}

bool Execution::compare_exchange(const void* atomic, Bits& expected, Bits desired,
                                 std::memory_order success, std::memory_order failure,
                                 const Where& where) {
    InHook in_hook;
    Lock lock(mutex_);
    schedule(lock);
    ModelThread& me = self();
    if (failure == std::memory_order_release || failure == std::memory_order_acq_rel)
        park(lock, thread_name(me.id) +
                       ": a compare_exchange whose failure order is release "
                       "or acq_rel at " +
                       place(where) + " (undefined behaviour)");
    Location& loc = live(lock, atomic, "compare-exchanges", where);
    memory_.begin(me.id);
    // The newest store (the CAS succeeds if it holds `expected`), or an older one it may read
    // as a load with the failure order — then it fails, so only one that differs from
    // `expected` (a failed CAS that read `expected` would have succeeded).
    const auto newest = static_cast<std::uint32_t>(loc.stores.size() - 1);
    std::vector<std::uint32_t> options{newest};
    for (std::uint32_t i : memory_.readable(me.id, loc, failure)) {
        if (i != newest && loc.stores[i].value != expected) options.push_back(i);
    }
    const auto step = static_cast<std::uint32_t>(events_.size() + 1);
    const std::uint32_t index = options[schedule_.choose_read(options.size(), step).index];
    if (!schedule_.error().empty()) park(lock, schedule_.error());
    if (index == newest && loc.stores[newest].value == expected) {
        memory_.read_modify_write(me.id, loc, desired, success, step);
        wrote(me);
        const std::uint32_t keeps = touched(loc, me, newest + 1);
        add(Event{.kind = Event::Kind::cas_won,
                  .thread = me.id,
                  .order = success,
                  .location = loc.id,
                  .value = desired,
                  .old = expected,
                  .store = newest + 1,
                  .event = memory_.event(me.id),
                  .keeps = keeps,
                  .where = where});
        return true;
    }
    touched(loc, me, -1);
    if (memory_.load(me.id, loc, index, failure, step)) me.state = State::spinning;
    add(Event{.kind = Event::Kind::cas_lost,
              .thread = me.id,
              .order = failure,
              .location = loc.id,
              .value = loc.stores[index].value,
              .old = expected,
              .newer = newest - index,
              .store = index,
              .event = memory_.event(me.id),
              .where = where});
    expected = loc.stores[index].value;
    return false;
}

// A promise is kept by the first access to its location after it, if that is a store of the
// promised value by another thread that the load does not happen before, and that gives the
// load nothing to synchronise with if it acquires (the explorer does not apply synchronisation
// backwards). Any other access first breaks it: a simplification that never produces an
// outcome the C++ model forbids, and may miss some it allows.
std::uint32_t Execution::touched(Location& loc, const ModelThread& me, long written) {
    std::uint32_t kept = 0;
    for (Promise& p : promises_) {
        if (p.kept || p.location != loc.id) continue;
        if (written < 0 || me.id == p.thread) {
            impossible_ = true;
            continue;
        }
        const Store& s = loc.stores[static_cast<std::size_t>(written)];
        const bool keeps = s.value == p.value && !memory_.happens_before(p.thread, p.event, s) &&
                           (!acquires(p.order) || s.release.empty());
        if (!keeps || !memory_.keep_promise(p.thread, p.event, p.node, loc,
                                            static_cast<std::uint32_t>(written), p.step)) {
            impossible_ = true;
            continue;
        }
        p.kept = true;
        kept = p.step;
    }
    return kept;
}

bool Execution::discarded() const {
    return impossible_ || std::any_of(promises_.begin(), promises_.end(),
                                      [](const Promise& p) { return !p.kept; });
}

// A load L could have read a store S that ran after it if S is the first access to L's
// location after L, S is another thread's, L does not happen before S, and S writes a value
// L did not read. The next executions with this prefix then try L reading S's value.
void Execution::learn_futures() {
    for (std::size_t i = 0; i < events_.size(); ++i) {
        const Event& load = events_[i];
        if (load.kind != Event::Kind::load || load.promised) continue;
        for (std::size_t j = i + 1; j < events_.size(); ++j) {
            const Event& next = events_[j];
            const bool access =
                next.kind == Event::Kind::load || next.kind == Event::Kind::store ||
                next.kind == Event::Kind::rmw || next.kind == Event::Kind::cas_won ||
                next.kind == Event::Kind::cas_lost || next.kind == Event::Kind::destroy;
            if (!access || next.location != load.location) continue;
            const bool writes = next.kind == Event::Kind::store || next.kind == Event::Kind::rmw ||
                                next.kind == Event::Kind::cas_won;
            if (writes && next.thread != load.thread && next.value != load.value) {
                const Store& s = memory_.location(load.location).stores[next.store];
                if (!memory_.happens_before(load.thread, load.event, s) &&
                    (!acquires(load.order) || s.release.empty())) {
                    schedule_.add_future(static_cast<std::uint32_t>(i + 1), next.value);
                }
            }
            break;
        }
    }
}

int Execution::spawn(std::function<void()> body) {
    InHook in_hook;
    Lock lock(mutex_);
    ModelThread& me = self();
    if (threads_.size() >= static_cast<std::size_t>(kMaxThreads))
        park(lock, "a scenario may have at most " + std::to_string(kMaxThreads) + " threads");
    const int id = static_cast<int>(threads_.size());
    auto child = std::make_unique<ModelThread>();
    child->id = id;
    child->body = std::move(body);
    memory_.begin(me.id);
    memory_.thread_started(me.id, id);
    const std::uint32_t step = add(Event{.kind = Event::Kind::spawn, .thread = me.id, .other = id});
    if (first_spawn_event_ == 0) first_spawn_event_ = step;
    threads_.push_back(std::move(child));
    threads_.back()->os = std::thread(&Execution::thread_main, this, id);
    return id;
}

void Execution::join(int thread) {
    InHook in_hook;
    Lock lock(mutex_);
    schedule(lock);
    ModelThread& me = self();
    if (thread < 0 || static_cast<std::size_t>(thread) >= threads_.size() || thread == me.id)
        park(lock, thread_name(me.id) + " joins a thread it cannot join");
    ModelThread& other = *threads_[static_cast<std::size_t>(thread)];
    if (other.state != State::ended) {
        me.state = State::joining;
        me.joins = thread;
        pass_baton(lock, me);  // back here once `other` has ended and we are picked
    }
    memory_.begin(me.id);
    memory_.thread_joined(me.id, thread);
    add(Event{.kind = Event::Kind::join, .thread = me.id, .other = thread});
}

void Execution::check(bool ok, std::string_view what) {
    if (ok) return;
    InHook in_hook;
    Lock lock(mutex_);
    fail("check failed: " + std::string(what));
}

void Execution::quarantine(void* memory) {
    // The explorer's own memory (vectors, strings) needs no quarantine, and keeping it would
    // only make every execution slower.
    if (context.in_hook) return std::free(memory);
    // Only the thread holding the baton gets here (see thread_main), so no lock.
    if (quarantined_count_ == quarantined_capacity_) {
        const std::size_t capacity = quarantined_capacity_ == 0 ? 256 : 2 * quarantined_capacity_;
        void* grown = std::realloc(quarantined_, capacity * sizeof(void*));
        if (grown == nullptr) {
            std::free(memory);
            return;
        }
        quarantined_ = static_cast<void**>(grown);
        quarantined_capacity_ = capacity;
    }
    quarantined_[quarantined_count_++] = memory;
}

}  // namespace ws::model::detail
