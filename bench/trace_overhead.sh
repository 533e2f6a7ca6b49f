#!/bin/sh
# What tracing costs, and that it costs nothing when it is off.
#
#   bench/trace_overhead.sh build              builds ws_trace_overhead (trace_overhead.cpp) in
#                                              the bench preset (hooks compiled out) and in the
#                                              trace preset (hooks recording), each in
#                                              $WS_BUILD_ROOT (or build/)/bench and .../trace
#   bench/trace_overhead.sh ratios [RUNS [WORKLOAD]]
#                                              runs the two builds alternately RUNS times
#                                              (default 5) on WORKLOAD (spawn_tree, the default,
#                                              or imbalanced) and prints per lesson the median
#                                              time of each and the ratio traced/plain (median
#                                              and range over the RUNS pairs)
#   bench/trace_overhead.sh parts              where one event's time goes, in the trace build:
#                                              a read of the events' clock, one of
#                                              steady_clock, and a whole hook (one thread)
#   bench/trace_overhead.sh nothing            compiles every reference pool (solutions/NN) as it
#                                              is and with its hooks deleted, at the bench
#                                              preset's flags, and compares the object code:
#                                              it must be the same instruction for instruction
#
# Time is shared: build under a shared lock and measure on a quiet machine (print the load
# average with the figures; on a busy machine, repeat).
set -eu
cd "$(dirname "$0")/.."
root=${WS_BUILD_ROOT:-build}
binary=bench/ws_trace_overhead

build() {
    for preset in bench trace; do
        cmake --preset "$preset" -B "$root/$preset" >/dev/null
        cmake --build "$root/$preset" -j2 --target ws_trace_overhead >/dev/null
    done
}

# run PRESET WORKLOAD: one run of that build's benchmarks of the workload; prints
# "workload/lesson milliseconds events" lines.
run() {
    "$root/$1/$binary" --benchmark_filter="^$2_recorded/" --benchmark_format=json 2>/dev/null |
        python3 -c '
import json, sys
for b in json.load(sys.stdin)["benchmarks"]:
    if b.get("error_occurred"):
        sys.exit(b["name"] + ": " + str(b.get("error_message")))
    workload, lesson = b["name"].split("/")[:2]
    print(workload.removesuffix("_recorded") + "/" + lesson, b["real_time"], int(b.get("events", 0)))'
}

ratios() {
    runs=${1:-5}
    workload=${2:-spawn_tree}
    case "$workload" in
    spawn_tree | imbalanced) ;;
    *)
        echo "$0: no workload $workload (spawn_tree, imbalanced)" >&2
        exit 2
        ;;
    esac
    build
    out=$(mktemp)
    trap 'rm -f "$out" "$out.one"' EXIT
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    i=0
    while [ "$i" -lt "$runs" ]; do
        run bench "$workload" >"$out.one"
        sed "s/^/$i plain /" "$out.one" >>"$out"
        run trace "$workload" >"$out.one"
        sed "s/^/$i traced /" "$out.one" >>"$out"
        i=$((i + 1))
    done
    echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
    python3 - "$out" "$runs" <<'EOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
times, events = {}, {}
for run, kind, lesson, ms, n in rows:
    times.setdefault(lesson, {}).setdefault(kind, {})[run] = float(ms)
    events.setdefault((lesson, kind), set()).add(int(n))
print(f"a fresh pool and recorder per timed run; {sys.argv[2]} runs of each build, alternately")
print(f"{'workload/lesson':<22}{'plain ms':>10}{'traced ms':>11}{'ratio median':>14}  range        events/run")
for lesson, kinds in sorted(times.items()):
    plain, traced = kinds["plain"], kinds["traced"]
    r = sorted(traced[k] / plain[k] for k in plain)
    print(f"{lesson:<22}{statistics.median(plain.values()):>10.2f}"
          f"{statistics.median(traced.values()):>11.2f}{statistics.median(r):>14.3f}"
          f"  {r[0]:.3f}-{r[-1]:.3f}  {max(events[(lesson, 'traced')]):,}")
    if events[(lesson, "plain")] != {0}:
        sys.exit(f"{lesson}: the plain build recorded events: its hooks are not compiled out")
