"""`./workshop bench N` and `./workshop tour`: run a Google Benchmark binary, read its JSON, and
print each workload's contenders side by side as medians and ratios."""
from __future__ import annotations

import json
import subprocess
from collections import defaultdict
from pathlib import Path

from . import build as b

# The order contenders appear in, when present.
ORDER = ["sequential", "lesson00", "lesson01", "lesson02", "lesson03", "lesson04", "lesson05",
         "lesson06", "lesson07", "onetbb", "openmp", "std::function", "ws::Task"]


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
    b.progress(f"running {binary} ({repetitions} repetitions of each benchmark; the medians "
               "are compared) ...")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    tail = []
    for line in proc.stdout:
        tail = (tail + [line])[-20:]
        if "_median" in line or (repetitions == 1 and "/" in line and " ms " in line):
            b.progress("  done: " + line.split()[0].replace("/real_time_median", "").replace("/real_time", "")
                       .replace("_median", ""))
    if proc.wait() != 0:
        raise b.BuildError(f"{binary} failed (exit code {proc.returncode}):\n" + "".join(tail))
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
    return table


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
    header = f"{'workload':<14}" + "".join(f"{c:>18}" for c in contenders)
    print("\nmedian wall time per run" +
          (f"; in brackets, the ratio to {reference} (or to the row's first contender where "
           f"{reference} did not run)" if reference else ""))
    print(header)
    print("-" * len(header))
    for workload, row in table.items():
        ref = row_reference(row, reference)
        cells = []
        for c in contenders:
            if c not in row:
                cells.append(f"{'-':>18}")
                continue
            cell = fmt_ms(row[c])
            if ref and row[ref] > 0:
                cell += f" ({row[c] / row[ref]:.2f}x)"
            cells.append(f"{cell:>18}")
        print(f"{workload:<14}" + "".join(cells))
