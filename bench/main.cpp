// The one main() of every benchmark binary: each binary defines register_benchmarks() with its
// own contenders; the peers (sequential, oneTBB, OpenMP) are added to every one of them.
#include <benchmark/benchmark.h>

#include "peers.hpp"

namespace ws::bench {
void register_benchmarks();
}  // namespace ws::bench

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    ws::bench::register_benchmarks();
    ws::bench::register_peers();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
