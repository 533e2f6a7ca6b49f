// One execution: model threads passing a baton, and every operation's effect on the memory
// model. All shared state is guarded by mutex_; a model thread holds it inside a hook and
// waits on its own condition variable until the baton (current_) is its id again.
#include "ws/model/detail/execution.hpp"

#include <cstdlib>
#include <exception>
#include <utility>

namespace ws::model::detail {

namespace {

struct Context {
    Execution* execution = nullptr;
    int thread = -1;
};
thread_local Context context;

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
    std::vector<int> ids;
    if (me.state == State::runnable) ids.push_back(me.id);
    for (const auto& t : threads_) {
        if (t->id != me.id && t->state == State::runnable) ids.push_back(t->id);
    }
    return ids;
}

void Execution::pass_baton(Lock& lock, ModelThread& me) {
    std::vector<int> ids = runnable_threads(me);
    bool first_goes_on = me.state == State::runnable;
    if (ids.empty()) {
        // Nobody can run but spinning threads: let them look again (for free).
        for (auto& t : threads_) {
            if (t->state == State::spinning) t->state = State::runnable;
        }
        ids = runnable_threads(me);
        first_goes_on = false;
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
    const std::size_t pick = ids.size() == 1 ? 0 : schedule_.choose_thread(ids, first_goes_on);
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
    const std::string who = thread_name(self().id) + " " + what + " at " + place(where);
    if (loc == nullptr) {
        park(lock, who +
                       " an atomic that was not created in this execution (create every "
                       "atomic inside the scenario)");
    }
    if (!loc->alive) {
        park(lock, "use after free: " + who + " a" + std::to_string(loc->id) + " (created at " +
                       place(loc->created_at) + "), which " + thread_name(loc->destroyed_by) +
                       " destroyed at step " + std::to_string(loc->destroyed_step));
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
    Lock lock(mutex_);
    const int me = self().id;
    memory_.begin(me);
    memory_.create(me, atomic, initial, format, where,
                   static_cast<std::uint32_t>(events_.size() + 1));
}

void Execution::destroyed(const void* atomic) {
    Lock lock(mutex_);
    const int me = self().id;
    Location* loc = memory_.find(atomic);
    if (loc == nullptr) return;  // created outside the scenario: never modelled
    if (!loc->alive) {
        park(lock, thread_name(me) + " destroys a" + std::to_string(loc->id) + " (created at " +
                       place(loc->created_at) + ") a second time");
    }
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
    Lock lock(mutex_);
    schedule(lock);
    ModelThread& me = self();
    if (order == std::memory_order_release || order == std::memory_order_acq_rel)
        park(lock, thread_name(me.id) + ": a load with a release order at " + place(where) +
                       " (undefined behaviour)");
    Location& loc = live(lock, atomic, "loads", where);
    memory_.begin(me.id);
    const std::vector<std::uint32_t> readable = memory_.readable(me.id, loc, order);
    const std::size_t pick = readable.size() == 1 ? 0 : schedule_.choose_read(readable.size());
    if (!schedule_.error().empty()) park(lock, schedule_.error());
    const std::uint32_t index = readable[pick];
    const auto step = static_cast<std::uint32_t>(events_.size() + 1);
    if (memory_.load(me.id, loc, index, order, step)) me.state = State::spinning;
    add(Event{.kind = Event::Kind::load,
              .thread = me.id,
              .order = order,
              .location = loc.id,
              .value = loc.stores[index].value,
              .newer = static_cast<std::uint32_t>(loc.stores.size() - 1 - index),
              .where = where});
    return loc.stores[index].value;
}

void Execution::store(const void* atomic, Bits value, std::memory_order order, const Where& where) {
    Lock lock(mutex_);
    schedule(lock);
    ModelThread& me = self();
    if (acquires(order) && order != std::memory_order_seq_cst)
        park(lock, thread_name(me.id) + ": a store with an acquire order at " + place(where) +
                       " (undefined behaviour)");
    Location& loc = live(lock, atomic, "stores to", where);
    memory_.begin(me.id);
    memory_.store(me.id, loc, value, order, static_cast<std::uint32_t>(events_.size() + 1));
    wrote(me);
    add(Event{.kind = Event::Kind::store,
              .thread = me.id,
              .order = order,
              .location = loc.id,
              .value = value,
              .where = where});
}

Bits Execution::read_modify_write(const void* atomic, const char* name, Apply apply, Bits operand,
                                  std::memory_order order, const Where& where) {
    Lock lock(mutex_);
    schedule(lock);
    ModelThread& me = self();
    Location& loc = live(lock, atomic, "updates", where);
    memory_.begin(me.id);
    const Bits old = loc.stores.back().value;
    const Bits value = apply(old, operand);
    memory_.read_modify_write(me.id, loc, value, order,
                              static_cast<std::uint32_t>(events_.size() + 1));
    wrote(me);
    add(Event{.kind = Event::Kind::rmw,
              .thread = me.id,
              .order = order,
              .location = loc.id,
              .value = value,
              .old = old,
              .name = name,
              .where = where});
    return old;
}

bool Execution::compare_exchange(const void* atomic, Bits& expected, Bits desired,
                                 std::memory_order success, std::memory_order failure,
                                 const Where& where) {
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
    const std::size_t pick = options.size() == 1 ? 0 : schedule_.choose_read(options.size());
    if (!schedule_.error().empty()) park(lock, schedule_.error());
    const std::uint32_t index = options[pick];
    const auto step = static_cast<std::uint32_t>(events_.size() + 1);
    if (index == newest && loc.stores[newest].value == expected) {
        memory_.read_modify_write(me.id, loc, desired, success, step);
        wrote(me);
        add(Event{.kind = Event::Kind::cas_won,
                  .thread = me.id,
                  .order = success,
                  .location = loc.id,
                  .value = desired,
                  .old = expected,
                  .where = where});
        return true;
    }
    if (memory_.load(me.id, loc, index, failure, step)) me.state = State::spinning;
    add(Event{.kind = Event::Kind::cas_lost,
              .thread = me.id,
              .order = failure,
              .location = loc.id,
              .value = loc.stores[index].value,
              .old = expected,
              .newer = newest - index,
              .where = where});
    expected = loc.stores[index].value;
    return false;
}

int Execution::spawn(std::function<void()> body) {
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
    Lock lock(mutex_);
    fail("check failed: " + std::string(what));
}

void Execution::quarantine(void* memory) {
    // Only the thread holding the baton gets here (see thread_main), so no lock: operator
    // delete may run inside a hook, which holds mutex_ already.
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
