// Lesson 08: task graphs. The two graphs of the Taskflow-style executor this lesson grew from —
// a wide graph (1000 independent tasks) and a deep one (100 stages of 10 tasks, each task after
// every task of the stage before) — with a fixed amount of work per task: 850 us (the "_850us"
// rows: the seed's 1000 tasks in 850 ms on one worker, where the work dominates and the question
// is how well the graph scales) and 1 us (the "_1us" rows, where the scheduler's overhead shows).
//
// Contenders, all on one work kernel (ws::bench::spin_kernel, noinline):
//   lesson08      the lesson's TaskGraph, built once, run every iteration, bench_workers() workers
//   lesson08_1w   the same on one worker: the speedup's denominator
//   lesson07      the same work by lesson 07's fork-join: parallel_for over a stage's tasks, the
//                 stages one after the other (a barrier between stages), all in one task
//   onetbb        oneTBB's flow_graph: a continue_node per task, the same edges
//   sequential    every task in order on the calling thread
//   static_split  (850 us rows only) no scheduler: bench_workers() plain threads, the caller one
//                 of them, each runs an equal share of every stage fixed in advance, a barrier
//                 after each stage. On equal tasks nothing can do better on this machine: the
//                 ceiling of the speed-up, so a missed goal can be told from a slow machine.
#include <benchmark/benchmark.h>

#include <barrier>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <ws/bench/kernel.hpp>

#include "07_fork_join/fork_join.hpp"
#include "07_fork_join/thread_pool.hpp"
#include "08_task_graph/task_graph.hpp"
#include "08_task_graph/thread_pool.hpp"
#include "contenders.hpp"
#include "stage_graph.hpp"

#if defined(WS_HAVE_TBB)
#include <oneapi/tbb/flow_graph.h>
#endif

namespace ws::bench {

namespace {

struct GraphShape {
    std::size_t stages;
    std::size_t width;  // tasks per stage
};
constexpr GraphShape kWideGraph{1, 1000};
constexpr GraphShape kDeepGraph{100, 10};

// One task's work: `iterations` steps of the shared kernel.
inline void graph_task(std::uint64_t iterations) {
    benchmark::DoNotOptimize(spin_kernel(iterations));
}

class Lesson08Graph {
  public:
    Lesson08Graph(std::size_t workers, GraphShape shape, std::uint64_t iterations)
        : pool_(workers) {
        emplace_stages(graph_, shape.stages, shape.width, [iterations] { graph_task(iterations); });
    }
    void run() { lesson08::run(pool_, graph_); }
    const lesson08::ThreadPool& pool() const { return pool_; }

  private:
    lesson08::ThreadPool pool_;
    lesson08::TaskGraph graph_;
};

class Lesson07Stages {
  public:
    Lesson07Stages(GraphShape shape, std::uint64_t iterations)
        : pool_(bench_workers()), shape_(shape), iterations_(iterations) {}
    void run() {
        // One hop into the pool for the whole graph (as lesson08::run makes), then a
        // parallel_for per stage: each returns when its stage is done — the barrier.
        lesson07::join(
            pool_,
            [this] {
                for (std::size_t s = 0; s < shape_.stages; ++s) {
                    lesson07::parallel_for(pool_, 0, shape_.width, 1,
                                           [this](std::size_t begin, std::size_t end) {
                                               for (std::size_t i = begin; i < end; ++i)
                                                   graph_task(iterations_);
                                           });
                }
            },
            [] {});
    }

  private:
    lesson07::ThreadPool pool_;
    GraphShape shape_;
    std::uint64_t iterations_;
};

class SequentialGraph {
  public:
    SequentialGraph(GraphShape shape, std::uint64_t iterations)
        : shape_(shape), iterations_(iterations) {}
    void run() {
        for (std::size_t i = 0; i < shape_.stages * shape_.width; ++i)
            graph_task(iterations_);
    }

  private:
    GraphShape shape_;
    std::uint64_t iterations_;
};

class StaticSplit {
  public:
    StaticSplit(GraphShape shape, std::uint64_t iterations)
        : shape_(shape), iterations_(iterations), workers_(bench_workers()), barrier_(workers_) {
        for (std::size_t w = 1; w < workers_; ++w) {
            threads_.emplace_back([this, w] {
                for (;;) {
                    barrier_.arrive_and_wait();  // the start of a run (or of the end)
                    if (stop_) return;
                    run_share(w);
                }
            });
        }
    }
    ~StaticSplit() {
        stop_ = true;  // a plain bool: the barrier orders it before the threads read it
        barrier_.arrive_and_wait();
        for (std::thread& t : threads_)
            t.join();
    }
    void run() {
        barrier_.arrive_and_wait();
        run_share(0);  // returns after the last stage's barrier: every share is done
    }

