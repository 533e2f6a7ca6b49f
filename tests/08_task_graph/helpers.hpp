// Helpers shared by lesson 08's tests: random DAGs whose nodes check their predecessors.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <ws/testing/harness.hpp>
#include <ws/testing/within.hpp>

#include "task_graph.hpp"
#include "thread_pool.hpp"

namespace lesson08_test {

using ws::lesson08::Node;
using ws::lesson08::Subflow;
using ws::lesson08::TaskGraph;
using ws::lesson08::ThreadPool;

// A graph whose every node writes a plain (non-atomic) value computed from its predecessors'
// values, counts its runs and checks, when it starts, that each predecessor has finished this
// run. A successor that could start early, or that did not see what its predecessors wrote,
// gives a wrong value (and a data race under TSan); one that ran twice, a count of 2.
class CheckedDag {
  public:
    // `n` nodes; node i gets up to `max_preds` predecessors among the `window` nodes before it.
    CheckedDag(std::size_t n, std::size_t max_preds, std::size_t window, std::uint64_t seed)
        : preds_(n), values_(n, 0), runs_(n), finished_run_(n) {
        std::mt19937_64 rng(seed);
        for (std::size_t i = 0; i < n; ++i) {
            nodes_.push_back(graph_.emplace([this, i] { visit(i); }));
            if (i == 0) continue;
            const std::size_t k = std::uniform_int_distribution<std::size_t>(0, max_preds)(rng);
            const std::size_t lo = i > window ? i - window : 0;
            for (std::size_t e = 0; e < k; ++e) {
                const std::size_t p = std::uniform_int_distribution<std::size_t>(lo, i - 1)(rng);
                preds_[i].push_back(p);
                // Half the edges one way, half the other, so both spellings are tested.
                if (e % 2 == 0) {
                    nodes_[p].precede(nodes_[i]);
                } else {
                    nodes_[i].succeed(nodes_[p]);
                }
            }
        }
    }

    TaskGraph& graph() { return graph_; }
    Node node(std::size_t i) const { return nodes_[i]; }
    std::size_t size() const { return nodes_.size(); }

    // Runs the graph once more and checks every node ran once, after its predecessors.
    void run_and_check(ThreadPool& pool) {
        ++round_;
        ws::lesson08::run(pool, graph_);
        check();
    }

    void check() const {
        std::size_t early = 0, wrong = 0, not_once = 0;
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            if (runs_[i].load(std::memory_order_relaxed) != round_) ++not_once;
            if (values_[i] != expected(i)) ++wrong;
        }
        early = early_.load(std::memory_order_relaxed);
        EXPECT_EQ(not_once, 0u) << "nodes that did not run exactly once per run (" << round_
                                << " runs)";
        EXPECT_EQ(early, 0u) << "nodes that started before all of their predecessors finished";
        EXPECT_EQ(wrong, 0u) << "nodes that did not see their predecessors' values";
    }

  private:
    void visit(std::size_t i) {
        std::uint64_t v = i + round_;
        for (std::size_t p : preds_[i]) {
            if (finished_run_[p].load(std::memory_order_relaxed) != round_)
                early_.fetch_add(1, std::memory_order_relaxed);
            v = v * 31 + values_[p];  // plain reads of what the predecessors wrote
        }
        values_[i] = v;
        runs_[i].fetch_add(1, std::memory_order_relaxed);
        finished_run_[i].store(round_, std::memory_order_relaxed);
    }

    // What visit computes, sequentially (node order is a topological order).
    std::uint64_t expected(std::size_t i) const {
        if (expected_.size() != nodes_.size() || expected_round_ != round_) {
            expected_.assign(nodes_.size(), 0);
            for (std::size_t j = 0; j < nodes_.size(); ++j) {
                std::uint64_t v = j + round_;
                for (std::size_t p : preds_[j])
                    v = v * 31 + expected_[p];
                expected_[j] = v;
            }
            expected_round_ = round_;
        }
        return expected_[i];
    }

    TaskGraph graph_;
    std::vector<Node> nodes_;
    std::vector<std::vector<std::size_t>> preds_;
    std::vector<std::uint64_t> values_;
    std::vector<std::atomic<std::uint64_t>> runs_;
    std::vector<std::atomic<std::uint64_t>> finished_run_;
    std::atomic<std::size_t> early_{0};
    std::uint64_t round_ = 0;
    mutable std::vector<std::uint64_t> expected_;
    mutable std::uint64_t expected_round_ = 0;
};

// Runs `body` as a task on `pool` and waits for it: the test's code then runs on a worker.
template <typename F>
void on_worker(ThreadPool& pool, F body) {
    pool.spawn(std::move(body));
    pool.wait_idle();
}

// What a bounded run threw, as text: the exception stays on the thread that ran the call (an
// exception object released there after the test has moved on is a race TSan reports through
// libstdc++'s uninstrumented reference count).
struct RunOutcome {
    bool threw = false;
    bool invalid_argument = false;
    std::string what;
};

// run(pool, graph) bounded by `seconds` (scaled for sanitizers): false if it did not return.
// `hangs`, if given, is polled meanwhile: once it is true the run is known never to return, and
// this gives up at once instead of waiting out the bound. A run that hangs is left behind, and
// so are the pool and the graph it uses (leaked, so that no destructor waits for it).
inline bool run_returns_within(std::unique_ptr<ThreadPool>& pool, std::unique_ptr<TaskGraph>& graph,
                               RunOutcome& outcome, int seconds = 2,
                               const std::function<bool()>& hangs = {}) {
    auto result = std::make_shared<RunOutcome>();
    ws::testing::DetachedCall call([p = pool.get(), g = graph.get(), result] {
        try {
            ws::lesson08::run(*p, *g);
        } catch (const std::invalid_argument& e) {
            *result = {true, true, e.what()};
        } catch (const std::exception& e) {
            *result = {true, false, e.what()};
        }
    });
    const std::chrono::milliseconds bound = std::chrono::seconds(seconds * ws::testing::slowdown());
    const bool returned = hangs ? call.wait_for(bound, hangs) : call.wait_for(bound);
    if (!returned) {
        (void)pool.release();
        (void)graph.release();
        return false;
    }
    outcome = *result;  // written before the call returned: wait_for's mutex orders it
    return true;
}

}  // namespace lesson08_test
