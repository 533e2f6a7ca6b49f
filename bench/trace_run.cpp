// ws_trace_lessonNN: one lesson's pool on one standard workload, every worker's events recorded
// (<ws/trace.hpp>), written as a Chrome trace with the pool's stats() beside them. Built in the
// `trace` preset only, once per lesson (WS_TRACE_POOL_HEADER and WS_TRACE_LESSON say which;
// WS_TRACE_JOIN_HEADER, WS_TRACE_GRAPH_HEADER and WS_TRACE_CORO_HEADER are defined for the
// lessons that have join, task graphs and coroutines); `./workshop trace N` runs it, then
// summarises and draws the timeline.
//
//   ws_trace_lessonNN --workload tree|flat|imbalanced|fib|graph|coro --workers K --out trace.json
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include <ws/bench/workloads.hpp>
#include <ws/stats.hpp>
#include <ws/trace.hpp>

#include WS_TRACE_POOL_HEADER
#ifdef WS_TRACE_JOIN_HEADER
#include WS_TRACE_JOIN_HEADER
#endif
#ifdef WS_TRACE_GRAPH_HEADER
#include WS_TRACE_GRAPH_HEADER

#include "stage_graph.hpp"
#endif
#ifdef WS_TRACE_CORO_HEADER
#include WS_TRACE_CORO_HEADER

#include "coroutine_fib.hpp"
#endif

namespace {

using Pool = ws::WS_TRACE_LESSON::ThreadPool;

// Smaller than the benchmarks' sizes: a timeline is for looking at, and each event is kept.
constexpr std::uint64_t kFlatTasks = 100'000;
constexpr unsigned kTreeDepth = 15;  // 65,535 tasks
constexpr std::uint64_t kImbalancedTasks = 20'000;
constexpr std::uint64_t kImbalancedUnit = 2'667;  // ns of kernel work: 5 us a task on average
#ifdef WS_TRACE_JOIN_HEADER
constexpr std::uint64_t kFibN = 27;  // 317,810 joins
#endif
#ifdef WS_TRACE_CORO_HEADER
// Each when_all wakes a child as a task, so fib(n) is fib_joins(n) tasks: fib(24) makes 75,024,
// a quarter of fib(27)'s 317,810, which a timeline merges into bars a pixel wide all the same.
constexpr std::uint64_t kCoroFibN = 24;
#endif
#ifdef WS_TRACE_GRAPH_HEADER
// bench 8's deep graph made narrow and coarse: three nodes a stage on two workers, so one waits
// for the stage's last node, and each stage is wide enough on the picture to see.
constexpr std::size_t kGraphStages = 20;
constexpr std::size_t kGraphWidth = 3;
constexpr std::uint64_t kGraphNodeNs = 100'000;
#endif

struct Options {
    std::string workload = "tree";
    std::size_t workers = 2;
    std::string out = "trace.json";
};

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
        const std::string value = argv[++i];
        if (arg == "--workload") {
            o.workload = value;
        } else if (arg == "--workers") {
            o.workers = std::stoul(value);
        } else if (arg == "--out") {
            o.out = value;
        } else {
            throw std::invalid_argument("unknown option " + arg);
        }
    }
    if (o.workers == 0) throw std::invalid_argument("--workers must be at least 1");
    return o;
}

#ifdef WS_TRACE_JOIN_HEADER
struct Join {
    Pool& pool;
    template <typename A, typename B>
    void operator()(A&& a, B&& b) {
        ws::WS_TRACE_LESSON::join(pool, std::forward<A>(a), std::forward<B>(b));
    }
};
#endif

void run(Pool& pool, const std::string& workload) {
    if (workload == "tree") {
        ws::bench::spawn_tree(pool, kTreeDepth);
    } else if (workload == "flat") {
        ws::bench::flat_spawn(pool, kFlatTasks);
    } else if (workload == "imbalanced") {
        ws::bench::imbalanced_from_one(
            pool, kImbalancedTasks,
            ws::bench::iterations_for(std::chrono::nanoseconds{kImbalancedUnit}));
    } else if (workload == "fib") {
#ifdef WS_TRACE_JOIN_HEADER
        Join join{pool};
        (void)ws::bench::fib(join, kFibN);
#else
        throw std::invalid_argument("the fib workload needs join (fork_join.hpp)");
#endif
    } else if (workload == "graph") {
#ifdef WS_TRACE_GRAPH_HEADER
        ws::WS_TRACE_LESSON::TaskGraph graph;
        const std::uint64_t iterations =
            ws::bench::iterations_for(std::chrono::nanoseconds{kGraphNodeNs});
        ws::bench::emplace_stages(graph, kGraphStages, kGraphWidth,
                                  [iterations] { (void)ws::bench::spin_kernel(iterations); });
        ws::WS_TRACE_LESSON::run(pool, graph);
#else
        throw std::invalid_argument("the graph workload needs task graphs (task_graph.hpp)");
#endif
    } else if (workload == "coro") {
#ifdef WS_TRACE_CORO_HEADER
        (void)ws::WS_TRACE_LESSON::sync_wait(pool, ws::bench::fib_by_when_all(pool, kCoroFibN));
#else
        throw std::invalid_argument("the coro workload needs coroutines (async.hpp)");
#endif
    } else {
        throw std::invalid_argument("unknown workload " + workload +
                                    " (tree, flat, imbalanced, fib, graph, coro)");
    }
}

std::string stats_json(const ws::PoolStats& s) {
    std::ostringstream out;
    out << R"("stats":{"executed_per_worker":[)";
    for (std::size_t i = 0; i < s.executed_per_worker.size(); ++i)
        out << (i == 0 ? "" : ",") << s.executed_per_worker[i];
    out << R"(],"steals":)" << s.steals << R"(,"steal_attempts":)" << s.steal_attempts
        << R"(,"stolen_tasks":)" << s.stolen_tasks << R"(,"injector_takes":)" << s.injector_takes
        << R"(,"parks":)" << s.parks << R"(,"wakeups":)" << s.wakeups << "}";
    return out.str();
}

}  // namespace

int main(int argc, char** argv) try {
    const Options o = parse(argc, argv);
    ws::trace::Recorder recorder(o.workers);
    ws::trace::install(&recorder);
    ws::PoolStats stats;
    std::int64_t window[2] = {0, 0};
    {
        Pool pool(o.workers);
        run(pool, o.workload);
        pool.wait_idle();
        // The workers may go on looking for work (and counting steal attempts) while stats()
        // reads: the window says which events it can have seen.
        window[0] = recorder.now_ns();
        stats = pool.stats();
        window[1] = recorder.now_ns();
    }  // the workers have ended: their lanes are ours to read
    ws::trace::install(nullptr);
    std::ofstream file(o.out);
    std::ostringstream other;
    other << R"("lesson":")" << WS_TRACE_LESSON_NAME << R"(","workload":")" << o.workload << R"(",)"
          << stats_json(stats) << R"(,"stats_window_us":[)"
          << static_cast<double>(window[0]) / 1000.0 << ","
          << static_cast<double>(window[1]) / 1000.0 << "]";
    ws::trace::write_chrome_trace(file, recorder, other.str());
    if (!file) throw std::runtime_error("cannot write " + o.out);
    return 0;
} catch (const std::exception& e) {
    std::cerr << "ws_trace: " << e.what() << "\n";
    return 2;
}
