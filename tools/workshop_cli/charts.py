"""The benchmark charts: SVG drawn with Vega-Lite from Google Benchmark's JSON by the book's Node
tooling (book/tools/lib/charts.js), so that `./workshop bench`, `./workshop tour` and the book
draw them with the same code. Node is already what builds the guide; the Python here only adds
to the JSON what Google Benchmark does not record (the CPU model, the OS, the command), and
calls it.

For X.json the charts are X.svg (desktop) and X-narrow.svg (phone), one panel per workload;
tour.json also gets tour-progression(-narrow).svg, the closing chapter's figure."""
from __future__ import annotations

import json
import platform
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from . import node
from .environment import install_hint
from .lessons import ROOT, UsageError

BOOK_CHARTS = ROOT / "book" / "src" / "charts"
DRAW = ROOT / "book" / "tools" / "lib" / "charts.js"


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _os_name() -> str | None:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


def annotate(report_json: Path, command: str) -> None:
    """Adds to the JSON's "context" what a chart's caption needs and Google Benchmark leaves
    out: cpu_model, os and workshop_command (the command that measured it)."""
    report = json.loads(report_json.read_text())
    context = report.setdefault("context", {})
    for key, value in (("cpu_model", _cpu_model()), ("os", _os_name()),
                       ("workshop_command", command)):
        if value and not context.get(key):
            context[key] = value
    report_json.write_text(json.dumps(report, indent=2) + "\n")


def _ensure_node(what: str) -> None:
    try:
        node.ensure_book_dependencies(quiet=True)
    except UsageError as e:
        if "not installed" in str(e):
            raise UsageError(f"{what}: the charts are drawn with Node.js, which is not installed "
                             f"({install_hint('node', 'npm')})") from None
        raise


def draw(report_json: Path, out_dir: Path) -> list[Path]:
    """Draws report_json's charts into out_dir with book/tools/lib/charts.js; returns them."""
    if not DRAW.exists():
        raise UsageError(f"no chart drawn: {DRAW.relative_to(ROOT)} is missing")
    r = subprocess.run(["node", str(DRAW), str(report_json), "--out", str(out_dir)],
                       capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise UsageError(f"drawing the charts failed:\n{(r.stdout + r.stderr).strip()}")
    return [(ROOT / line.split(":", 1)[1].strip()).resolve()
            for line in r.stdout.splitlines() if line.startswith("chart:")]


def write_charts(report_json: Path, *, save_to_book: bool) -> list[Path]:
    """The charts of one run. With save_to_book the JSON is copied into book/src/charts/ first
    and the book's charts are drawn from that copy; otherwise they go beside the JSON."""
    annotate(report_json, "./workshop " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    source, out_dir = report_json, report_json.parent
    if save_to_book:
        BOOK_CHARTS.mkdir(parents=True, exist_ok=True)
        source = BOOK_CHARTS / report_json.name
        shutil.copyfile(report_json, source)
        out_dir = BOOK_CHARTS
        _ensure_node(f"the JSON is saved in {BOOK_CHARTS.relative_to(ROOT)}/ but no chart was "
                     "drawn (then run ./workshop charts)")
    else:
        _ensure_node("no chart drawn (the table above has the results)")
    return draw(source, out_dir)


def redraw_book() -> int:
    """`./workshop charts`: redraws every chart of book/src/charts/ from its JSON."""
    _ensure_node("no chart drawn")
    r = subprocess.run(["npm", "run", "--silent", "charts"], cwd=ROOT / "book")
    return r.returncode
