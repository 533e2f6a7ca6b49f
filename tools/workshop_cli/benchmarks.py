"""`./workshop bench N` and `./workshop tour`: run a Google Benchmark binary, read its JSON, and
print each workload's contenders side by side as medians and ratios."""
from __future__ import annotations

import json
import os
import subprocess
from collections import defaultdict
from pathlib import Path

from . import build as b
from .lessons import ROOT, UsageError

# The order contenders appear in, when present.
ORDER = ["sequential", "lesson00", "lesson01", "lesson02", "lesson03", "lesson04", "lesson05",
         "lesson06", "lesson07", "lesson08", "lesson08_1w", "lesson09", "onetbb", "openmp",
         "static_split", "std::function", "ws::Task"]


# The order workloads appear in, when present; others follow in the order they ran.
WORKLOADS = ["flat_spawn", "spawn_tree", "imbalanced", "fib", "reduce", "idle_cpu", "wake"]

# The lessons whose idea aimed at each workload: one file for the book's charts and these tables.
TARGETS_FILE = ROOT / "book" / "tools" / "lib" / "tour-targets.json"


def targets() -> dict[str, list[str]]:
    """workload -> the contenders (lessonNN) whose idea aimed at it; empty if the file is absent."""
    try:
        data = json.loads(TARGETS_FILE.read_text())
    except (OSError, ValueError):
        return {}
    return {w: list(entry.get("lessons", [])) for w, entry in data.items()}


# What a row means, printed under the table when the row is present.
NOTES = {
    "imbalanced": "imbalanced: 20,000 tasks of 5 us on average (every 8th 8x longer), all "
                  "spawned by one task",
    "fib": "fib: fib(30) by join without cutoff, 1,346,268 joins",
    "reduce": "reduce: parallel_reduce of sqrt(i) over 10^7 indices",
    "idle_cpu": "idle_cpu: CPU time burnt per second of idleness, in the second right after "
                "some work (1 ms = 0.1 % of a core)",
    "wake": "wake: from spawning one task after 300 ms of idleness to the task starting",
}


def _short(benchmark_name: str) -> str:
    """flat_spawn/onetbb/real_time_median -> flat_spawn/onetbb"""
    return "/".join(benchmark_name.split("/")[:2])


def list_benchmarks(exe: Path, bench_filter: str | None) -> list[str]:
    cmd = [str(exe), "--benchmark_list_tests=true"]
    if bench_filter:
        cmd.append(f"--benchmark_filter={bench_filter}")
    out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    return [_short(line.strip()) for line in out.splitlines() if "/" in line]


