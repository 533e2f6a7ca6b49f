// A task graph in stages: `width` nodes a stage, each node after every node of the stage before
// (so a stage starts only when the whole previous one has finished). Bench 8's wide graph is one
// stage of 1000 nodes, its deep graph 100 stages of 10; ./workshop trace 8 draws a narrow one,
// where the waits for a stage's last node show on the timeline.
//
// Written for any graph type with `emplace(f)` returning a node that has `precede(node)`, so it
// names no lesson: lesson 08's TaskGraph (`ws::lesson08`), the starter's or the reference's.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace ws::bench {

// Adds stages * width nodes to `graph`, each running a copy of `work`.
template <typename Graph, typename Work>
void emplace_stages(Graph& graph, std::size_t stages, std::size_t width, const Work& work) {
    using Node = decltype(graph.emplace(work));
    std::vector<Node> previous, current;
    for (std::size_t s = 0; s < stages; ++s) {
        current.clear();
        for (std::size_t t = 0; t < width; ++t) {
            Node node = graph.emplace(work);
            for (Node& before : previous)
                before.precede(node);
            current.push_back(std::move(node));
        }
        previous.swap(current);
    }
}

}  // namespace ws::bench
