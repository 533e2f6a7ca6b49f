// The constraints on S, the single total order of all seq_cst operations (C++20
// [atomics.order]/4), as a directed graph: one node per seq_cst operation, an edge A -> B for
// "A must precede B in S". Such an S exists iff the graph is acyclic, so the explorer lets a
// seq_cst load read a store only if the edges that reading it adds close no cycle.
#pragma once

#include <cstdint>
#include <vector>

namespace ws::model::detail {

class ScOrder {
  public:
    int add_node() {
        edges_.emplace_back();
        return static_cast<int>(edges_.size()) - 1;
    }
    void add_edge(int from, int to) { edges_[static_cast<std::size_t>(from)].push_back(to); }

    // Is some node of `targets` reachable from some node of `sources` (a path of edges)?
    bool reaches_any(const std::vector<int>& sources, const std::vector<int>& targets) const;

  private:
    std::vector<std::vector<int>> edges_;  // edges_[a]: the nodes that must follow a
};

}  // namespace ws::model::detail
