// ws_trace_lessonNN: one lesson's pool on one standard workload, every worker's events recorded
// (<ws/trace.hpp>), written as a Chrome trace with the pool's stats() beside them. Built in the
// `trace` preset only, once per lesson (WS_TRACE_POOL_HEADER and WS_TRACE_LESSON say which);
// `./workshop trace N` runs it, then summarises and draws the timeline.
//
//   ws_trace_lessonNN --workload tree|flat|imbalanced|fib --workers K --out trace.json
#include <chrono>
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

namespace {

using Pool = ws::WS_TRACE_LESSON::ThreadPool;

// Smaller than the benchmarks' sizes: a timeline is for looking at, and each event is kept.
constexpr std::uint64_t kFlatTasks = 100'000;
constexpr unsigned kTreeDepth = 15;  // 65,535 tasks
constexpr std::uint64_t kImbalancedTasks = 20'000;
constexpr std::uint64_t kImbalancedUnit = 2'667;  // ns of kernel work: 5 us a task on average
#ifdef WS_TRACE_JOIN_HEADER
constexpr std::uint64_t kFibN = 27;
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
        throw std::invalid_argument("the fib workload needs join, which lesson 07 adds");
#endif
    } else {
        throw std::invalid_argument("unknown workload " + workload +
                                    " (tree, flat, imbalanced, fib)");
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
