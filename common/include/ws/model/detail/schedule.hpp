// Which execution to run next: the choices (who runs at a scheduling point, which store a load
// reads), made depth-first within the bounds, then at random, or replayed from a string.
//
// Stateless model checking: nothing of an execution is saved but its list of choices. The next
// execution replays that list up to the deepest choice that still has an untried alternative
// within the bounds, takes that alternative, and from there on takes the first alternative of
// every new choice (the running thread goes on; a load reads the newest store it may).
//
// A load's alternatives are the stores it may read, newest first, then "future values": values
// of stores that ran after it in an earlier execution with the same prefix, which it could have
// read had the store run first (load buffering). After each depth-first execution the explorer
// adds those to the load's choice (add_future()), so that backtracking tries them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ws/model/detail/hooks.hpp>
#include <ws/model/explore.hpp>

namespace ws::model::detail {

class Schedule {
  public:
    explicit Schedule(const Options& options);

    // Prepares the next execution; false when there is none left to run.
    bool next_execution();

    // A scheduling point at trace step `step`: `threads` are the ids that may run. If
    // `preempts`, choosing another than the first costs a preemption. Returns an index.
    std::size_t choose_thread(const std::vector<int>& threads, bool preempts, std::uint32_t step);

    // A load at trace step `step` that may read `count` >= 1 stores, newest first.
    struct Read {
        std::size_t index;  // which store; if `future`, none:
        bool future;        // it reads a store that has not run yet, which must write `value`
        Bits value;
    };
    Read choose_read(std::size_t count, std::uint32_t step);
    // The load at `step` of the execution that just ended could also have read `value`.
    void add_future(std::uint32_t step, Bits value);
    // Whether the explorer should look for such values (depth-first phase only).
    bool learns_futures() const { return phase_ == Phase::dfs; }

    // The replay string of the current execution's choices so far ("t1,r1,f7@12,t0").
    std::string replay_string() const;
    // Set when Options::replay does not fit the scenario, or when a replayed DFS prefix met
    // different choices than before (a scenario that is not deterministic).
    const std::string& error() const { return error_; }

    std::uint64_t dfs_executions() const { return dfs_executions_; }
    bool dfs_complete() const { return dfs_complete_; }

  private:
    enum class Kind : std::uint8_t { thread, read };
    struct Choice {
        Kind kind;
        std::uint32_t step;
        std::uint32_t count;   // threads, or stores the load may read (futures come after)
        std::uint32_t chosen;  // index of the alternative taken
        int thread;            // the thread chosen (thread choices)
        bool preempts;         // thread choices: alternatives after the first preempt
        std::uint16_t preemptions_before, stale_before, futures_before;  // spent before it
        std::vector<Bits> futures;

        std::uint32_t alternatives() const {
            return count + static_cast<std::uint32_t>(futures.size());
        }
    };
    enum class Phase : std::uint8_t { replay, dfs, random, done };

    void decide(Choice& c, const std::vector<int>* threads);
    void replay(Choice& c, const std::vector<int>* threads);
    bool affordable(const Choice& c, std::uint32_t index) const;
    void record(const Choice& c);
    bool backtrack();  // DFS: set prefix_ to the next execution's; false when there is none
    std::uint64_t random_bits();

    Options options_;
    Phase phase_;
    std::vector<Choice> trail_;   // this execution's choices
    std::vector<Choice> prefix_;  // DFS: the choices this execution must repeat
    struct Token {
        char kind;  // 't', 'r' or 'f'
        std::uint64_t value;
        std::uint32_t step;  // 'f' only
    };
    std::vector<Token> replay_;
    std::size_t replayed_ = 0;
    std::string error_;
    std::uint16_t preemptions_ = 0, stale_ = 0, futures_ = 0;  // spent in this execution
    std::uint64_t dfs_executions_ = 0, random_executions_ = 0;
    bool dfs_complete_ = false;
    bool started_ = false;
    std::uint64_t rng_;
};

}  // namespace ws::model::detail
