// Lesson 08, given code: building a graph (names, handles, what is refused while it runs).
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson08_test::Node;
using lesson08_test::TaskGraph;
using lesson08_test::ThreadPool;
using ws::lesson08::run;

TEST(Lesson08Graph, NodesHaveDefaultNamesAndCanBeRenamed) {
    TaskGraph graph;
    Node a = graph.emplace([] {});
    Node b = graph.emplace([] {}).name("load");
    EXPECT_EQ(a.name(), "node 0");
    EXPECT_EQ(b.name(), "load");
    EXPECT_EQ(graph.size(), 2u);
}

TEST(Lesson08Graph, AnEmptyHandleIsAnError) {
    TaskGraph graph;
    Node a = graph.emplace([] {});
    Node none;
    EXPECT_TRUE(none.empty());
    EXPECT_THROW(a.precede(none), std::invalid_argument);
    EXPECT_THROW((void)none.name(), std::invalid_argument);
}

TEST(Lesson08Graph, AnEmptyGraphRunsAtOnce) {
    ThreadPool pool(1);
    TaskGraph graph;
    run(pool, graph);
    EXPECT_TRUE(graph.empty());
}