def busy_warning() -> None:
    """Says so when other processes keep the machine busy: every contender then gets less than
    its cores, and unevenly, so times and ratios are noisy."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return
    cores = os.cpu_count() or 1
    if load > 0.5:
        b.progress(f"note: the load average is {load:.1f} on {cores} cores before the run: other "
                   "processes compete for the CPU, so the numbers will be noisy (parallel "
                   "contenders suffer most); for figures to quote, run on a quiet machine")


class BenchmarkFailed(b.BuildError):
    """The benchmark built, then exited non-zero; the message holds its last lines."""


def run_benchmark(binary: str, out_json: Path, *, repetitions: int, min_time: float,
                  bench_filter: str | None = None) -> dict:
    b.build("bench", [binary])
    exe = b.build_dir("bench") / "bench" / binary
    out_json.parent.mkdir(parents=True, exist_ok=True)
    cmd = [str(exe), f"--benchmark_out={out_json}", "--benchmark_out_format=json",
           f"--benchmark_repetitions={repetitions}", f"--benchmark_min_time={min_time}",
           "--benchmark_report_aggregates_only=true"]
    if bench_filter:
        cmd.append(f"--benchmark_filter={bench_filter}")
    busy_warning()
    names = list_benchmarks(exe, bench_filter)
    if not names:
        every = sorted({n.split("/")[0] for n in list_benchmarks(exe, None)})
        raise UsageError(f"no benchmark of {binary} matches --filter '{bench_filter}'; its "
                         f"workloads: {', '.join(every)}")
    b.progress(f"running {binary}: {len(names)} benchmarks, {repetitions} repetitions of each "
               "(the medians are compared) ...")
    if names:
        b.progress(f"  [1/{len(names)}] now: {names[0]}")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tail = []
    done = 0
    for line in proc.stdout:
        tail = (tail + [line])[-20:]
        if "_median" in line or (repetitions == 1 and "/" in line and " ms " in line):
            done += 1
            finished = _short(line.split()[0])
            following = f"; [{done + 1}/{len(names)}] now: {names[done]}" \
                if done < len(names) else ""
            b.progress(f"  done: {finished}{following}")
    if proc.wait() != 0:
        raise BenchmarkFailed(f"{binary} failed (exit code {proc.returncode}):\n" + "".join(tail))
    return json.loads(out_json.read_text())


def medians(report: dict) -> dict[str, dict[str, float]]:
    """workload -> contender -> median real time in ms."""
    table: dict[str, dict[str, float]] = defaultdict(dict)
    for bm in report.get("benchmarks", []):
        if bm.get("aggregate_name") not in (None, "median"):
            continue
        name = bm.get("run_name", bm["name"])
        if "/" not in name:
            continue
        workload, contender = name.split("/", 1)
        contender = contender.split("/")[0]
        unit = bm.get("time_unit", "ns")
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[unit]
        table[workload][contender] = bm["real_time"] * scale
    return dict(sorted(table.items(), key=lambda item: (
        WORKLOADS.index(item[0]) if item[0] in WORKLOADS else len(WORKLOADS))))


def row_reference(row: dict[str, float], reference: str | None) -> str | None:
    """The contender a workload's ratios are relative to: `reference` where it ran; otherwise
    (e.g. ws::Task against std::function) the row's first contender in table order."""
    if reference in row:
        return reference
    present = contenders_of({"": row})
    return present[0] if present else None


def fmt_ms(ms: float) -> str:
    for scale, unit in ((1.0, "ms"), (1e-3, "us"), (1e-6, "ns")):
        if ms >= scale or unit == "ns":
            return f"{ms / scale:.3g} {unit}"
    return f"{ms} ms"


def contenders_of(table: dict[str, dict[str, float]]) -> list[str]:
    return sorted({c for row in table.values() for c in row},
                  key=lambda c: (ORDER.index(c) if c in ORDER else 99, c))


def print_table(table: dict[str, dict[str, float]], reference: str | None) -> None:
    contenders = contenders_of(table)
    aimed = targets()
    marked = False
    cells: dict[str, list[str]] = {}
    for workload, row in table.items():
        ref = row_reference(row, reference)
        cells[workload] = []
        for c in contenders:
            if c not in row:
                cells[workload].append("-")
                continue
            cell = fmt_ms(row[c])
            if ref and row[ref] > 0:
                cell += f" ({row[c] / row[ref]:.2f}x)"
            if c in aimed.get(workload, []):
                cell = "*" + cell
                marked = True
            cells[workload].append(cell)
    # Each column as wide as its longest name or cell, plus two spaces (bench 9's
    # "lesson09_frame_pool" and "ping_pong_two_pools" ran into their neighbours at fixed widths).
    first = max([14] + [len(w) + 2 for w in table])
    widths = [max([18, len(c) + 2] + [len(row[i]) + 2 for row in cells.values()])
              for i, c in enumerate(contenders)]
    header = f"{'workload':<{first}}" + "".join(f"{c:>{w}}" for c, w in zip(contenders, widths))
    print("\nmedian wall time per run" +
          (f"; in brackets, the ratio to {reference} (or to the row's first contender where "
           f"{reference} did not run)" if reference else ""))
    print(header)
    print("-" * len(header))
    for workload, row_cells in cells.items():
        print(f"{workload:<{first}}" + "".join(f"{cell:>{w}}" for cell, w in zip(row_cells, widths)))
    notes = [NOTES[w] for w in table if w in NOTES]
    if marked:
        notes.insert(0, "*: the lesson whose idea aimed at this workload")
    if notes:
        print("\n" + "\n".join(notes))


