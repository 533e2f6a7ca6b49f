// Lesson 08 on the tour's pool workloads, each run through a TaskGraph. Lesson 08's pool is
// lesson 07's, carried unchanged, so the row against lesson07's shows what the graph's
// bookkeeping costs: a node per task, its counters, the run's pending count.
//
//   flat_spawn   a wide graph of kFlatTasks independent nodes (tiny_work), run from outside
//   spawn_tree   a node per inner task of the tree whose subflow holds its two children, rebuilt
//                on every run (kTreeDepth: the same 262,143 tasks; the leaves do tiny_work)
//   imbalanced   a wide graph of kImbalancedTasks nodes with imbalanced_from_one's work
//
// The graphs are built once, outside the timed loop, and run again every iteration (what a graph
// is for); the subflows of spawn_tree are built inside it, as running nodes build them. The same
// kernel as every contender (ws/bench/kernel.hpp). No fork-join rows (lesson 07's join is the
// one lesson 08 carries) and no idleness rows (the pool is lesson 07's).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>

#include <ws/bench/kernel.hpp>
#include <ws/bench/workloads.hpp>

#include "08_task_graph/task_graph.hpp"
#include "08_task_graph/thread_pool.hpp"
#include "contenders.hpp"

namespace ws::bench {

namespace lesson08_graphs {

// A node of the spawn tree: a leaf does tiny_work, an inner node builds its two children in
// its subflow (which run joins before the node counts as finished).
inline void emplace_tree_node(lesson08::TaskGraph& graph, unsigned depth) {
    if (depth == 0) {
        graph.emplace([] { tiny_work(); });
        return;
    }
    graph.emplace([depth](lesson08::Subflow& subflow) {
        emplace_tree_node(subflow, depth - 1);
        emplace_tree_node(subflow, depth - 1);
    });
}

// Registers "<workload>/lesson08": build(graph) makes the graph once, each iteration runs it
// from outside the pool on a pool of bench_workers() workers.
template <typename Build>
void register_graph_workload(const std::string& workload, std::uint64_t tasks, Build build) {
    benchmark::RegisterBenchmark(
        (workload + "/lesson08").c_str(),
        [tasks, build](benchmark::State& state) {
            lesson08::ThreadPool pool(bench_workers());
            lesson08::TaskGraph graph;
            build(graph);
            const StealCounters counters(pool);
            for (auto _ : state)
                lesson08::run(pool, graph);
            state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(tasks));
            counters.report(state, pool);
        })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
}

}  // namespace lesson08_graphs

inline void register_lesson08() {
    using lesson08_graphs::register_graph_workload;
    register_graph_workload("flat_spawn", kFlatTasks, [](lesson08::TaskGraph& graph) {
        for (std::uint64_t i = 0; i < kFlatTasks; ++i)
            graph.emplace([] { tiny_work(); });
    });
    register_graph_workload(
        "spawn_tree", spawn_tree_tasks(kTreeDepth),
        [](lesson08::TaskGraph& graph) { lesson08_graphs::emplace_tree_node(graph, kTreeDepth); });
    register_graph_workload("imbalanced", kImbalancedTasks, [](lesson08::TaskGraph& graph) {
        const std::uint64_t unit = iterations_for(kImbalancedUnit);
        for (std::uint64_t i = 0; i < kImbalancedTasks; ++i) {
            const std::uint64_t work = (i % 8 == 0) ? 8 * unit : unit;
            graph.emplace([work] { (void)spin_kernel(work); });
        }
    });
}

}  // namespace ws::bench
