// Lesson 08, exercise 2: the finishing task releases its successors.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <ws/testing/harness.hpp>
#include <ws/testing/wait.hpp>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson08_test::CheckedDag;
using lesson08_test::Node;
using lesson08_test::on_worker;
using lesson08_test::TaskGraph;
using lesson08_test::ThreadPool;
using ws::lesson08::run;

TEST(Lesson08Ex2, TheDiamondRunsInOrder) {
    // a -> b, a -> c, b -> d, c -> d; d reads what b and c wrote (plain data).
    ThreadPool pool(2);
    TaskGraph graph;
    int x = 0, from_b = 0, from_c = 0, sum = 0;
    Node a = graph.emplace([&] { x = 1; });
    Node b = graph.emplace([&] { from_b = x + 10; });
    Node c = graph.emplace([&] { from_c = x + 100; });
    Node d = graph.emplace([&] { sum = from_b + from_c; });
    a.precede(b);
    a.precede(c);
    d.succeed(b);
    d.succeed(c);
    run(pool, graph);
    EXPECT_EQ(sum, 112);
}

TEST(Lesson08Ex2, SuccessorsReleasedTogetherRunInParallel) {
    // a -> b, a -> c: b and c become ready at once, and each waits (bounded) until the other
    // has started, which only a second worker running one of them makes possible.
    ThreadPool pool(2);
    TaskGraph graph;
    std::atomic<bool> b_started{false}, c_started{false};
    bool b_saw_c = false, c_saw_b = false;
    const auto meet = [](std::atomic<bool>& mine, const std::atomic<bool>& other, bool& met) {
        mine = true;
        met = ws::testing::wait_until([&] { return other.load(); },
                                      std::chrono::seconds(2) * ws::testing::slowdown());
    };
    Node a = graph.emplace([] {});
    Node b = graph.emplace([&] { meet(b_started, c_started, b_saw_c); });
    Node c = graph.emplace([&] { meet(c_started, b_started, c_saw_b); });
    a.precede(b);
    a.precede(c);
    run(pool, graph);
    EXPECT_TRUE(b_saw_c && c_saw_b)
        << "b and c, released by the same predecessor, never ran at the same time: a ready "
           "successor must go where another worker can take it";
}

