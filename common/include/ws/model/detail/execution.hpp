// One execution of a scenario: its model threads (real std::threads that pass a baton, so
// exactly one runs at a time), the memory model, and the trace. The hooks of Atomic<T> and
// Thread land here, on the thread that holds the baton.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <ws/model/detail/hooks.hpp>
#include <ws/model/detail/memory.hpp>
#include <ws/model/detail/schedule.hpp>
#include <ws/model/explore.hpp>

namespace ws::model::detail {

// One line of the trace.
struct Event {
    enum class Kind : std::uint8_t {
        load,
        store,
        rmw,
        cas_won,
        cas_lost,
        spawn,
        join,
        end,
        destroy,
        failure
    };
    Kind kind;
    int thread;
    std::memory_order order = std::memory_order_relaxed;
    std::uint32_t location = 0;  // Location::id
    Bits value = 0;              // read (load, failed CAS) or written (store, RMW, won CAS)
    Bits old = 0;                // RMW, won CAS: the value it replaced; lost CAS: expected
    std::uint32_t newer = 0;     // loads: how many newer stores it skipped (0: the newest)
    std::uint32_t store = 0;     // the store read or written (index in modification order)
    std::uint32_t event = 0;     // the thread's event number (memory.hpp)
    bool promised = false;       // a load that reads a store that runs later
    std::uint32_t keeps = 0;     // a store that is what the load at this step read
    int other = -1;              // spawn, join: the other thread
    const char* name = "";       // the RMW's name
    Where where{};
    std::string text{};  // failure
};

class Execution {
  public:
    Execution(const Options& options, Schedule& schedule);
    ~Execution();
    Execution(const Execution&) = delete;
    Execution& operator=(const Execution&) = delete;

    // Runs the scenario once, on model thread 0. Returns when every thread has ended, or when
    // a failure parked the threads: they then wait forever, and the caller must leak *this.
    void run(const std::function<void()>& scenario);
    bool failed() const { return !failure_.empty(); }
    // The execution cannot exist: a load read a store that then did not come (see explore.hpp).
    bool discarded() const;
    // Depth-first phase: tell the schedule which loads could have read a later store.
    void learn_futures();
    bool parked() const { return parked_; }
    const std::string& failure() const { return failure_; }
    std::string trace() const;  // model_trace.cpp

    // The execution the calling model thread belongs to (nullptr on other threads).
    static Execution* current() noexcept;

    // Hooks, on the model thread that holds the baton.
    void created(const void* atomic, Bits initial, Format format, const Where& where);
    void destroyed(const void* atomic);
    Bits load(const void* atomic, std::memory_order order, const Where& where);
    void store(const void* atomic, Bits value, std::memory_order order, const Where& where);
    Bits read_modify_write(const void* atomic, const char* name, Apply apply, Bits operand,
                           std::memory_order order, const Where& where);
    bool compare_exchange(const void* atomic, Bits& expected, Bits desired,
                          std::memory_order success, std::memory_order failure, const Where& where);
    int spawn(std::function<void()> body);
    void join(int thread);
    void check(bool ok, std::string_view what);
    void quarantine(void* memory);  // model_quarantine.cpp's operator delete

  private:
    enum class State : std::uint8_t { runnable, spinning, joining, ended };
    struct ModelThread {
        int id;
        State state = State::runnable;
        int joins = -1;     // State::joining: the thread it waits for
        long spun_on = -1;  // the location it last spun on (Location::id), see load()
        std::function<void()> body;
        std::condition_variable wake;
        std::thread os;
    };
    using Lock = std::unique_lock<std::mutex>;
    // A load that read a value no store had written yet; a later store must write it.
    struct Promise {
        int thread;
        std::uint32_t location;
        Bits value;
        std::uint32_t event;  // the load's event number
        std::uint32_t step;
        std::memory_order order;
        int node;  // its S node if seq_cst, else -1
        bool kept = false;
    };

    void thread_main(int id);
    ModelThread& self();
    // The scheduling point in front of every operation (it may hand the baton on).
    void schedule(Lock& lock);
    // Picks who runs next and hands the baton over; returns once `me` has it again (if `me`
    // has ended, returns at once).
    void pass_baton(Lock& lock, ModelThread& me);
    std::vector<int> runnable_threads(const ModelThread& me) const;
    Location& live(Lock& lock, const void* atomic, const char* what, const Where& where);
    void wrote(const ModelThread& writer);
    // After every access to `loc`: keeps or breaks the promises on it. `written`: the index of
    // the store the access wrote, or -1. Returns the step of the load whose promise it kept.
    std::uint32_t touched(Location& loc, const ModelThread& me, long written);
    void fail(std::string what);
    [[noreturn]] void park(Lock& lock, std::string what);
    std::uint32_t add(Event event);

    const Options& options_;
    Schedule& schedule_;
    Memory memory_;
    std::mutex mutex_;
    std::condition_variable ended_;  // the caller of run() waits on it
    std::vector<std::unique_ptr<ModelThread>> threads_;
    int current_ = 0;  // the thread that holds the baton; -1 once parked
    bool done_ = false;
    bool parked_ = false;
    std::string failure_;
    std::vector<Event> events_;
    std::vector<Promise> promises_;
    bool impossible_ = false;              // a promise was broken
    std::uint64_t steps_ = 0;              // scheduling points so far
    std::uint64_t steps_since_store_ = 0;  // livelock detection
    std::uint32_t first_spawn_event_ = 0;  // the trace folds the setup before it
    void** quarantined_ = nullptr;         // freed memory, released when the run is over
    std::size_t quarantined_count_ = 0, quarantined_capacity_ = 0;
};

}  // namespace ws::model::detail
