// Lesson 08, exercise 5: subflows — a subgraph built by a running node, joined before the node
// counts as finished.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include <ws/testing/harness.hpp>

#include "exercises.hpp"
#include "helpers.hpp"

using lesson08_test::Node;
using lesson08_test::on_worker;
using lesson08_test::Subflow;
using lesson08_test::TaskGraph;
using lesson08_test::ThreadPool;
using ws::lesson08::run;

TEST(Lesson08Ex5, ASubflowFinishesBeforeTheNodesSuccessors) {
    ThreadPool pool(2);
    TaskGraph graph;
    std::vector<int> written(200, 0);  // plain data, written by the subflow
    long sum = -1;
    Node parent = graph.emplace([&](Subflow& subflow) {
        for (std::size_t i = 0; i < written.size(); ++i)
            subflow.emplace([&written, i] {
                // 100 us of work each, so that the subflow takes about 10 ms on two workers: a
                // successor released before the subflow is done starts well before its end.
                const auto until =
                    std::chrono::steady_clock::now() + std::chrono::microseconds(100);
                while (std::chrono::steady_clock::now() < until) {
                }
                written[i] = 1;
            });
    });
    Node after = graph.emplace([&] {
        sum = 0;
        for (int w : written)
            sum += w;
    });
    parent.precede(after);
    run(pool, graph);
    EXPECT_EQ(sum, 200) << "the successor ran before the subflow had finished";
}

TEST(Lesson08Ex5, ASubflowHasDependenciesOfItsOwn) {
    ThreadPool pool(2);
    TaskGraph graph;
    std::vector<int> order;
    graph.emplace([&](Subflow& subflow) {
        Node previous;
        for (int i = 0; i < 100; ++i) {
            Node node = subflow.emplace([&order, i] { order.push_back(i); });
            if (!previous.empty()) previous.precede(node);
            previous = node;
        }
    });
    run(pool, graph);
    ASSERT_EQ(order.size(), 100u);
    for (int i = 0; i < 100; ++i)
        EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST(Lesson08Ex5, SubflowsNest) {
    // fib(15) as nested subflows: each node spawns two children unless n < 2.
    ThreadPool pool(2);
    std::atomic<long> leaves{0};
    struct Fib {
        std::atomic<long>& leaves;
        int n;
        void operator()(Subflow& subflow) const {
            if (n < 2) {
                leaves.fetch_add(n);
                return;
            }
            subflow.emplace(Fib{leaves, n - 1});
            subflow.emplace(Fib{leaves, n - 2});
        }
    };
    TaskGraph graph;
    graph.emplace(Fib{leaves, 15});
    run(pool, graph);
    EXPECT_EQ(leaves.load(), 610);
}

TEST(Lesson08Ex5, ASubflowOnOneWorkerIsJoinedByHelping) {
    ThreadPool pool(1);
    TaskGraph graph;
    std::atomic<int> children{0};
    graph.emplace([&](Subflow& subflow) {
        for (int i = 0; i < 100; ++i)
            subflow.emplace([&] { children.fetch_add(1); });
    });
    on_worker(pool, [&] { run(pool, graph); });
    EXPECT_EQ(children.load(), 100);
}

TEST(Lesson08Ex5, ASubflowIsRebuiltOnEveryRun) {
    ThreadPool pool(2);
    TaskGraph graph;
    std::atomic<int> children{0};
    graph.emplace([&](Subflow& subflow) {
        for (int i = 0; i < 10; ++i)
            subflow.emplace([&] { children.fetch_add(1); });
    });
    for (int run_number = 1; run_number <= 3; ++run_number) {
        run(pool, graph);
        EXPECT_EQ(children.load(), 10 * run_number)
            << "each run must run the subflow its task built in this run, once";
    }
}

TEST(Lesson08Ex5, ASubflowIsRebuiltFromEmptyAfterARunThatFailed) {
    // The first run's subflow throws from a child; in the second, the node's task throws while
    // it builds the subflow, after adding its nodes; the third must run exactly the ten children
    // its task built then. A subflow cleared after it has run, instead of before the task
    // builds it, is never cleared when the run throws: the next run runs the old nodes too.
    ThreadPool pool(2);
    TaskGraph graph;
    std::atomic<int> children{0};
    std::atomic<int> failing{1};  // 1: a child throws; 2: the node's task; 0: nothing throws
    graph.emplace([&](Subflow& subflow) {
        for (int i = 0; i < 10; ++i)
            subflow.emplace([&] { children.fetch_add(1); });
        subflow.emplace([&] {
            if (failing.load() == 1) throw std::runtime_error("child failed");
        });
        if (failing.load() == 2) throw std::runtime_error("task failed");
    });
    EXPECT_THROW(run(pool, graph), std::runtime_error) << "a child threw";
    failing = 2;
    EXPECT_THROW(run(pool, graph), std::runtime_error) << "the node's task threw";
    failing = 0;
    children = 0;
    run(pool, graph);
    EXPECT_EQ(children.load(), 10)
        << "after runs whose subflow threw, the subflow must hold only what its task built in "
           "this run: clear it before the task builds it";
}

TEST(Lesson08Ex5, WhatASubflowThrowsIsTheNodesException) {
    ThreadPool pool(2);
    TaskGraph graph;
    std::atomic<int> after_ran{0};
    Node parent = graph.emplace([](Subflow& subflow) {
        subflow.emplace([] { throw std::runtime_error("child failed"); });
    });
    Node after = graph.emplace([&] { after_ran.fetch_add(1); });
    parent.precede(after);
    try {
        run(pool, graph);
        ADD_FAILURE() << "run() returned normally although a subflow's node threw";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "child failed");
    }
    EXPECT_EQ(after_ran.load(), 0) << "the successor of a node whose subflow threw ran";
}

TEST(Lesson08Ex5, ASubflowsNodeCannotBeLinkedToItsParentsNodes) {
    ThreadPool pool(2);
    TaskGraph graph;
    Node outside = graph.emplace([] {}).name("parent's node");
    bool refused = false;
    graph.emplace([&](Subflow& subflow) {
        Node child = subflow.emplace([] {}).name("child");
        try {
            child.precede(outside);
        } catch (const std::invalid_argument&) {
            refused = true;
        }
    });
    run(pool, graph);
    EXPECT_TRUE(refused) << "a subflow's node was linked to a node of the parent graph";
}
