// Lesson 08, exercise 3: running a graph again.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <vector>

#include <ws/testing/harness.hpp>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson08_test::CheckedDag;
using lesson08_test::Node;
using lesson08_test::on_worker;
using lesson08_test::TaskGraph;
using lesson08_test::ThreadPool;
using ws::lesson08::run;

TEST(Lesson08Ex3, ARandomDagRunsFiveTimes) {
    ThreadPool pool(2);
    CheckedDag dag(20'000, 4, 64, ws::testing::test_seed());
    for (int i = 0; i < 5; ++i) {
        dag.run_and_check(pool);
        ASSERT_FALSE(HasFailure()) << "run " << i + 1;
    }
}

TEST(Lesson08Ex3, TheDiamondRunsAgainInOrder) {
    // Each node takes a ticket when it runs (b and c may run at once, so no shared vector).
    ThreadPool pool(2);
    TaskGraph graph;
    std::atomic<int> clock{0};
    std::atomic<int> ticket[4] = {-1, -1, -1, -1};
    std::atomic<int> runs{0};
    const auto node = [&](int i) {
        return graph.emplace([&, i] {
            ticket[i].store(clock.fetch_add(1));
            runs.fetch_add(1);
        });
    };
    Node a = node(0), b = node(1), c = node(2), d = node(3);
    a.precede(b);
    a.precede(c);
    d.succeed(b);
    d.succeed(c);
    for (int i = 0; i < 100; ++i) {
        runs = 0;
        run(pool, graph);
        ASSERT_EQ(runs.load(), 4) << "run " << i + 1;
        EXPECT_LT(ticket[0].load(), ticket[1].load()) << "run " << i + 1;
        EXPECT_LT(ticket[0].load(), ticket[2].load()) << "run " << i + 1;
        EXPECT_LT(ticket[1].load(), ticket[3].load()) << "run " << i + 1;
        EXPECT_LT(ticket[2].load(), ticket[3].load()) << "run " << i + 1;
    }
}

TEST(Lesson08Ex3, NodesAndEdgesAddedAfterARunTakePart) {
    ThreadPool pool(2);
    TaskGraph graph;
    std::vector<int> order;
    Node a = graph.emplace([&] { order.push_back(1); });
    Node b = graph.emplace([&] { order.push_back(2); });
    a.precede(b);
    run(pool, graph);
    Node c = graph.emplace([&] { order.push_back(3); });
    b.precede(c);
    Node d = graph.emplace([&] { order.push_back(4); });
    d.precede(a);
    order.clear();
    run(pool, graph);
    EXPECT_EQ(order, (std::vector<int>{4, 1, 2, 3}));
}

TEST(Lesson08Ex3, AGraphRunsAgainFromInsideATask) {
    ThreadPool pool(1);
    CheckedDag dag(1'000, 3, 16, ws::testing::test_seed());
    on_worker(pool, [&] {
        for (int i = 0; i < 3; ++i)
            dag.run_and_check(pool);
    });
}

TEST(Lesson08Ex3, ASecondRunReturnsWithinTwoSeconds) {
    // Bounded: a reset that leaves a counter wrong fails here in two seconds.
    auto pool = std::make_unique<ThreadPool>(2);
    auto graph = std::make_unique<TaskGraph>();
    static std::atomic<int> ran{0};  // static: a run that hangs outlives the test
    ran = 0;
    Node a = graph->emplace([] { ran.fetch_add(1); });
    Node b = graph->emplace([] { ran.fetch_add(1); });
    Node c = graph->emplace([] { ran.fetch_add(1); });
    Node d = graph->emplace([] { ran.fetch_add(1); });
    a.precede(b);
    a.precede(c);
    d.succeed(b);
    d.succeed(c);
    for (int run_number = 1; run_number <= 2; ++run_number) {
        lesson08_test::RunOutcome outcome;
        ASSERT_TRUE(lesson08_test::run_returns_within(pool, graph, outcome))
            << "run " << run_number << " of the diamond did not return";
        ASSERT_FALSE(outcome.threw) << "run " << run_number << ": " << outcome.what;
        EXPECT_EQ(ran.load(), 4 * run_number) << "after run " << run_number;
    }
}
