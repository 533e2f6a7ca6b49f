// The explorer's choices: depth-first within the bounds, then seeded random, or a replay.
#include "ws/model/detail/schedule.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace ws::model::detail {

namespace {

// Parses "t1,r0,t2": a thread choice names the thread, a read choice the index of the store
// among those the load could read, newest first. An unparsable string parses as far as it goes
// and names the first bad token.
std::vector<std::pair<char, int>> parse_replay(std::string_view text, std::string& error) {
    std::vector<std::pair<char, int>> out;
    while (!text.empty()) {
        const std::size_t comma = text.find(',');
        const std::string_view token = text.substr(0, comma);
        int value = -1;
        if (token.size() < 2 || (token[0] != 't' && token[0] != 'r') ||
            std::from_chars(token.data() + 1, token.data() + token.size(), value).ec !=
                std::errc{}) {
            error = "Options::replay: cannot read '" + std::string(token) + "'";
            break;
        }
        out.emplace_back(token[0], value);
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
    }
    return out;
}

}  // namespace

Schedule::Schedule(const Options& options)
    : options_(options),
      phase_(options.replay.empty() ? Phase::dfs : Phase::replay),
      rng_(options.seed * 0x9e3779b97f4a7c15u + 1) {
    if (phase_ == Phase::replay) {
        for (auto [kind, value] : parse_replay(options_.replay, error_))
            replay_.emplace_back(kind == 't' ? Kind::thread : Kind::read, value);
    }
}

bool Schedule::next_execution() {
    if (started_) {
        switch (phase_) {
            case Phase::replay:
                phase_ = Phase::done;
                break;
            case Phase::dfs:
                if (!backtrack()) {
                    dfs_complete_ = true;
                    phase_ = Phase::random;
                } else if (dfs_executions_ >= options_.max_dfs_executions) {
                    phase_ = Phase::random;  // the bound was too generous for the budget
                }
                break;
            case Phase::random:
            case Phase::done:
                break;
        }
        if (phase_ == Phase::random && random_executions_ >= options_.random_executions)
            phase_ = Phase::done;
    }
    started_ = true;
    if (phase_ == Phase::done) return false;
    if (phase_ == Phase::dfs) ++dfs_executions_;
    if (phase_ == Phase::random) ++random_executions_;
    trail_.clear();
    preemptions_ = stale_reads_ = 0;
    return true;
}

std::size_t Schedule::choose_thread(const std::vector<int>& threads, bool first_goes_on) {
    return choose(Kind::thread, static_cast<std::uint32_t>(threads.size()), first_goes_on,
                  &threads);
}

std::size_t Schedule::choose_read(std::size_t count) {
    return choose(Kind::read, static_cast<std::uint32_t>(count), true, nullptr);
}

std::size_t Schedule::choose(Kind kind, std::uint32_t count, bool costly,
                             const std::vector<int>* threads) {
    const std::size_t at = trail_.size();
    std::uint32_t index = 0;
    if (phase_ == Phase::dfs && at < prefix_.size()) {
        // A deterministic scenario meets the same choices when it repeats the same prefix.
        if ((prefix_[at].kind != kind || prefix_[at].count != count) && error_.empty()) {
            error_ = "the scenario is not deterministic: choice " + std::to_string(at + 1) +
                     " differs between two runs of the same schedule (does it depend on time, "
                     "addresses or a random number of its own?)";
        }
        index = std::min(prefix_[at].chosen, count - 1);
    } else if (phase_ == Phase::replay && at < replay_.size() && error_.empty()) {
        const auto [want_kind, value] = replay_[at];
        const auto found =
            threads ? std::find(threads->begin(), threads->end(), value) - threads->begin()
                    : static_cast<std::ptrdiff_t>(value);
        if (want_kind != kind || found < 0 || found >= static_cast<std::ptrdiff_t>(count)) {
            error_ = "Options::replay does not fit this scenario at choice " +
                     std::to_string(at + 1) + " (a different program or scenario?)";
        } else {
            index = static_cast<std::uint32_t>(found);
        }
    } else if (phase_ == Phase::random) {
        index = static_cast<std::uint32_t>(random_index(kind, count, costly));
    }
    const Choice choice{
        kind,   count,        index,       threads ? (*threads)[index] : static_cast<int>(index),
        costly, preemptions_, stale_reads_};
    trail_.push_back(choice);
    if (index > 0 && costly) ++(kind == Kind::thread ? preemptions_ : stale_reads_);
    return index;
}

std::size_t Schedule::random_index(Kind kind, std::uint32_t count, bool costly) {
    if (kind == Kind::thread) {
        // Go on with the running thread most of the time, so that a run has a few
        // preemptions at random places rather than a switch at every step.
        if (costly && random_bits() % 4 != 0) return 0;
        return static_cast<std::size_t>(random_bits() % count);
    }
    // A read: the newest store half of the time; never more than a few stale reads in one
    // execution, so that a spin-wait still sees the store it waits for.
    if (stale_reads_ >= 4 || random_bits() % 2 == 0) return 0;
    return static_cast<std::size_t>(random_bits() % count);
}

bool Schedule::backtrack() {
    for (std::size_t i = trail_.size(); i-- > 0;) {
        const Choice& c = trail_[i];
        const int bound =
            c.kind == Kind::thread ? options_.preemption_bound : options_.stale_read_bound;
        const int spent = c.kind == Kind::thread ? c.preemptions_before : c.stale_reads_before;
        // Every alternative after the first costs the same, so the next one is either within
        // the bound or none is.
        if (c.chosen + 1 < c.count && (!c.costly || spent + 1 <= bound)) {
            prefix_.assign(trail_.begin(), trail_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
            ++prefix_.back().chosen;
            return true;
        }
    }
    return false;
}

std::uint64_t Schedule::random_bits() {
    // splitmix64: small, and the same sequence on every platform.
    std::uint64_t z = (rng_ += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

std::string Schedule::replay_string() const {
    std::string out;
    for (const Choice& c : trail_) {
        if (!out.empty()) out += ',';
        out += c.kind == Kind::thread ? 't' : 'r';
        out += std::to_string(c.value);
    }
    return out;
}

}  // namespace ws::model::detail
