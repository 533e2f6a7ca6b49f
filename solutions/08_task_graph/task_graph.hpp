// Lesson 08: task graphs on the work-stealing pool.
//
//   TaskGraph graph;
//   Node a = graph.emplace([] { ... });      // a task; or [](Subflow& sf) { ... } (a subflow)
//   Node b = graph.emplace([] { ... });
//   a.precede(b);                            // b starts only after a has finished
//   run(pool, graph);                        // returns when every node has run once
//
// The idea: every node holds an atomic count of its unfinished predecessors. A node whose count
// is zero is ready and goes onto the pool. A finishing node decrements each successor's count;
// the one that brings a count to zero pushes that successor onto its *own* deque — it is hot in
// this worker's cache, and an idle worker steals it if this one is busy. Nobody scans the graph
// for ready work, and no lock is taken: the graph runs as fast as its dependencies allow.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <ws/atomic.hpp>

#include "fork_join.hpp"
#include "thread_pool.hpp"

namespace ws::lesson08 {

class TaskGraph;
class Subflow;
void run(ThreadPool& pool, TaskGraph& graph);

namespace detail {

// ANCHOR: node_state
// One node of a graph. It is a Job, so it goes onto the pool's deques as it is: a run pushes
// the graph's own nodes and allocates nothing per task.
struct NodeState : Job {
    NodeState(TaskGraph& owner, std::size_t position);

    TaskGraph* graph;
    std::size_t index;  // position in the graph, for the cycle check
    std::string name;
    std::function<void()> work;                  // a plain task, or
    std::function<void(Subflow&)> subflow_work;  // a task that builds a subflow
    std::unique_ptr<Subflow> subflow;            // (only for the second kind)
    std::vector<NodeState*> successors;          // the nodes that wait for this one
    std::size_t num_predecessors = 0;            // the edges into this node
    // Predecessors that have not finished in this run: num_predecessors when the run starts,
    // zero when the node is ready. (ws::atomic is std::atomic; the explorer's tests swap in
    // an instrumented one: tests/08_task_graph/model.)
    ws::atomic<std::size_t> unfinished{0};
};
// ANCHOR_END: node_state

}  // namespace detail

// ANCHOR: node
// A handle to a node of a TaskGraph (cheap to copy; valid as long as the graph and the node).
class Node {
  public:
    Node() = default;

    // This node before `other`: other starts only after this one has finished. Both must belong
    // to the same graph (std::invalid_argument otherwise); not while the graph runs
    // (std::logic_error).
    Node& precede(Node other);
    // `other` before this node.
    Node& succeed(Node other);

    // Names the node (error messages and the book's pictures); by default "node N", N its
    // position in the graph.
    Node& name(std::string new_name);
    const std::string& name() const;

    std::size_t num_predecessors() const;
    std::size_t num_successors() const;
    bool empty() const noexcept { return state_ == nullptr; }

  private:
    friend class TaskGraph;
    explicit Node(detail::NodeState* state) : state_(state) {}
    detail::NodeState& state() const;
    detail::NodeState* state_ = nullptr;
};
// ANCHOR_END: node

// ANCHOR: graph
class TaskGraph {
  public:
    TaskGraph() = default;
    TaskGraph(const TaskGraph&) = delete;
    TaskGraph& operator=(const TaskGraph&) = delete;
    virtual ~TaskGraph();  // must not run

    // A new node that runs f: f() for a task, f(Subflow&) for a task that builds a subgraph,
    // which is run (and joined) before the node counts as finished. Not while the graph runs.
    template <typename F>
    Node emplace(F f);

    std::size_t size() const noexcept { return nodes_.size(); }
    bool empty() const noexcept { return nodes_.empty(); }
    // Removes every node. Not while the graph runs.
    void clear();

  private:
    friend class Node;
    friend void run(ThreadPool& pool, TaskGraph& graph);
    friend struct ExplorerAccess;  // the explorer's tests call release_successors
    using NodeState = detail::NodeState;

