"""The reports of `./workshop grade`: grade.json (for scripts; versioned), grade.md (for people),
grade-junit.xml (for CI dashboards), and for a class gradebook.csv (one row per student)."""
from __future__ import annotations

import csv
import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from .classroom import EXERCISE_POINTS, TSAN_POINTS
from .gtest_run import Outcome
from .lessons import Lesson, UsageError

SCHEMA_VERSION = 2
FILES = ("grade.json", "grade.md", "grade-junit.xml")


def prepare_output(out: Path) -> None:
    """Creates the reports' folder and proves it writable — before any long run."""
    try:
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {out} is a file, not a folder")
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise UsageError(f"cannot write the reports to {out}: {e.strerror or e}") from None


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.@+-]", "_", name).lstrip(".") or "student"


def _r(x: float) -> float:
    return round(x, 2)


def _failing(outcomes: dict[str, Outcome], preset: str) -> list[dict]:
    return [{"test": o.name, "status": o.status, "first_failure": o.first_failure,
             "output_tail": o.output[-2000:]}
            for o in outcomes.values() if not o.ok(preset)]


def first_error(build_error: str) -> str:
    """The first line of a build error that says what is wrong (the compiler's 'error:')."""
    lines = build_error.strip().splitlines()
    for line in lines:
        if "error:" in line or "Error" in line:
            return line.strip()[:200]
    return (lines[0].strip() if lines else "")[:200]