TEST(Lesson08Ex2, AChainOf10000NodesRunsInOrder) {
    ThreadPool pool(2);
    TaskGraph graph;
    std::vector<int> order;
    order.reserve(10'000);
    Node previous;
    for (int i = 0; i < 10'000; ++i) {
        Node node = graph.emplace([&order, i] { order.push_back(i); });
        if (!previous.empty()) previous.precede(node);
        previous = node;
    }
    run(pool, graph);
    ASSERT_EQ(order.size(), 10'000u);
    for (int i = 0; i < 10'000; ++i)
        ASSERT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST(Lesson08Ex2, AWideFanOutAndFanIn) {
    // One source, 10,000 nodes after it, one sink after all of them: the sink sees every write.
    ThreadPool pool(2);
    TaskGraph graph;
    std::vector<std::uint64_t> values(10'000, 0);
    std::uint64_t start_value = 0, sum = 0;
    Node source = graph.emplace([&] { start_value = 7; });
    Node sink = graph.emplace([&] {
        for (std::uint64_t v : values)
            sum += v;
    });
    for (std::size_t i = 0; i < values.size(); ++i) {
        Node middle = graph.emplace([&, i] { values[i] = start_value + i; });
        source.precede(middle);
        middle.precede(sink);
    }
    run(pool, graph);
    EXPECT_EQ(sum, 7u * 10'000u + 10'000u * 9'999u / 2);
}

TEST(Lesson08Ex2, ASuccessorSeesWhatEveryPredecessorWrote) {
    // 64 predecessors write plain data; the successor reads it all. Whichever predecessor
    // finishes last pushes the successor, so that decrement must carry the others' writes. (A
    // decrement too weak to do so is a data race, but the pool's own seq_cst accesses usually
    // order the writes anyway: TSan reported a relaxed decrement here in 1 of 20 runs.)
    ThreadPool pool(2);
    for (int round = 0; round < 50; ++round) {
        TaskGraph graph;
        std::vector<int> written(64, 0);
        int sum = 0;
        Node successor = graph.emplace([&] {
            for (int w : written)
                sum += w;
        });
        for (std::size_t i = 0; i < written.size(); ++i) {
            Node writer = graph.emplace([&written, i] { written[i] = 1; });
            writer.precede(successor);
        }
        run(pool, graph);
        ASSERT_EQ(sum, 64) << "round " << round;
    }
}

TEST(Lesson08Ex2, ASuccessorSeesTheWritesOfAPredecessorThatDidNotPushIt) {
    // Sources `late` and `writer`; `reader` after both. `writer` writes plain data and
    // decrements reader's counter first; its other successor, `hold`, then keeps writer's
    // worker busy until the reader has run, so that worker makes no other synchronisation. `late`
    // waits until `hold` has started, so its decrement is the last: its worker pushes `reader`
    // and runs it at once. Of the graph's own synchronisation, only the counter carries the
    // writer's data to the reader. (start pushes late, then writer: the caller's worker pops
    // writer, the other steals late.) A too-weak decrement is still rarely a TSan report: the
    // pool's seq_cst accesses on every push give TSan another path (0 of 20 runs, relaxed);
    // model/test_ex2_explorer.cpp catches it in every run.
    ThreadPool pool(2);
    const auto deadline = [] {
        return std::chrono::steady_clock::now() + std::chrono::seconds(5 * ws::testing::slowdown());
    };
    for (int round = 0; round < 20; ++round) {
        TaskGraph graph;
        std::vector<int> data(16, 0);
        int seen = 0;
        std::atomic<bool> hold_started{false}, reader_done{false};
        // relaxed flags: they must add no synchronisation of their own
        Node late = graph.emplace([&] {
            const auto until = deadline();
            while (!hold_started.load(std::memory_order_relaxed) &&
                   std::chrono::steady_clock::now() < until)
                std::this_thread::yield();
        });
        Node writer = graph.emplace([&] {
            for (int& d : data)
                d = 1;
        });
        Node reader = graph.emplace([&] {
            for (int d : data)
                seen += d;
            reader_done.store(true, std::memory_order_relaxed);
        });
        Node hold = graph.emplace([&] {
            hold_started.store(true, std::memory_order_relaxed);
            const auto until = deadline();
            while (!reader_done.load(std::memory_order_relaxed) &&
                   std::chrono::steady_clock::now() < until)
                std::this_thread::yield();
        });
        writer.precede(reader);  // first: the writer decrements reader's counter before hold's
        writer.precede(hold);
        late.precede(reader);
        run(pool, graph);
        ASSERT_EQ(seen, 16) << "round " << round;
    }
}

namespace {

// Two chains of nodes in step: node i of each chain waits for node i of the other (a spin
// barrier), then both decrement the counter of join i, their common successor, at the same
// moment, before their own chain's next node's. Each worker pushes its chain's next node onto its
// own deque and pops it at once, so the chains run on with no steal and no wake-up between
// them, a race at every step.
struct TwinChains {
    TwinChains(std::size_t length, std::chrono::steady_clock::time_point stop_at)
        : stop(stop_at), arrived(length), runs(length) {}

    void build(TaskGraph& graph) {
        Node previous[2];
        for (std::size_t i = 0; i < runs.size(); ++i) {
            Node join = graph.emplace([this, i] {
                if (runs[i].fetch_add(1) != round) twice = true;
            });
            for (Node& chain : previous) {
                Node node = graph.emplace([this, i] { meet(i); });
                node.precede(join);  // first: the race
                if (i != 0) chain.precede(node);
                chain = node;
            }
        }
    }

    // Waits at most 50 us: a partner that has no CPU just now (a loaded machine), or that waits
    // behind this node on the same worker, is not waited for. The chain that went on alone
    // waits again at its next nodes, where the other catches up at once (its partners have
    // arrived), so the two are in step again as soon as both run. After `stop`, nobody waits.
    void meet(std::size_t i) {
        const std::size_t target = 2 * (round + 1);
        arrived[i].fetch_add(1);
        const auto now = std::chrono::steady_clock::now();
        if (now > stop) return;
        const auto until = now + std::chrono::microseconds(50);
        while (arrived[i].load() < target && std::chrono::steady_clock::now() < until) {
        }
    }

    std::chrono::steady_clock::time_point stop;
    std::vector<std::atomic<std::size_t>> arrived;  // at barrier i, over all runs of the graph
    std::vector<std::atomic<std::size_t>> runs;     // of join i, over all runs of the graph
    std::size_t round = 0;                          // runs of the graph before this one
    std::atomic<bool> twice{false};
};

}  // namespace

TEST(Lesson08Ex2, PredecessorsThatFinishTogetherPushTheSuccessorOnce) {
    // Two predecessors that finish together race their decrements of the successor's counter;
    // exactly one of them may push it. A wrong protocol's window is a few instructions wide, so
    // a graph of 1024 such races runs again and again for a second. A join that runs twice ends
    // the test at once, without waiting for a run() that may never return. (The explorer's
    // model/test_ex2_explorer.cpp tries every interleaving of one such race instead.)
    constexpr std::size_t kLength = 1024;
    const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    auto chains = std::make_unique<TwinChains>(kLength, stop);
    auto pool = std::make_unique<ThreadPool>(2);
    auto graph = std::make_unique<TaskGraph>();
    chains->build(*graph);
    for (; std::chrono::steady_clock::now() < stop; ++chains->round) {
        lesson08_test::RunOutcome outcome;
        const bool returned = lesson08_test::run_returns_within(
            pool, graph, outcome, 5, [&] { return chains->twice.load(); });
        if (!returned || chains->twice.load()) {
            const std::size_t round = chains->round;
            const bool twice = chains->twice.load();
            // A node may still run (a join pushed twice): leave everything it uses behind.
            (void)pool.release();
            (void)graph.release();
            (void)chains.release();
            if (twice)
                FAIL() << "in run " << round
                       << " of the graph, a join ran twice: both of its predecessors pushed it";
            FAIL() << "run " << round << " of the graph did not return within 5 s";
        }
        ASSERT_FALSE(outcome.threw) << outcome.what;
        std::size_t wrong = 0;
        for (const auto& r : chains->runs)
            wrong += r.load() != chains->round + 1;
        ASSERT_EQ(wrong, 0U) << "joins (of " << kLength << ") that did not run once in run "
                             << chains->round;
    }
}

TEST(Lesson08Ex2, RandomDagsOfUpTo100000Nodes) {
    ThreadPool pool(2);
    const std::uint64_t seed = ws::testing::test_seed();
    for (std::size_t n : {10u, 1'000u, 100'000u}) {
        CheckedDag dag(n, 4, 64, seed + n);
        dag.run_and_check(pool);
        if (HasFailure()) {
            ADD_FAILURE() << "a random DAG of " << n << " nodes";
            return;
        }
    }
}

TEST(Lesson08Ex2, ADeepDagWithLongEdges) {
    // Predecessors anywhere behind: long-range dependencies across 20,000 nodes.
    ThreadPool pool(2);
    CheckedDag dag(20'000, 3, 20'000, ws::testing::test_seed());
    dag.run_and_check(pool);
}

TEST(Lesson08Ex2, RunFromInsideATaskHelpsWhileItWaits) {
    // On a pool of one worker, a task that runs a graph must run the graph's nodes itself.
    ThreadPool pool(1);
    CheckedDag dag(2'000, 3, 16, ws::testing::test_seed());
    on_worker(pool, [&] { dag.run_and_check(pool); });
}

TEST(Lesson08Ex2, ANodeCanRunAnotherGraph) {
    ThreadPool pool(2);
    CheckedDag inner(500, 3, 16, ws::testing::test_seed());
    TaskGraph outer;
    bool after = false;
    Node first = outer.emplace([&] { inner.run_and_check(pool); });
    Node second = outer.emplace([&] { after = true; });
    first.precede(second);
    run(pool, outer);
    EXPECT_TRUE(after);
}

TEST(Lesson08Ex2, TwoGraphsRunAtOnceFromTwoThreads) {
    ThreadPool pool(2);
    CheckedDag a(5'000, 3, 32, ws::testing::test_seed());
    CheckedDag b(5'000, 3, 32, ws::testing::test_seed() + 1);
    std::thread other([&] { a.run_and_check(pool); });
    b.run_and_check(pool);
    other.join();
}

TEST(Lesson08Ex2, AChainOfThreeReturnsWithinTwoSeconds) {
    // Bounded: a successor that is never pushed fails here in two seconds, not by the watchdog.
    auto pool = std::make_unique<ThreadPool>(2);
    auto graph = std::make_unique<TaskGraph>();
    static std::atomic<int> ran{0};  // static: a run that hangs outlives the test
    ran = 0;
    Node a = graph->emplace([] { ran.fetch_add(1); });
    Node b = graph->emplace([] { ran.fetch_add(1); });
    Node c = graph->emplace([] { ran.fetch_add(1); });
    a.precede(b);
    b.precede(c);
    lesson08_test::RunOutcome outcome;
    ASSERT_TRUE(lesson08_test::run_returns_within(pool, graph, outcome))
        << "run() of a chain a -> b -> c did not return (" << ran.load()
        << " nodes ran): is every successor pushed when its last predecessor finishes?";
    EXPECT_FALSE(outcome.threw) << outcome.what;
    EXPECT_EQ(ran.load(), 3);
}
