// Lesson 08, exercise 1: counting predecessors and releasing the sources.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson08_test::Node;
using lesson08_test::TaskGraph;
using lesson08_test::ThreadPool;
using ws::lesson08::run;

TEST(Lesson08Ex1, PrecedeAndSucceedCountTheEdges) {
    TaskGraph graph;
    Node a = graph.emplace([] {});
    Node b = graph.emplace([] {});
    Node c = graph.emplace([] {});
    a.precede(c);
    c.succeed(b);
    EXPECT_EQ(a.num_successors(), 1u);
    EXPECT_EQ(b.num_successors(), 1u);
    EXPECT_EQ(c.num_predecessors(), 2u);
    EXPECT_EQ(a.num_predecessors(), 0u);
    EXPECT_EQ(c.num_successors(), 0u);
}

TEST(Lesson08Ex1, ASingleNodeRuns) {
    ThreadPool pool(2);
    TaskGraph graph;
    int ran = 0;
    graph.emplace([&] { ++ran; });
    run(pool, graph);
    EXPECT_EQ(ran, 1);
}

TEST(Lesson08Ex1, EveryOneOf10000IndependentNodesRunsOnce) {
    ThreadPool pool(2);
    TaskGraph graph;
    std::vector<std::atomic<int>> runs(10'000);
    for (auto& r : runs)
        graph.emplace([&r] { r.fetch_add(1, std::memory_order_relaxed); });
    run(pool, graph);
    std::size_t not_once = 0;
    for (auto& r : runs)
        not_once += r.load() != 1;
    EXPECT_EQ(not_once, 0u) << "nodes that did not run exactly once";
}

TEST(Lesson08Ex1, ARunFromOutsideSeesEveryNodesWrites) {
    ThreadPool pool(2);
    TaskGraph graph;
    std::vector<int> written(1000, 0);  // plain ints: run() must publish them to its caller
    for (std::size_t i = 0; i < written.size(); ++i)
        graph.emplace([&written, i] { written[i] = static_cast<int>(i) + 1; });
    run(pool, graph);
    for (std::size_t i = 0; i < written.size(); ++i)
        ASSERT_EQ(written[i], static_cast<int>(i) + 1) << "node " << i;
}

TEST(Lesson08Ex1, ARunningGraphRefusesToBeChangedOrRunAgain) {
    ThreadPool pool(2);
    TaskGraph graph;
    bool add_refused = false, run_refused = false, clear_refused = false;
    graph.emplace([&] {
        try {
            graph.emplace([] {});
        } catch (const std::logic_error&) {
            add_refused = true;
        }
        try {
            run(pool, graph);
        } catch (const std::logic_error&) {
            run_refused = true;
        }
        try {
            graph.clear();
        } catch (const std::logic_error&) {
            clear_refused = true;
        }
    });
    run(pool, graph);
    EXPECT_TRUE(add_refused);
    EXPECT_TRUE(run_refused);
    EXPECT_TRUE(clear_refused);
    EXPECT_EQ(graph.size(), 1u);
}