    void refuse_while_running(const char* what) const;
    void run_on_worker(ThreadPool& pool);
    static void execute(Job* job) noexcept;
    void invoke(NodeState& node, ThreadPool& pool);

    // The exercises (release_successors pushes onto the ThreadPool; it is a template only so
    // that the explorer's tests, tests/08_task_graph/model, can pass a stand-in that records):
    void link(NodeState& from, NodeState& to);                              // 1
    void start(ThreadPool& pool);                                           // 1
    template <typename Pusher>                                              // 2
    void release_successors(NodeState& node, Pusher& pool);                 // 2
    void reset();                                                           // 3
    void check_linkable(const NodeState& from, const NodeState& to) const;  // 4
    void check_acyclic();                                                   // 4
    void run_node(NodeState& node, ThreadPool& pool);                       // 4: must not throw
    void run_subflow(NodeState& node, ThreadPool& pool);                    // 5

    std::vector<std::unique_ptr<NodeState>> nodes_;
    std::atomic<bool> running_{false};
    bool acyclic_ = true;         // known acyclic since the last new edge
    std::uint64_t runs_ = 0;      // runs started (each one past the cycle check)
    ThreadPool* pool_ = nullptr;  // the pool of the current run
    // Set by the first node that throws: the nodes that have not started are skipped. Every
    // node reads it, so it is not on pending_'s cache line, which every node writes.
    std::atomic<bool> cancelled_{false};
    // Nodes of this run that have not finished: run() returns when it reaches zero.
    alignas(64) std::atomic<std::size_t> pending_{0};
    std::mutex error_mutex_;
    std::exception_ptr first_error_;  // guarded by error_mutex_
};

// A node's subgraph: built by the node's task while it runs, run and joined before the node
// counts as finished, rebuilt on every run of the parent graph.
class Subflow : public TaskGraph {};
// ANCHOR_END: graph

// ---- given code ----

inline detail::NodeState::NodeState(TaskGraph& owner, std::size_t position)
    : Job{nullptr}, graph(&owner), index(position), name("node " + std::to_string(position)) {}

inline detail::NodeState& Node::state() const {
    if (state_ == nullptr) throw std::invalid_argument("TaskGraph: an empty Node handle");
    return *state_;
}

inline Node& Node::precede(Node other) {
    detail::NodeState& from = state();
    detail::NodeState& to = other.state();
    from.graph->check_linkable(from, to);
    from.graph->refuse_while_running("link nodes");
    from.graph->link(from, to);
    return *this;
}

inline Node& Node::succeed(Node other) {
    other.precede(*this);
    return *this;
}

inline Node& Node::name(std::string new_name) {
    state().name = std::move(new_name);
    return *this;
}

inline const std::string& Node::name() const {
    return state().name;
}
inline std::size_t Node::num_predecessors() const {
    return state().num_predecessors;
}
inline std::size_t Node::num_successors() const {
    return state().successors.size();
}

inline TaskGraph::~TaskGraph() = default;

template <typename F>
Node TaskGraph::emplace(F f) {
    refuse_while_running("add a node");
    auto node = std::make_unique<NodeState>(*this, nodes_.size());
    node->run = &TaskGraph::execute;
    if constexpr (std::is_invocable_v<F&, Subflow&>) {
        node->subflow_work = std::move(f);
        node->subflow = std::make_unique<Subflow>();
    } else {
        static_assert(std::is_invocable_v<F&>, "a node's task is f() or f(Subflow&)");
        node->work = std::move(f);
    }
    nodes_.push_back(std::move(node));  // a node without edges closes no cycle: acyclic_ stays
    return Node(nodes_.back().get());
}

inline void TaskGraph::clear() {
    refuse_while_running("clear the graph");
    nodes_.clear();
    acyclic_ = true;
}

inline void TaskGraph::refuse_while_running(const char* what) const {
    // relaxed: a run is started and finished by the thread that may call this (or one that
    // synchronised with it); this only catches a mistake, it orders nothing
    if (running_.load(std::memory_order_relaxed))
        throw std::logic_error(std::string("TaskGraph: cannot ") + what + " while the graph runs");
}

// ANCHOR: run
// Runs every node of the graph once, each after all of its predecessors, and returns when all
// have finished. From outside the pool the caller sleeps; on a worker (inside a task) it helps.
inline void run(ThreadPool& pool, TaskGraph& graph) {
    if (!pool.on_worker_thread()) {
        detail::run_from_outside(pool, [&] { run(pool, graph); });
        return;
    }
    graph.run_on_worker(pool);
}

inline void TaskGraph::run_on_worker(ThreadPool& pool) {
    // acquire: pairs with the release store at the end of the last run (its nodes are done)
    if (running_.exchange(true, std::memory_order_acquire))
        throw std::logic_error("TaskGraph: run() while the same graph is already running");
    struct Finished {
        std::atomic<bool>& running;
        ~Finished() { running.store(false, std::memory_order_release); }
    } finished{running_};

    check_acyclic();  // before anything runs
    if (runs_ > 0) reset();
    ++runs_;
    if (nodes_.empty()) return;
    pool_ = &pool;  // published to the nodes by the pool's queues, with the counters
    start(pool);
    // acquire: pairs with every node's release decrement of pending_ — all they did is ours
    detail::help_until(pool, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    std::exception_ptr error;
    {
        std::lock_guard lock(error_mutex_);
        error = std::exchange(first_error_, nullptr);
    }
    if (error) std::rethrow_exception(error);
}
// ANCHOR_END: run

// ANCHOR: execute
// A node, as the pool runs it: its task (unless the run was cancelled), then its successors,
// then it counts as finished.
inline void TaskGraph::execute(Job* job) noexcept {
    auto& node = static_cast<NodeState&>(*job);
    TaskGraph& graph = *node.graph;
    ThreadPool& pool = *graph.pool_;
    graph.run_node(node, pool);
    if (!node.successors.empty()) graph.release_successors(node, pool);
    // release: pairs with run()'s acquire load; this node's effects go with it. The last
    // touch of the graph: once pending_ reads zero, run() may return and the graph die.
    graph.pending_.fetch_sub(1, std::memory_order_release);
}

inline void TaskGraph::invoke(NodeState& node, ThreadPool& pool) {
    if (node.subflow) {
        run_subflow(node, pool);
    } else {
        node.work();
    }
}
// ANCHOR_END: execute

// ---- the exercises ----

// ANCHOR: link
inline void TaskGraph::link(NodeState& from, NodeState& to) {
    from.successors.push_back(&to);
    ++to.num_predecessors;
    // relaxed: the graph is not running; the run that reads it is started by the pool's queue
    to.unfinished.fetch_add(1, std::memory_order_relaxed);
    acyclic_ = false;
}
// ANCHOR_END: link

// ANCHOR: start
inline void TaskGraph::start(ThreadPool& pool) {
    // relaxed: nothing runs yet; the pushes below publish it to every node
    pending_.store(nodes_.size(), std::memory_order_relaxed);
    for (const auto& node : nodes_) {
        if (node->num_predecessors != 0) continue;
        try {
            pool.push(node.get());
        } catch (...) {
            // Out of memory (a deque's growth): the node is ready, so run it here. Throwing
            // instead would unwind run() while the nodes pushed before run, and may outlive it.
            execute(node.get());
        }
    }
}
// ANCHOR_END: start

// ANCHOR: release_successors
template <typename Pusher>
void TaskGraph::release_successors(NodeState& node, Pusher& pool) {
    for (NodeState* next : node.successors) {
        // acq_rel. Release: this node's effects go with the decrement. Acquire: the decrement
        // that reaches zero reads the end of a chain of decrements (a release sequence), so it
        // takes the effects of every predecessor that decremented before — and the push
        // (release, pairs with the pop or steal that takes it) hands them all to whoever runs
        // `next`. With relaxed, `next` could read a predecessor's results before they are
        // written.
        if (next->unfinished.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            try {
                pool.push(next);  // from a worker: onto its own deque, where it is hot
            } catch (...) {
                execute(next);  // out of memory (we are inside noexcept execute): `next` is ready
            }
        }
    }
}
// ANCHOR_END: release_successors

// ANCHOR: reset
inline void TaskGraph::reset() {
    // The last run consumed every counter and perhaps cancelled itself. Nothing runs now
    // (run() saw pending_ zero with acquire), so plain stores do; start's pushes publish them.
    for (const auto& node : nodes_) {
        node->unfinished.store(node->num_predecessors, std::memory_order_relaxed);
    }
    cancelled_.store(false, std::memory_order_relaxed);
}
// ANCHOR_END: reset

// ANCHOR: check_linkable
inline void TaskGraph::check_linkable(const NodeState& from, const NodeState& to) const {
    if (from.graph != to.graph) {
        throw std::invalid_argument("TaskGraph: cannot link '" + from.name + "' to '" + to.name +
                                    "': they belong to different graphs (a subflow is a graph "
                                    "of its own)");
    }
}
// ANCHOR_END: check_linkable

// ANCHOR: check_acyclic
// Depth-first search with a stack of its own (recursion would need a thread stack frame per
// node of the longest path): a node still on the search path that is reached again closes a
// cycle.
inline void TaskGraph::check_acyclic() {
    if (acyclic_) return;
    enum : std::uint8_t { kNew, kOnPath, kDone };
    std::vector<std::uint8_t> mark(nodes_.size(), kNew);
    struct Frame {
        NodeState* node;
        std::size_t next_successor;
    };
    std::vector<Frame> path;
    for (const auto& root : nodes_) {
        if (mark[root->index] != kNew) continue;
        path.push_back({root.get(), 0});
        mark[root->index] = kOnPath;
        while (!path.empty()) {
            Frame& top = path.back();
            if (top.next_successor == top.node->successors.size()) {
                mark[top.node->index] = kDone;
                path.pop_back();
                continue;
            }
            NodeState* next = top.node->successors[top.next_successor++];
            if (mark[next->index] == kOnPath) {
                auto on_cycle = std::find_if(path.begin(), path.end(),
                                             [next](const Frame& f) { return f.node == next; });
                std::string cycle;
                for (; on_cycle != path.end(); ++on_cycle)
                    cycle += on_cycle->node->name + " -> ";
                throw std::invalid_argument("TaskGraph: the graph has a cycle: " + cycle +
                                            next->name);
            }
            if (mark[next->index] == kNew) {
                mark[next->index] = kOnPath;
                path.push_back({next, 0});
            }
        }
    }
    acyclic_ = true;
}
// ANCHOR_END: check_acyclic

// ANCHOR: run_node
inline void TaskGraph::run_node(NodeState& node, ThreadPool& pool) {
    // relaxed: a node that starts after a failed node finished sees the flag, because it was
    // released by a chain of acq_rel decrements after the failure (or the failed node's own
    // push); a node that starts concurrently with the failure may still run, as it would have
    // if it had started a moment earlier. So cancellation is best-effort: it is certain only
    // for the nodes ordered after the failed one (its successors, transitively); a node not
    // ordered after it runs or is skipped depending on timing.
    if (cancelled_.load(std::memory_order_relaxed)) return;
    try {
        invoke(node, pool);
    } catch (...) {
        {
            std::lock_guard lock(error_mutex_);
            if (!first_error_) first_error_ = std::current_exception();
        }
        cancelled_.store(true, std::memory_order_relaxed);
    }
}
// ANCHOR_END: run_node

// ANCHOR: run_subflow
inline void TaskGraph::run_subflow(NodeState& node, ThreadPool& pool) {
    Subflow& subflow = *node.subflow;
    subflow.clear();  // the last run's subgraph
    node.subflow_work(subflow);
    // On this worker: the subgraph's nodes go onto its deque, and it helps until they are
    // done, so the node counts as finished only after its whole subflow. Throws what the
    // subflow threw, which makes it this node's exception.
    run(pool, subflow);
}
// ANCHOR_END: run_subflow

}  // namespace ws::lesson08