def ideal_shares(table: dict[str, dict[str, float]], workers: int) -> dict[str, float]:
    """For the imbalanced workload: each contender's share of the ideal time, the sequential
    time divided by the number of workers (100 % = a perfect split, no overhead)."""
    row = table.get("imbalanced", {})
    sequential = row.get("sequential")
    if not sequential or workers < 1:
        return {}
    ideal = sequential / workers
    return {c: ideal / t for c, t in row.items() if c != "sequential" and t > 0}


def ceiling_shares(table: dict[str, dict[str, float]]) -> dict[str, float]:
    """For the imbalanced workload: each scheduler's share of the machine's ceiling, the time of
    the same tasks split in advance over plain threads (`static_split`, no scheduler at all), so
    that what a pool loses can be told from what the machine loses (100 % = as fast as the
    split; above 100 %, faster than it in this run)."""
    row = table.get("imbalanced", {})
    ceiling = row.get("static_split")
    if not ceiling:
        return {}
    return {c: ceiling / t for c, t in row.items()
            if c not in ("sequential", "static_split") and t > 0}


def _shares_line(table: dict[str, dict[str, float]], shares: dict[str, float]) -> str:
    order = contenders_of(table)
    return ", ".join(f"{c} {100 * v:.0f} %"
                     for c, v in sorted(shares.items(), key=lambda kv: order.index(kv[0])))


def print_ideal_shares(table: dict[str, dict[str, float]], workers: int) -> None:
    shares = ideal_shares(table, workers)
    if shares:
        print(f"imbalanced, share of ideal (sequential / {workers} workers): "
              f"{_shares_line(table, shares)}")
    ceiling = ceiling_shares(table)
    if ceiling:
        print("imbalanced, share of the machine's ceiling (the same tasks split in advance over "
              f"plain threads, static_split): {_shares_line(table, ceiling)}")


def wake_against_floor(report: dict) -> dict[str, tuple[float, float | None]]:
    """The wake_vs_floor benchmark's counters (bench/idle_workloads.hpp): contender -> (median
    wake-up in us, its ratio to the futex floor of the same rounds; None for the floor itself).
    From the median over repetitions where there are several; empty if the benchmark did not
    run."""
    runs = [bm for bm in report.get("benchmarks", [])
            if bm.get("run_name", bm.get("name", "")).startswith("wake_vs_floor/")]
    chosen = [bm for bm in runs if bm.get("aggregate_name") == "median"] or \
        [bm for bm in runs if bm.get("aggregate_name") is None]
    if not chosen:
        return {}
    counters = chosen[0]
    found: dict[str, tuple[float, float | None]] = {}
    for key, value in counters.items():
        if key.endswith("_us") and isinstance(value, (int, float)):
            name = key[:-len("_us")]
            ratio = counters.get(f"{name}_x_floor")
            found[name] = (float(value), float(ratio) if isinstance(ratio, (int, float)) else None)
    return found


def print_wake_against_floor(report: dict) -> None:
    found = wake_against_floor(report)
    floor = found.pop("futex_floor", None)
    if not found or floor is None:
        return
    cells = ", ".join(f"{c} {us:.1f} us ({ratio:.2f}x)" for c, (us, ratio) in
                      sorted(found.items(), key=lambda kv: ORDER.index(kv[0])
                             if kv[0] in ORDER else 99) if ratio is not None)
    print(f"wake_vs_floor, interleaved rounds: the bare futex wake-up {floor[0]:.1f} us; {cells} "
          "(each median over the floor's; the goal is at most 1.20x)")