  private:
    void run_share(std::size_t w) {
        const std::size_t begin = shape_.width * w / workers_;
        const std::size_t end = shape_.width * (w + 1) / workers_;
        for (std::size_t s = 0; s < shape_.stages; ++s) {
            for (std::size_t t = begin; t < end; ++t)
                graph_task(iterations_);
            barrier_.arrive_and_wait();
        }
    }

    GraphShape shape_;
    std::uint64_t iterations_;
    std::size_t workers_;
    std::barrier<> barrier_;
    bool stop_ = false;
    std::vector<std::thread> threads_;
};

#if defined(WS_HAVE_TBB)
class TbbFlowGraph {
  public:
    TbbFlowGraph(GraphShape shape, std::uint64_t iterations) : start_(graph_) {
        using Node = oneapi::tbb::flow::continue_node<oneapi::tbb::flow::continue_msg>;
        std::vector<Node*> previous, current;
        for (std::size_t s = 0; s < shape.stages; ++s) {
            current.clear();
            for (std::size_t t = 0; t < shape.width; ++t) {
                nodes_.push_back(std::make_unique<Node>(
                    graph_, [iterations](const oneapi::tbb::flow::continue_msg&) {
                        graph_task(iterations);
                    }));
                Node* node = nodes_.back().get();
                if (s == 0) {
                    oneapi::tbb::flow::make_edge(start_, *node);
                } else {
                    for (Node* before : previous)
                        oneapi::tbb::flow::make_edge(*before, *node);
                }
                current.push_back(node);
            }
            previous.swap(current);
        }
    }
    void run() {
        start_.try_put(oneapi::tbb::flow::continue_msg());
        graph_.wait_for_all();
    }

  private:
    oneapi::tbb::flow::graph graph_;
    oneapi::tbb::flow::broadcast_node<oneapi::tbb::flow::continue_msg> start_;
    std::vector<std::unique_ptr<oneapi::tbb::flow::continue_node<oneapi::tbb::flow::continue_msg>>>
        nodes_;
};
#endif

// Registers "<workload>/<contender>" for each graph and task size; make(shape, iterations)
// builds the contender (outside the timed loop), whose run() runs the graph once.
enum class TaskSizes { all, coarse_only };

template <typename Make>
void register_graphs(const std::string& contender, Make make, TaskSizes sizes = TaskSizes::all) {
    struct Workload {
        const char* name;
        GraphShape shape;
        std::chrono::nanoseconds per_task;
    };
    using std::chrono::microseconds;
    for (const Workload& w : {Workload{"wide_graph_850us", kWideGraph, microseconds(850)},
                              Workload{"deep_graph_850us", kDeepGraph, microseconds(850)},
                              Workload{"wide_graph_1us", kWideGraph, microseconds(1)},
                              Workload{"deep_graph_1us", kDeepGraph, microseconds(1)}}) {
        if (sizes == TaskSizes::coarse_only && w.per_task < microseconds(100)) continue;
        benchmark::RegisterBenchmark(
            (std::string(w.name) + "/" + contender).c_str(),
            [make, w](benchmark::State& state) {
                auto graph = make(w.shape, iterations_for(w.per_task));
                if constexpr (requires { graph->pool(); }) {
                    // lesson 08's rows: the steals per run, to see how the graph spreads
                    const StealCounters counters(graph->pool());
                    for (auto _ : state)
                        graph->run();
                    counters.report(state, graph->pool());
                } else {
                    for (auto _ : state)
                        graph->run();
                }
                state.SetItemsProcessed(state.iterations() * w.shape.stages * w.shape.width);
            })
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
    }
}

}  // namespace

void register_benchmarks() {
    register_graphs("lesson08", [](GraphShape shape, std::uint64_t iterations) {
        return std::make_unique<Lesson08Graph>(bench_workers(), shape, iterations);
    });
    register_graphs("lesson08_1w", [](GraphShape shape, std::uint64_t iterations) {
        return std::make_unique<Lesson08Graph>(1, shape, iterations);
    });
    register_graphs("lesson07", [](GraphShape shape, std::uint64_t iterations) {
        return std::make_unique<Lesson07Stages>(shape, iterations);
    });
    register_graphs("sequential", [](GraphShape shape, std::uint64_t iterations) {
        return std::make_unique<SequentialGraph>(shape, iterations);
    });
    register_graphs(
        "static_split",
        [](GraphShape shape, std::uint64_t iterations) {
            return std::make_unique<StaticSplit>(shape, iterations);
        },
        TaskSizes::coarse_only);
#if defined(WS_HAVE_TBB)
    register_graphs("onetbb", [](GraphShape shape, std::uint64_t iterations) {
        return std::make_unique<TbbFlowGraph>(shape, iterations);
    });
#endif
}

}  // namespace ws::bench
