#!/bin/sh
# Lesson 04's owner path against the floor deque (bench_lesson04's "*/lesson04_vs_floor"),
# under g++ and clang++ at -O2 -g (the default preset's flags) and -O3 -DNDEBUG (the bench
# preset's Release flags), each built in $WS_BUILD_ROOT (or build/)/bench-owner-COMPILER-OLEVEL.
#
#   bench/owner_path.sh ratios [REPETITIONS]   all four builds, the medians (default 5 runs)
#   bench/owner_path.sh asm [COMPILER [LEVEL]]  the generated code of the alternating kernel
#                                               for the lesson's deque (default: g++ 2), and
#                                               push and pop where they were not inlined
#
# Read the "ratio" counter: the lesson's time per push+pop pair over the floor's, the median
# over neighbouring blocks of one run. Print the load average with it: on a busy machine, repeat.
set -eu
cd "$(dirname "$0")/.."
root=${WS_BUILD_ROOT:-build}

# build COMPILER LEVEL: configures and builds bench_lesson04; prints the binary's path.
build() {
    if [ "$2" = 2 ]; then flags="-O2 -g"; else flags="-O3 -DNDEBUG"; fi
    dir="$root/bench-owner-$1-O$2"
    cmake --preset bench -B "$dir" -DCMAKE_CXX_COMPILER="$1" \
        -DCMAKE_CXX_FLAGS_RELEASE="$flags" >/dev/null
    cmake --build "$dir" -j2 --target bench_lesson04 >/dev/null
    echo "$dir/bench/bench_lesson04"
}

case "${1:-ratios}" in
ratios)
    uptime
    for compiler in g++ clang++; do
        for level in 2 3; do
            binary=$(build "$compiler" "$level")
            echo "== $compiler O$level"
            "$binary" --benchmark_filter='lesson04_vs_floor' \
                --benchmark_repetitions="${2:-5}" --benchmark_report_aggregates_only=true 2>&1 |
                grep '_median' | sed -e 's/ \{2,\}/ /g'
        done
    done
    uptime
    ;;
asm)
    binary=$(build "${2:-g++}" "${3:-2}")
    objdump -d --no-show-raw-insn -C "$binary" |
        sed -e 's/ws::bench::(anonymous namespace):://g' -e 's/ws::lesson04:://g' |
        awk '/^[0-9a-f]+ <.*push_pop_pairs<ChaseLevDeque/ || /^[0-9a-f]+ <ChaseLevDeque<Payload\*>::(push|pop)/ { on = 1 }
             on { print } /^$/ { on = 0 }'
    ;;
*)
    echo "usage: $0 ratios [REPETITIONS] | asm [COMPILER [LEVEL]]" >&2
    exit 2
    ;;
esac
