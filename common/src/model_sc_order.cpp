// The S graph's one query: a breadth-first search.
#include "ws/model/detail/sc_order.hpp"

namespace ws::model::detail {

bool ScOrder::reaches_any(const std::vector<int>& sources, const std::vector<int>& targets) const {
    if (sources.empty() || targets.empty()) return false;
    std::vector<char> is_target(edges_.size(), 0);
    for (int t : targets)
        is_target[static_cast<std::size_t>(t)] = 1;
    std::vector<char> seen(edges_.size(), 0);
    std::vector<int> todo;
    for (int s : sources) {
        if (!seen[static_cast<std::size_t>(s)]) {
            seen[static_cast<std::size_t>(s)] = 1;
            todo.push_back(s);
        }
    }
    while (!todo.empty()) {
        const int node = todo.back();
        todo.pop_back();
        if (is_target[static_cast<std::size_t>(node)]) return true;
        for (int next : edges_[static_cast<std::size_t>(node)]) {
            if (!seen[static_cast<std::size_t>(next)]) {
                seen[static_cast<std::size_t>(next)] = 1;
                todo.push_back(next);
            }
        }
    }
    return false;
}

}  // namespace ws::model::detail
