"""SVG charts of benchmark results, drawn by gnuplot (Debian package gnuplot-nox).

One clustered bar chart per run: a group per workload, a bar per contender, the height being
the contender's median time relative to a reference contender (lower is faster; a workload the
reference did not run is relative to its own first contender, see benchmarks.row_reference)."""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from .benchmarks import row_reference
from .environment import install_hint
from .lessons import UsageError

PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac", "#2f4b7c"]


def write_chart(table: dict[str, dict[str, float]], contenders: list[str], reference: str,
                title: str, svg: Path) -> Path:
    if shutil.which("gnuplot") is None:
        raise UsageError(f"gnuplot is not installed: {install_hint('gnuplot')}")
    rows = [(w, row, row_reference(row, reference)) for w, row in table.items()]
    rows = [(w, row, ref) for w, row, ref in rows if ref and row[ref] > 0]
    if not rows:
        raise UsageError("no benchmark results to chart")
    svg.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.tsv"
        lines = []
        ratios = []
        for workload, row, ref in rows:
            r = [row[c] / row[ref] if c in row else None for c in contenders]
            ratios += [x for x in r if x is not None]
            lines.append(workload + "\t" + "\t".join("NaN" if x is None else f"{x:.4f}"
                                                     for x in r))
        data.write_text("\n".join(lines) + "\n")
        plots = ", ".join(
            f"'{data}' using {i + 2}:xtic(1) title '{c}' lc rgb '{PALETTE[i % len(PALETTE)]}'"
            for i, c in enumerate(contenders))
        script = f"""
set terminal svg size 760,380 dynamic noenhanced font 'sans,12' background rgb 'white'
set output '{svg}'
set title "{title}"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.9 border -1
set boxwidth 0.9
set logscale y 2
set ylabel "time relative to {reference} (log scale)" offset 1,0
set lmargin 16
set grid ytics
set key outside right top
set xtics rotate by -25 nomirror
set yrange [{min(ratios) / 1.5}:{max(ratios) * 1.5}]
plot {plots}
"""
        result = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
        if result.returncode != 0:
            raise UsageError(f"gnuplot failed:\n{result.stderr}")
    return svg