def as_json(g) -> dict:
    lessons = []
    for l in g.lessons:
        lessons.append({
            "number": l.number, "title": l.title,
            "points": _r(l.points), "max_points": l.max_points, "score": _r(l.score),
            "tsan_clean": l.tsan_clean, "tsan_points": _r(l.tsan_points),
            "tsan_max_points": l.tsan_max,
            "build_error": l.build_error,
            "exercises": [{"number": e.number, "title": e.title, "passed": e.passed,
                           "total": e.total, "skipped": e.skipped, "tsan_passed": e.tsan_passed,
                           "points": _r(e.points), "max_points": e.max_points}
                          for e in l.exercises],
            "failing_tests": _failing(l.results, "default"),
            "failing_tests_tsan": _failing(l.tsan_results, "tsan"),
            "given_tests": [{"test": t, "passed": t in l.results and l.results[t].passed}
                            for t in l.given],
            "warnings": l.warnings, "notes": l.notes, "review": l.review,
        })
    return {
        "schema_version": SCHEMA_VERSION,
        "graded": g.what, "student": g.student,
        "started": g.started, "finished": g.finished,
        "repeat": g.repeat, "tsan": g.tsan, "hidden_tests": g.hidden,
        "points": _r(g.points), "max_points": g.max_points,
        "total": _r(g.total), "threshold": g.threshold, "passed": g.passed,
        "error": g.error,
        "scoring": {"exercise_points": EXERCISE_POINTS, "tsan_points": TSAN_POINTS},
        "lessons": lessons,
    }


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(g) -> str:
    who = f" — {g.student}" if g.student else ""
    lines = [f"# Grade report ({g.what}){who}", "",
             f"Total: **{g.points:.2f} / {g.max_points} points, {g.total:.1f} %** (pass "
             f"threshold {g.threshold:g} %): **{'PASS' if g.passed else 'FAIL'}**", "",
             f"Graded {g.started} to {g.finished}; each test run {g.repeat} time(s)"
             + ("" if g.tsan else "; ThreadSanitizer not run")
             + (f"; hidden tests: {', '.join(g.hidden)}" if g.hidden else "") + ".", ""]
    if g.error:
        lines += [f"**The grading failed:** {g.error}", ""]
    lines += ["| lesson | exercise | tests (g++) | tests (TSan) | points |",
              "| --- | --- | --- | --- | --- |"]
    for l in g.lessons:
        name = f"{l.nn} {l.title}"
        if l.build_error:
            lines.append(f"| {name} | — | does not build | — | 0 / {l.max_points} |")
            continue
        for i, e in enumerate(l.exercises):
            tsan = "—" if e.tsan_passed is None else f"{e.tsan_passed}/{e.total}"
            skipped = f" ({e.skipped} skipped)" if e.skipped else ""
            lines.append(f"| {name if i == 0 else ''} | {e.number}: {_cell(e.title)} | "
                         f"{e.passed}/{e.total}{skipped} | {tsan} | {e.points:.2f} / "
                         f"{e.max_points} |")
        if g.tsan:
            clean = ("not run" if l.tsan_clean is None else
                     "yes" if l.tsan_clean else "NO: data races reported")
            lines.append(f"| | TSan clean: {clean} | | | {l.tsan_points:g} / {l.tsan_max} |")
        if l.given:
            ok = sum(1 for t in l.given if t in l.results and l.results[t].passed)
            lines.append(f"| | given code (not scored) | {ok}/{len(l.given)} | | |")
        lines.append(f"| | **lesson {l.nn}** | | | **{l.points:.2f} / {l.max_points}** |")
    not_ok = [(l, o, kind) for l in g.lessons
              for kind, outcomes in (("g++", l.results), ("TSan", l.tsan_results))
              for o in outcomes.values() if not o.ok("default" if kind == "g++" else "tsan")]
    failing = [(l, o, kind) for l, o, kind in not_ok if o.status != "skipped"]
    skipped = [(l, o, kind) for l, o, kind in not_ok if o.status == "skipped"]
    if failing:
        lines += ["", "## Failing tests", ""]
        for l, o, kind in failing:
            lines.append(f"- `{o.name}` ({kind}, lesson {l.nn}): {o.first_failure}")
    if skipped:
        lines += ["", "## Skipped tests (they checked nothing, so they score nothing)", ""]
        for l, o, kind in skipped:
            lines.append(f"- `{o.name}` ({kind}, lesson {l.nn}): {o.first_failure}")
    broken = [l for l in g.lessons if l.build_error]
    if broken:
        lines += ["", "## Build errors", ""]
        for l in broken:
            lines += [f"### Lesson {l.nn}", "", "```text", l.build_error.strip(), "```", ""]
    warned = [l for l in g.lessons if l.warnings]
    if warned:
        lines += ["", "## Compiler warnings (they cost nothing)", ""]
        for l in warned:
            lines += ["```text", *l.warnings[:50], "```"]
    notes = [(l, n) for l in g.lessons for n in l.notes]
    if notes:
        lines += ["", "## Notes", ""] + [f"- lesson {l.nn}: {n}" for l, n in notes]
    review = [(l, r) for l in g.lessons for r in l.review]
    if review:
        lines += ["", "## For a human to look at", "",
                  "The submission's files do things a solution does not need (not scored):", ""]
        lines += [f"- `{_cell(r)}`" for _, r in review]
    lines += ["", f"Scoring: {EXERCISE_POINTS} points per exercise, times the share of its tests "
              f"that pass under g++ (on every one of the {g.repeat} run(s)); {TSAN_POINTS} per "
              "lesson when all its exercise tests also pass under ThreadSanitizer with no report."
              " Tests of given code are shown, not scored. Warnings cost nothing.", ""]
    return "\n".join(lines)


def junit(g) -> ET.ElementTree:
    root = ET.Element("testsuites", name="workshop grade", timestamp=g.started)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
    for l in g.lessons:
        runs = [("", l.results, "default")]
        if l.tsan_results:
            runs.append((".tsan", l.tsan_results, "tsan"))
        if l.build_error:
            suite = ET.SubElement(root, "testsuite", name=f"lesson{l.nn}", timestamp=g.started,
                                  tests="1", failures="0", errors="1", skipped="0", time="0")
            case = ET.SubElement(suite, "testcase", classname=f"lesson{l.nn}", name="build",
                                 time="0")
            ET.SubElement(case, "error", message=first_error(l.build_error),
                          type="build").text = l.build_error
            totals["tests"] += 1
            totals["errors"] += 1
            continue
        for suffix, outcomes, preset in runs:
            suite = ET.SubElement(root, "testsuite", name=f"lesson{l.nn}{suffix}",
                                  timestamp=g.started)
            counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
            for o in outcomes.values():
                suite_name, _, test = o.name.partition(".")
                case = ET.SubElement(suite, "testcase", classname=suite_name, name=test,
                                     time=f"{o.seconds:.3f}")
                counts["tests"] += 1
                counts["time"] += o.seconds
                if o.status == "skipped":
                    ET.SubElement(case, "skipped", message=o.first_failure[:200])
                    counts["skipped"] += 1
                elif not o.passed:
                    kind = "failure" if o.status == "failed" else "error"
                    ET.SubElement(case, kind, message=o.first_failure[:200],
                                  type=o.status).text = o.output or o.message
                    counts["failures" if kind == "failure" else "errors"] += 1
            for k, v in counts.items():
                suite.set(k, f"{v:.3f}" if k == "time" else str(v))
                totals[k] += v
    for k, v in totals.items():
        root.set(k, f"{v:.3f}" if k == "time" else str(v))
    ET.indent(root)
    return ET.ElementTree(root)