EOF
}

parts() {
    build
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    "$root/trace/$binary" --benchmark_filter=event_cost --benchmark_repetitions=5 \
        --benchmark_report_aggregates_only=true 2>/dev/null | grep -E '^Benchmark|_median'
}

# The pools' hooks with tracing off: the same object code as no hooks at all.
nothing() {
    cmake --preset bench -B "$root/bench" >/dev/null
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    failed=0
    for dir in solutions/[0-9][0-9]_*; do
        grep -lq 'WS_TRACE_' "$dir"/*.cpp "$dir"/*.hpp 2>/dev/null || continue
        lesson=$(basename "$dir")
        # Two copies of the lesson at paths of the same length: a as it is, b with every hook
        # statement deleted (its line kept empty, so line numbers stay the same).
        for copy in a b; do
            mkdir -p "$work/$copy/$lesson"
            cp "$dir"/*.cpp "$dir"/*.hpp "$work/$copy/$lesson/"
        done
        sed -i -E 's/WS_TRACE_(EVENT|WORKER|LOCAL|DO)\([^;]*\);//' "$work/b/$lesson"/*.?pp
        if grep -q 'WS_TRACE_' "$work/b/$lesson"/*.?pp; then
            echo "$lesson: a hook the script could not delete" >&2
            failed=1
            continue
        fi
        # fork_join.hpp's hooks are in templates: a join makes them into code.
        if [ -f "$dir/fork_join.hpp" ]; then
            namespace=$(grep -o -m1 'namespace ws::lesson[0-9]*' "$dir/fork_join.hpp")
            for copy in a b; do
                cat >"$work/$copy/$lesson/join_probe.cpp" <<EOF
#include "fork_join.hpp"
$namespace {
int join_probe(ThreadPool& pool, int n) {
    if (n < 2) return n;
    int x = 0;
    int y = 0;
    join(pool, [&] { x = join_probe(pool, n - 1); }, [&] { y = join_probe(pool, n - 2); });
    return x + y;
}
}
EOF
            done
        fi
        command=$(python3 -c '
import json, sys
for e in json.load(open(sys.argv[1])):
    if e["file"].endswith(sys.argv[2] + "/thread_pool.cpp"):
        print(e["command"]); break' "$root/bench/compile_commands.json" "$lesson")
        for source in "$work/a/$lesson"/*.cpp; do
            name=$(basename "$source" .cpp)
            for copy in a b; do
                # The build's command, on the copy: its folder for the lesson's, its object out.
                eval "set -- $command"
                compiler=$1
                shift
                args=""
                while [ $# -gt 0 ]; do
                    case "$1" in
                    -o) shift ;;
                    -c) shift ;;
                    -I*"/$lesson") args="$args -I$work/$copy/$lesson" ;;
                    *) args="$args $1" ;;
                    esac
                    shift
                done
                # shellcheck disable=SC2086
                "$compiler" $args -c "$work/$copy/$lesson/$name.cpp" -o "$work/$copy/$lesson/$name.o"
                objdump -d --no-show-raw-insn "$work/$copy/$lesson/$name.o" | tail -n +3 \
                    >"$work/$copy/$lesson/$name.s"
            done
            lines=$(wc -l <"$work/a/$lesson/$name.s")
            if cmp -s "$work/a/$lesson/$name.s" "$work/b/$lesson/$name.s"; then
                echo "same   $lesson/$name.cpp: $lines lines of object code with and without its hooks"
            else
                echo "DIFFER $lesson/$name.cpp:"
                diff "$work/a/$lesson/$name.s" "$work/b/$lesson/$name.s" | head -20
                failed=1
            fi
        done
    done
    return "$failed"
}

case "${1:-ratios}" in
build) build ;;
ratios) ratios "${2:-5}" "${3:-spawn_tree}" ;;
parts) parts ;;
nothing) nothing ;;
*)
    echo "usage: $0 build | ratios [RUNS [spawn_tree|imbalanced]] | parts | nothing" >&2
    exit 2
    ;;
esac
