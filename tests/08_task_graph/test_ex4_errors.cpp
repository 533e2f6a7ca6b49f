// Lesson 08, exercise 4: errors — cycles, exceptions and cancellation, foreign nodes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <ws/testing/harness.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>
#include <ws/testing/within.hpp>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson08_test::CheckedDag;
using lesson08_test::Node;
using lesson08_test::run_returns_within;
using lesson08_test::TaskGraph;
using lesson08_test::ThreadPool;
using ws::lesson08::run;

namespace {

// Runs a graph that has a cycle; expects std::invalid_argument naming one of `on_cycle`, and
// that no node ran. Bounded: a run that does not refuse the cycle never finishes. A node that
// runs shows at once that the cycle was missed (the run then waits for ever for the nodes on
// it), so the test fails then, without waiting out the bound.
// (If the run does not return, `graph` is left behind, null, as run_returns_within does.)
void expect_cycle_refused(std::unique_ptr<TaskGraph>& graph, const std::atomic<int>& ran,
                          const std::vector<std::string>& on_cycle) {
    auto pool = std::make_unique<ThreadPool>(2);
    lesson08_test::RunOutcome outcome;
    const bool returned =
        run_returns_within(pool, graph, outcome, 2, [&ran] { return ran.load() != 0; });
    ASSERT_EQ(ran.load(), 0) << "nodes ran although the graph has a cycle: the cycle check must "
                                "find it before anything runs, wherever it is (a cycle that no "
                                "source reaches too)";
    ASSERT_TRUE(returned) << "run() of a graph with a cycle did not return: the cycle must be "
                             "found before anything runs";
    ASSERT_TRUE(outcome.threw) << "run() of a graph with a cycle returned normally";
    EXPECT_TRUE(outcome.invalid_argument)
        << "expected std::invalid_argument, got another exception: " << outcome.what;
    bool named = false;
    for (const auto& name : on_cycle)
        named = named || outcome.what.find(name) != std::string::npos;
    EXPECT_TRUE(named) << "the message names no node of the cycle: " << outcome.what;
    EXPECT_EQ(ran.load(), 0) << "nodes ran although the graph has a cycle";
}

}  // namespace

TEST(Lesson08Ex4, ACycleIsReportedBeforeAnythingRuns) {
    auto graph = std::make_unique<TaskGraph>();
    static std::atomic<int> ran{0};  // static: a run that hangs may outlive the test
    ran = 0;
    Node source = graph->emplace([] { ran.fetch_add(1); }).name("source");
    Node a = graph->emplace([] { ran.fetch_add(1); }).name("alpha");
    Node b = graph->emplace([] { ran.fetch_add(1); }).name("beta");
    Node c = graph->emplace([] { ran.fetch_add(1); }).name("gamma");
    Node sink = graph->emplace([] { ran.fetch_add(1); }).name("sink");
    source.precede(a);
    a.precede(b);
    b.precede(c);
    c.precede(a);
    c.precede(sink);
    expect_cycle_refused(graph, ran, {"alpha", "beta", "gamma"});
}

TEST(Lesson08Ex4, ASelfLoopIsACycle) {
    auto graph = std::make_unique<TaskGraph>();
    static std::atomic<int> ran{0};
    ran = 0;
    Node other = graph->emplace([] { ran.fetch_add(1); }).name("other");
    Node loop = graph->emplace([] { ran.fetch_add(1); }).name("loop");
    (void)other;
    loop.precede(loop);
    expect_cycle_refused(graph, ran, {"loop"});
}