def write_reports(g, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "grade.json").write_text(json.dumps(as_json(g), indent=2) + "\n")
    (out / "grade.md").write_text(markdown(g))
    junit(g).write(out / "grade-junit.xml", encoding="utf-8", xml_declaration=True)


def finish_one(g, out: Path) -> int:
    write_reports(g, out)
    print(markdown(g))
    print(f"reports: {out}/grade.json, grade.md, grade-junit.xml")
    return 0 if g.passed else 1


def columns(lessons: list[Lesson]) -> list[str]:
    cols = ["student"]
    for l in lessons:
        cols += [f"lesson{l.nn} ex{e.number}" for e in l.exercises]
        cols += [f"lesson{l.nn} tsan clean", f"lesson{l.nn} tsan points"]  # empty: not run
    return cols + ["points", "max points", "percent", "build error", "notes", "review"]


def row(g, lessons: list[Lesson]) -> list[str]:
    by_number = {l.number: l for l in g.lessons}
    cells = [g.student or ""]
    errors, notes = [], []
    for lesson in lessons:
        l = by_number.get(lesson.number)
        points = {e.number: e.points for e in l.exercises} if l else {}
        cells += [f"{_r(points.get(e.number, 0.0)):g}" for e in lesson.exercises]
        if not g.tsan:
            cells += ["", ""]
        else:
            clean = ("" if l is None else "not run" if l.tsan_clean is None
                     else "yes" if l.tsan_clean else "no")
            cells += [clean, f"{_r(l.tsan_points):g}" if l else "0"]
        if l and l.build_error:
            errors.append(f"lesson {l.nn}: " + first_error(l.build_error))
        if l:
            notes += [f"lesson {l.nn}: {n}" for n in l.notes]
    if g.error:
        errors.append(g.error)
    review = [r for l in g.lessons for r in l.review]
    return cells + [f"{_r(g.points):g}", str(g.max_points or _max(lessons, g.tsan)),
                    f"{_r(g.total):g}", "; ".join(errors), "; ".join(notes),
                    f"{len(review)} item(s): see grade.md" if review else ""]


def _max(lessons: list[Lesson], tsan: bool) -> int:
    return sum(EXERCISE_POINTS * len(l.exercises) + (TSAN_POINTS if tsan else 0)
               for l in lessons)


def write_gradebook(rows: list, lessons: list[Lesson], out: Path) -> Path:
    path = out / "gradebook.csv"
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns(lessons))
        for g in rows:
            w.writerow(row(g, lessons))
    os.replace(tmp, path)
    return path


def class_summary(rows: list) -> str:
    width = max((len(g.student or "") for g in rows), default=7) + 2
    lines = ["", f"{'student':<{width}} {'points':>14}  note"]
    for g in rows:
        broken = [l.nn for l in g.lessons if l.build_error]
        note = (g.error or (f"lesson {', '.join(broken)} does not build" if broken else "")
                or ("review: " + str(sum(len(l.review) for l in g.lessons)) + " item(s)"
                    if any(l.review for l in g.lessons) else ""))
        lines.append(f"{g.student or '':<{width}} {g.points:>7.2f} / {g.max_points or '-':<4}  "
                     f"{note}")
    return "\n".join(lines)
