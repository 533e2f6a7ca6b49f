// Lesson 08, exercise 2, under the interleaving explorer: two predecessors of one join finish
// at the same time, one on each thread, and each calls release_successors. Whatever the
// schedule and whatever values the C++ memory model lets each load read, exactly one of them
// pushes the join, and the one that pushes it sees what both predecessors wrote. The stress
// tests of test_ex2_successors.cpp leave both to luck: a decrement and a second look at the
// counter race only when the other decrement falls between them, and x86 (and, on the pool,
// ThreadSanitizer) hides a relaxed decrement.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <ws/atomic.hpp>
#include <ws/model/explore.hpp>
#include <ws/testing/harness.hpp>

#include "../exercises.hpp"
#include "task_graph.hpp"
// The pool's definitions, built with the explorer's atomics like every header here, so that
// this program links whatever release_successors reaches on its out-of-memory path (execute,
// and through a node's task the pool: run, help_until). Nothing here starts a pool.
#include "thread_pool.cpp"

namespace ws::lesson08 {

// The friend TaskGraph names: release_successors is private.
struct ExplorerAccess {
    template <typename Pusher>
    static void release_successors(TaskGraph& graph, detail::NodeState& node, Pusher& pusher) {
        graph.release_successors(node, pusher);
    }
};

}  // namespace ws::lesson08

namespace {

using ws::lesson08::ExplorerAccess;
using ws::lesson08::Job;
using ws::lesson08::TaskGraph;
using NodeState = ws::lesson08::detail::NodeState;

ws::model::Options options() {
    ws::testing::set_explorer_deadline();  // every test calls this first
    ws::model::Options o;
    o.random_executions = 300 / static_cast<std::uint64_t>(ws::testing::slowdown());
    return o;
}

// What each predecessor's task wrote: a relaxed store, so that only the order of the counter's
// decrements can make it visible to another thread (the explorer sees only atomics).
struct Results {
    ws::atomic<int> a{0};
    ws::atomic<int> b{0};
};

// Stands in for the pool: records each push, and whether the pushing thread saw both results
// when it pushed (the push hands that on to whoever takes the job, so the join's task sees at
// least as much).
struct RecordingPusher {
    explicit RecordingPusher(const Results& seen) : results(&seen) {}

    const Results* results;
    std::vector<const Job*> pushed;
    bool saw_both_results = true;

    void push(Job* job) {
        pushed.push_back(job);
        if (results->a.load(std::memory_order_relaxed) != 1 ||
            results->b.load(std::memory_order_relaxed) != 1)
            saw_both_results = false;
    }
};

// a -> join <- b, as link leaves them: join's counter holds its two predecessors.
struct Diamond {
    TaskGraph graph;  // the nodes' owner; never run
    NodeState a{graph, 0};
    NodeState b{graph, 1};
    NodeState join{graph, 2};

    Diamond() {
        a.successors.push_back(&join);
        b.successors.push_back(&join);
        join.num_predecessors = 2;
        join.unfinished.store(2, std::memory_order_relaxed);  // the threads' start publishes it
    }
};

// Explores a and b finishing at once: each predecessor writes its result, then its thread calls
// release_successors. `verdict(diamond, on_a, on_b)` checks what each thread pushed, and saw.
template <typename Verdict>
ws::model::Report explore_both_finishing(Verdict verdict) {
    return ws::model::explore(options(), [verdict] {
        Diamond d;
        Results results;
        RecordingPusher on_a(results), on_b(results);
        {
            ws::model::Thread other([&] {
                results.b.store(1, std::memory_order_relaxed);
                ExplorerAccess::release_successors(d.graph, d.b, on_b);
            });
            results.a.store(1, std::memory_order_relaxed);
            ExplorerAccess::release_successors(d.graph, d.a, on_a);
        }
        verdict(d, on_a, on_b);
    });
}

}  // namespace

// Decrementing and then loading the counter lets both predecessors see zero: the preemption
// between the decrement and the load that a stress test waits for, tried on every run.
TEST(Lesson08Ex2, ExplorerPredecessorsThatFinishTogetherPushTheJoinOnce) {
    const auto report = explore_both_finishing(
        [](const Diamond& d, const RecordingPusher& on_a, const RecordingPusher& on_b) {
            const std::size_t pushes = on_a.pushed.size() + on_b.pushed.size();
            ws::model::check(pushes != 0, "neither predecessor pushed the join");
            ws::model::check(pushes < 2, "both predecessors pushed the join: it would run twice");
            for (const RecordingPusher* p : {&on_a, &on_b})
                for (const Job* job : p->pushed)
                    ws::model::check(job == &d.join, "pushed a node that is not a successor");
        });
    EXPECT_FALSE(report.failed) << report;
}

// The predecessor that did not push the join hands its result over only through the counter:
// each decrement must release, and the one that reaches zero acquire. A relaxed decrement lets
// the pushing thread read the other predecessor's result as it was before it was written, on
// any machine.
TEST(Lesson08Ex2, ExplorerTheJoinSeesWhatEveryPredecessorWrote) {
    const auto report = explore_both_finishing(
        [](const Diamond&, const RecordingPusher& on_a, const RecordingPusher& on_b) {
            ws::model::check(on_a.saw_both_results && on_b.saw_both_results,
                             "the thread that pushed the join did not see both predecessors' "
                             "results: the decrements do not publish them");
        });
    EXPECT_FALSE(report.failed) << report;
}