TEST(Lesson08Ex4, ACycleDeepInALargeGraphIsFound) {
    // 100,000 nodes in a chain, the last one linked back to node 50,000. (On the pool's 64 MiB
    // stacks a check that recursed once per node would still pass here: the next test runs the
    // check on a small stack.)
    auto graph = std::make_unique<TaskGraph>();
    static std::atomic<int> ran{0};
    ran = 0;
    std::vector<Node> nodes;
    for (int i = 0; i < 100'000; ++i) {
        nodes.push_back(graph->emplace([] { ran.fetch_add(1); }));
        if (i > 0) nodes[static_cast<std::size_t>(i) - 1].precede(nodes.back());
    }
    nodes.back().precede(nodes[50'000]);
    expect_cycle_refused(graph, ran, {"node 99999", "node 50000", "node 7"});
}

namespace {
// In a child process: a chain of 100,000 nodes run on a pool whose one worker has a 1 MiB
// stack (the check runs on the worker). Exit code 0: every node ran once.
[[noreturn]] void run_a_long_chain_on_a_small_stack() {
    ThreadPool pool(ws::lesson08::Config{.num_workers = 1, .stack_size = std::size_t{1} << 20});
    TaskGraph graph;
    std::atomic<int> ran{0};
    Node previous;
    for (int i = 0; i < 100'000; ++i) {
        Node node = graph.emplace([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
        if (!previous.empty()) previous.precede(node);
        previous = node;
    }
    run(pool, graph);
    std::_Exit(ran.load() == 100'000 ? 0 : 1);
}
}  // namespace

TEST(Lesson08Ex4, TheCycleCheckOfALongChainFitsInASmallStack) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // the parent runs threads of its own
    EXPECT_EXIT(run_a_long_chain_on_a_small_stack(), ::testing::ExitedWithCode(0), "")
        << "a chain of 100,000 nodes did not run on a worker with a 1 MiB stack: does the cycle "
           "check recurse once per node of the path? (the pool's 64 MiB stacks hide that)";
}

TEST(Lesson08Ex4, ACycleMadeAfterARunIsFound) {
    // The graph ran (and was found acyclic); an edge added afterwards closes a cycle.
    auto graph = std::make_unique<TaskGraph>();
    static std::atomic<int> ran{0};
    Node a = graph->emplace([] { ran.fetch_add(1); }).name("first");
    Node b = graph->emplace([] { ran.fetch_add(1); }).name("second");
    a.precede(b);
    {
        ThreadPool pool(2);
        ws::lesson08::run(pool, *graph);
    }
    ASSERT_EQ(ran.load(), 2);
    ran = 0;
    b.precede(a);
    expect_cycle_refused(graph, ran, {"first", "second"});
}

TEST(Lesson08Ex4, AGraphRefusedForACycleIsRefusedAgainOnTheNextRun) {
    // The cycle is still there after run() has refused it: the next run must refuse it too. A
    // check that records the graph as acyclic before its search has finished (acyclic_ = true
    // first) skips the search next time: the source runs, the ring never does, and the run
    // never ends.
    auto graph = std::make_unique<TaskGraph>();
    static std::atomic<int> ran{0};
    ran = 0;
    Node source = graph->emplace([] { ran.fetch_add(1); }).name("source");
    Node a = graph->emplace([] { ran.fetch_add(1); }).name("ring-a");
    Node b = graph->emplace([] { ran.fetch_add(1); }).name("ring-b");
    source.precede(a);
    a.precede(b);
    b.precede(a);
    for (int attempt = 1; attempt <= 2; ++attempt) {
        SCOPED_TRACE(attempt == 1 ? "the first run of the graph with a cycle"
                                  : "the second run, after the first refused the cycle: was the "
                                    "graph recorded as acyclic before the search had finished?");
        expect_cycle_refused(graph, ran, {"ring-a", "ring-b"});
        if (HasFatalFailure()) return;
    }
}

TEST(Lesson08Ex4, TheCycleMessageNamesANodeOnTheCycleNotOneAfterIt) {
    // The nodes after a cycle cannot run either, but they are not on it, and the message must
    // name a node that is. `downstream`, after the ring, comes first in the graph: a check that
    // names the first node it could not order (Kahn's algorithm leaves the cycle and every node
    // after it unordered) names `downstream`.
    auto graph = std::make_unique<TaskGraph>();
    static std::atomic<int> ran{0};
    ran = 0;
    Node downstream = graph->emplace([] { ran.fetch_add(1); }).name("downstream");
    Node a = graph->emplace([] { ran.fetch_add(1); }).name("ring-a");
    Node b = graph->emplace([] { ran.fetch_add(1); }).name("ring-b");
    a.precede(b);
    b.precede(a);
    b.precede(downstream);
    expect_cycle_refused(graph, ran, {"ring-a", "ring-b"});
}

TEST(Lesson08Ex4, AThrowingNodeCancelsTheNodesAfterIt) {
    // a -> b -> c -> d, b throws: c and d never start, run() rethrows b's exception.
    ThreadPool pool(2);
    TaskGraph graph;
    std::atomic<int> a{0}, c{0}, d{0};
    Node na = graph.emplace([&] { a.fetch_add(1); });
    Node nb = graph.emplace([] { throw std::runtime_error("b failed"); });
    Node nc = graph.emplace([&] { c.fetch_add(1); });
    Node nd = graph.emplace([&] { d.fetch_add(1); });
    na.precede(nb);
    nb.precede(nc);
    nc.precede(nd);
    try {
        run(pool, graph);
        ADD_FAILURE() << "run() returned normally although a node threw";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "b failed");
    }
    EXPECT_EQ(a.load(), 1);
    EXPECT_EQ(c.load(), 0) << "a node after the one that threw ran";
    EXPECT_EQ(d.load(), 0) << "a node after the one that threw ran";
}

namespace {
// What a node throws that is not a std::exception (nor any class derived from one).
struct NotAStdException {
    int code;
};
}  // namespace

TEST(Lesson08Ex4, AnExceptionThatIsNotAStdExceptionReachesTheCaller) {
    // a -> b -> c, and b throws a plain struct: run() rethrows that struct, with its value, c is
    // skipped, and the pool and the graph work on: in the next run b does not throw and all
    // three run. A run_node that catches only std::exception lets the struct out of the
    // noexcept Job, and the process ends. Bounded: a run that loses track of the failed node
    // never ends.
    struct State {
        std::atomic<int> a{0}, b{0}, c{0};
        std::atomic<bool> fail{true};
    };
    auto state = std::make_shared<State>();  // shared: a run that hangs outlives the test
    auto pool = std::make_unique<ThreadPool>(2);
    auto graph = std::make_unique<TaskGraph>();
    Node a = graph->emplace([state] { state->a.fetch_add(1); });
    Node b = graph->emplace([state] {
        state->b.fetch_add(1);
        if (state->fail.load()) throw NotAStdException{42};
    });
    Node c = graph->emplace([state] { state->c.fetch_add(1); });
    a.precede(b);
    b.precede(c);

    // What run() threw, recorded on the thread that called it (see RunOutcome).
    struct Outcome {
        bool threw = false;
        bool not_std = false;
        int code = 0;
        std::string what;
    };
    const auto bounded_run = [&pool, &graph](Outcome& outcome) {
        auto result = std::make_shared<Outcome>();
        ws::testing::DetachedCall call([p = pool.get(), g = graph.get(), result] {
            try {
                run(*p, *g);
            } catch (const NotAStdException& e) {
                *result = {true, true, e.code, "NotAStdException"};
            } catch (const std::exception& e) {
                *result = {true, false, 0, e.what()};
            } catch (...) {
                *result = {true, false, 0, "an exception of another type"};
            }
        });
        if (!call.wait_for(std::chrono::seconds(2 * ws::testing::slowdown()))) {
            (void)pool.release();
            (void)graph.release();
            return false;
        }
        outcome = *result;  // written before the call returned: wait_for's mutex orders it
        return true;
    };

    Outcome first;
    ASSERT_TRUE(bounded_run(first)) << "run() did not return although a node threw";
    ASSERT_TRUE(first.threw) << "run() returned normally although a node threw";
    EXPECT_TRUE(first.not_std) << "run() rethrew something else than what the node threw: "
                               << first.what;
    EXPECT_EQ(first.code, 42) << "the rethrown exception is not the node's own";
    EXPECT_EQ(state->a.load(), 1);
    EXPECT_EQ(state->b.load(), 1);
    EXPECT_EQ(state->c.load(), 0) << "the node after the one that threw ran";

    state->a = 0;
    state->b = 0;
    state->fail = false;
    Outcome second;
    ASSERT_TRUE(bounded_run(second)) << "the run after the failed one did not return";
    EXPECT_FALSE(second.threw) << "the run after the failed one threw: " << second.what;
    EXPECT_EQ(state->a.load(), 1);
    EXPECT_EQ(state->b.load(), 1);
    EXPECT_EQ(state->c.load(), 1) << "the run after the failed one did not run every node";
}

TEST(Lesson08Ex4, RunWaitsForTheStartedNodesBeforeItRethrows) {
    // Two sources: `slow` has started when `thrower` throws, and must have finished when run()
    // rethrows (it writes to the test's frame).
    ThreadPool pool(2);
    TaskGraph graph;
    std::atomic<bool> slow_started{false};
    std::atomic<bool> slow_finished{false};
    graph.emplace([&] {
        slow_started.store(true);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        slow_finished.store(true);
    });
    graph.emplace([&] {
        while (!slow_started.load())
            std::this_thread::yield();
        throw std::runtime_error("thrower");
    });
    EXPECT_THROW(run(pool, graph), std::runtime_error);
    EXPECT_TRUE(slow_finished.load()) << "run() rethrew before a started node had finished";
}

TEST(Lesson08Ex4, TheFirstExceptionIsRethrownOnce) {
    // Many nodes throw; run() rethrows one of them, and the next run starts clean.
    ThreadPool pool(2);
    TaskGraph graph;
    std::atomic<int> ran{0};
    for (int i = 0; i < 100; ++i)
        graph.emplace([&ran, i] {
            ran.fetch_add(1);
            throw std::runtime_error("node " + std::to_string(i));
        });
    EXPECT_THROW(run(pool, graph), std::runtime_error);
    EXPECT_GE(ran.load(), 1);
    EXPECT_LE(ran.load(), 100);
}

TEST(Lesson08Ex4, TheFirstExceptionIsKeptWhenAnotherNodeThrowsLater) {
    // Two sources, running at once on the two workers (each waits until the other has started,
    // so neither is skipped): `first` throws; `second` throws only once first's worker has gone
    // to sleep (it found no more work and parked, long after it kept first's exception). run()
    // must rethrow the first exception, not the later one.
    ThreadPool pool(2);
    TaskGraph graph;
    std::atomic<ws::testing::ThreadId> first_worker{0};
    std::atomic<bool> second_started{false};
    bool forced = false;  // written by `second`, read after run(): run() orders it
    const auto bound = std::chrono::seconds(5) * ws::testing::slowdown();
    graph.emplace([&] {
        first_worker.store(ws::testing::current_thread_id());
        ws::testing::wait_until([&] { return second_started.load(); }, bound);
        throw std::runtime_error("first");
    });
    graph.emplace([&] {
        second_started.store(true);
        ws::testing::wait_until([&] { return first_worker.load() != 0; }, bound);
        const ws::testing::ThreadId other = first_worker.load();
        forced = other != 0 && other != ws::testing::current_thread_id() &&
                 ws::testing::wait_until_asleep({other}, bound);
        throw std::runtime_error("second");
    });
    try {
        run(pool, graph);
        ADD_FAILURE() << "run() returned normally although two nodes threw";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "first")
            << "run() rethrew a later exception: the first one a node throws must be kept";
    }
    if (second_started.load()) {
        EXPECT_TRUE(forced) << "the two nodes did not run at once, or the worker that ran "
                               "`first` never went to sleep: the test proves nothing this time";
    }
}

TEST(Lesson08Ex4, ARunAfterAFailedOneReturnsWithinTwoSeconds) {
    // a -> b -> c, and a throws: b and c are skipped. In the next run a does not throw, and all
    // three run. Bounded: a node that the failed run skipped, and whose counter was not given
    // back, is never released, and the second run never ends.
    auto pool = std::make_unique<ThreadPool>(2);
    auto graph = std::make_unique<TaskGraph>();
    static std::atomic<int> ran{0};  // static: a run that hangs outlives the test
    static std::atomic<bool> fail{true};
    ran = 0;
    fail = true;
    Node a = graph->emplace([] {
        ran.fetch_add(1);
        if (fail.load()) throw std::runtime_error("a failed");
    });
    Node b = graph->emplace([] { ran.fetch_add(1); });
    Node c = graph->emplace([] { ran.fetch_add(1); });
    a.precede(b);
    b.precede(c);
    lesson08_test::RunOutcome outcome;
    ASSERT_TRUE(run_returns_within(pool, graph, outcome)) << "the failing run did not return";
    ASSERT_TRUE(outcome.threw) << "run() returned normally although a node threw";
    EXPECT_EQ(outcome.what, "a failed");
    EXPECT_EQ(ran.load(), 1) << "nodes after the one that threw ran";
    ran = 0;
    fail = false;
    outcome = {};
    ASSERT_TRUE(run_returns_within(pool, graph, outcome))
        << "the run after a failed one did not return (" << ran.load()
        << " of 3 nodes ran): the nodes the failed run skipped need their counters back too";
    EXPECT_FALSE(outcome.threw) << outcome.what;
    EXPECT_EQ(ran.load(), 3);
}

TEST(Lesson08Ex4, NothingRunsTwiceAndNothingIsLostWhenANodeThrows) {
    // A random DAG with one node that throws: every node runs at most once, none of the
    // thrower's descendants runs, and the graph runs in full next time.
    ThreadPool pool(2);
    const std::size_t n = 5'000;
    TaskGraph graph;
    std::vector<Node> nodes;
    std::vector<std::atomic<int>> runs(n);
    std::atomic<bool> throw_now{true};
    const std::size_t thrower = n / 3;
    for (std::size_t i = 0; i < n; ++i) {
        nodes.push_back(graph.emplace([&, i] {
            runs[i].fetch_add(1);
            if (i == thrower && throw_now.load()) throw std::runtime_error("thrower");
        }));
        if (i > 0) nodes[(i * 7919) % i].precede(nodes[i]);  // a tree: each node one parent
    }
    EXPECT_THROW(run(pool, graph), std::runtime_error);
    std::vector<bool> below(n, false);
    below[thrower] = true;
    std::size_t twice = 0, descendants_ran = 0;
    for (std::size_t i = 1; i < n; ++i) {
        below[i] = below[i] || below[(i * 7919) % i];
        if (below[i] && i != thrower && runs[i].load() != 0) ++descendants_ran;
    }
    for (auto& r : runs)
        twice += r.load() > 1;
    EXPECT_EQ(twice, 0u) << "nodes that ran twice";
    EXPECT_EQ(descendants_ran, 0u) << "descendants of the throwing node ran";

    // The next run: nothing cancelled, every node once more.
    for (auto& r : runs)
        r.store(0);
    throw_now.store(false);
    try {
        run(pool, graph);
    } catch (const std::exception& e) {
        FAIL() << "the run after a failed one threw: " << e.what();
    }
    std::size_t not_once = 0;
    for (auto& r : runs)
        not_once += r.load() != 1;
    EXPECT_EQ(not_once, 0u) << "after a failed run, nodes that did not run once the next time";
}

TEST(Lesson08Ex4, LinkingNodesOfTwoGraphsIsRefused) {
    TaskGraph one, two;
    Node a = one.emplace([] {}).name("a-of-one");
    Node b = two.emplace([] {}).name("b-of-two");
    try {
        a.precede(b);
        FAIL() << "linking nodes of two graphs was accepted";
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("a-of-one"), std::string::npos) << what;
        EXPECT_NE(what.find("b-of-two"), std::string::npos) << what;
    }
    EXPECT_THROW(b.succeed(a), std::invalid_argument);
    EXPECT_EQ(a.num_successors(), 0u);
    EXPECT_EQ(b.num_predecessors(), 0u) << "a refused link must change nothing";
}
