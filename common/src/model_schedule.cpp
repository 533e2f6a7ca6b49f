// The explorer's choices: depth-first within the bounds, then seeded random, or a replay.
#include "ws/model/detail/schedule.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace ws::model::detail {

namespace {

// "t1" (thread 1 runs), "r2" (the load reads the third-newest store it may read), "f7@12"
// (the load at step 12 reads 7 from a store that runs later).
template <typename Token>
std::vector<Token> parse_replay(std::string_view text, std::string& error) {
    std::vector<Token> out;
    while (!text.empty() && error.empty()) {
        const std::size_t comma = text.find(',');
        const std::string_view token = text.substr(0, comma);
        Token t{token.empty() ? '?' : token[0], 0, 0};
        const char* end = token.data() + token.size();
        std::from_chars_result r = std::from_chars(token.data() + 1, end, t.value);
        if (t.kind == 'f' && r.ec == std::errc{} && r.ptr != end && *r.ptr == '@')
            r = std::from_chars(r.ptr + 1, end, t.step);
        if (token.size() < 2 || (t.kind != 't' && t.kind != 'r' && t.kind != 'f') ||
            r.ec != std::errc{} || r.ptr != end) {
            error = "Options::replay: cannot read '" + std::string(token) + "'";
        }
        out.push_back(t);
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
    if (phase_ == Phase::replay) replay_ = parse_replay<Token>(options_.replay, error_);
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
                    phase_ = Phase::random;  // the bounds were too generous for the budget
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
    replayed_ = 0;
    preemptions_ = stale_ = futures_ = 0;
    return true;
}

std::size_t Schedule::choose_thread(const std::vector<int>& threads, bool preempts,
                                    std::uint32_t step) {
    Choice c{Kind::thread,
             step,
             static_cast<std::uint32_t>(threads.size()),
             0,
             -1,
             preempts,
             preemptions_,
             stale_,
             futures_,
             {}};
    decide(c, &threads);
    c.thread = threads[c.chosen];
    record(c);
    return c.chosen;
}

Schedule::Read Schedule::choose_read(std::size_t count, std::uint32_t step) {
    Choice c{
        Kind::read, step, static_cast<std::uint32_t>(count), 0, -1, false, preemptions_, stale_,
        futures_,   {}};
    decide(c, nullptr);
    record(c);
    if (c.chosen < c.count) return {c.chosen, false, 0};
    return {0, true, c.futures[c.chosen - c.count]};
}

void Schedule::decide(Choice& c, const std::vector<int>* threads) {
    const std::size_t at = trail_.size();
    if (phase_ == Phase::dfs && at < prefix_.size()) {
        // A deterministic scenario meets the same choices when it repeats the same prefix.
        const Choice& p = prefix_[at];
        if ((p.kind != c.kind || p.count != c.count || p.step != c.step) && error_.empty()) {
            error_ = "the scenario is not deterministic: choice " + std::to_string(at + 1) +
                     " differs between two runs of the same schedule (does it depend on time, "
                     "addresses or a random number of its own?)";
        }
        c.futures = p.futures;
        c.chosen = std::min(p.chosen, c.alternatives() - 1);
    } else if (phase_ == Phase::replay) {
        replay(c, threads);
    } else if (phase_ == Phase::random && c.count > 1) {
        if (c.kind == Kind::thread) {
            // Go on with the running thread most of the time, so that a run has a few
            // preemptions at random places rather than a switch at every step.
            if (!c.preempts || random_bits() % 4 == 0)
                c.chosen = static_cast<std::uint32_t>(random_bits() % c.count);
        } else if (stale_ < 4 && random_bits() % 2 == 0) {
            // The newest store half of the time, and never more than a few stale reads in one
            // execution, so that a spin-wait still sees the store it waits for.
            c.chosen = static_cast<std::uint32_t>(random_bits() % c.count);
        }
    }
}

void Schedule::replay(Choice& c, const std::vector<int>* threads) {
    if (!error_.empty() || replayed_ >= replay_.size()) return;  // then the defaults
    const Token& t = replay_[replayed_];
    auto mismatch = [&] {
        error_ = "Options::replay does not fit this scenario at its token " +
                 std::to_string(replayed_ + 1) + " (a different program or scenario?)";
    };
    if (c.kind == Kind::thread) {
        const auto found = std::find(threads->begin(), threads->end(), static_cast<int>(t.value));
        if (t.kind != 't' || found == threads->end()) return mismatch();
        c.chosen = static_cast<std::uint32_t>(found - threads->begin());
    } else if (t.kind == 'f' && t.step == c.step) {
        c.futures = {t.value};
        c.chosen = c.count;
    } else if (c.count == 1) {
        return;  // no choice was recorded here
    } else if (t.kind != 'r' || t.value >= c.count) {
        return mismatch();
    } else {
        c.chosen = static_cast<std::uint32_t>(t.value);
    }
    ++replayed_;
}

void Schedule::record(const Choice& c) {
    if (c.kind == Kind::thread && c.preempts && c.chosen > 0) ++preemptions_;
    if (c.kind == Kind::read && c.chosen >= c.count) ++futures_;
    if (c.kind == Kind::read && c.chosen > 0 && c.chosen < c.count) ++stale_;
    trail_.push_back(c);
}

bool Schedule::affordable(const Choice& c, std::uint32_t index) const {
    if (c.kind == Kind::thread)
        return !c.preempts || c.preemptions_before < options_.preemption_bound;
    if (index < c.count) return c.stale_before < options_.stale_read_bound;
    return c.futures_before < options_.future_read_bound;
}

bool Schedule::backtrack() {
    for (std::size_t i = trail_.size(); i-- > 0;) {
        const Choice& c = trail_[i];
        for (std::uint32_t next = c.chosen + 1; next < c.alternatives(); ++next) {
            if (!affordable(c, next)) continue;
            prefix_.assign(trail_.begin(), trail_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
            prefix_.back().chosen = next;
            return true;
        }
    }
    return false;
}

void Schedule::add_future(std::uint32_t step, Bits value) {
    auto it = std::lower_bound(trail_.begin(), trail_.end(), step,
                               [](const Choice& c, std::uint32_t s) { return c.step < s; });
    for (; it != trail_.end() && it->step == step; ++it) {
        if (it->kind != Kind::read) continue;
        if (std::find(it->futures.begin(), it->futures.end(), value) == it->futures.end())
            it->futures.push_back(value);
        return;
    }
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
        std::string token;
        if (c.kind == Kind::thread) {
            token = "t" + std::to_string(c.thread);
        } else if (c.chosen >= c.count) {
            token =
                "f" + std::to_string(c.futures[c.chosen - c.count]) + "@" + std::to_string(c.step);
        } else if (c.count > 1) {
            token = "r" + std::to_string(c.chosen);
        }
        if (token.empty()) continue;
        if (!out.empty()) out += ',';
        out += token;
    }
    return out;
}

}  // namespace ws::model::detail
