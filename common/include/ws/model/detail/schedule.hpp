// Which execution to run next: the choices (who runs at a scheduling point, which store a load
// reads), made depth-first within the bounds, then at random, or replayed from a string.
//
// Stateless model checking: nothing of an execution is saved but its list of choices. The next
// execution replays that list up to the deepest choice that still has an untried alternative
// within the bounds, takes that alternative, and from there on takes the first alternative of
// every new choice (the running thread goes on; a load reads the newest store it may).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ws/model/explore.hpp>

namespace ws::model::detail {

class Schedule {
  public:
    explicit Schedule(const Options& options);

    // Prepares the next execution; false when there is none left to run.
    bool next_execution();

    // A scheduling point: `threads` are the thread ids that may run. If `first_goes_on`, the
    // first is the running thread and choosing another is a preemption. Returns an index.
    std::size_t choose_thread(const std::vector<int>& threads, bool first_goes_on);
    // A load with `count` >= 2 stores it may read, newest first; returns an index (0: newest).
    std::size_t choose_read(std::size_t count);

    // The replay string of the current execution's choices so far ("t1,r1,t0").
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
        std::uint32_t count;   // alternatives
        std::uint32_t chosen;  // index of the one taken
        int value;             // what the replay string says: a thread id, or the read's index
        bool costly;           // alternatives after the first cost a preemption / a stale read
        std::uint16_t preemptions_before;  // spent by the choices before this one
        std::uint16_t stale_reads_before;
    };
    enum class Phase : std::uint8_t { replay, dfs, random, done };

    // The index for a choice point with `count` alternatives: forced by the replay or the DFS
    // prefix, else the default or a random one. Records the choice.
    std::size_t choose(Kind kind, std::uint32_t count, bool costly,
                       const std::vector<int>* threads);
    std::size_t random_index(Kind kind, std::uint32_t count, bool costly);
    bool backtrack();  // DFS: set prefix_ to the next execution's; false when there is none
    std::uint64_t random_bits();

    Options options_;
    Phase phase_;
    std::vector<Choice> trail_;   // this execution's choices
    std::vector<Choice> prefix_;  // DFS: the choices this execution must repeat
    std::vector<std::pair<Kind, int>> replay_;
    std::string error_;
    std::uint16_t preemptions_ = 0, stale_reads_ = 0;  // spent so far in this execution
    std::uint64_t dfs_executions_ = 0, random_executions_ = 0;
    bool dfs_complete_ = false;
    bool started_ = false;
    std::uint64_t rng_;
};

}  // namespace ws::model::detail
