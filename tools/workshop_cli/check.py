"""`./workshop check`: everything CI checks, as named steps, ending with "N passed, N failed"."""
from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from . import build as b, carry
from .ctest import run_ctest
from .environment import install_hint
from .lessons import ROOT, Lesson, UsageError, all_lessons
from .node import BOOK, ensure_book_dependencies
from .testing import given_tests, summarise


class StepFailed(Exception):
    pass


def _tests_must_pass(preset: str) -> Callable[[], str]:
    def step() -> str:
        # The default build makes everything (the next step runs the starters' tests there);
        # a sanitizer build only the programs whose tests this step runs.
        b.build(preset, None if preset == "default" else ["ws_reference_tests"])
        junit = b.build_dir(preset) / "reports" / "check-solutions.xml"
        results = run_ctest(preset, r"^(common\.|model\.|lesson[0-9]+\.solution\.)", junit)
        if not results:
            raise StepFailed("no tests ran")
        failed = [r for r in results if not r.passed]
        if failed:
            detail = "\n".join(f"  x {r.name}\n    " + r.reason().replace("\n", "\n    ")
                               for r in failed[:10])
            raise StepFailed(f"{len(failed)} of {len(results)} tests failed:\n{detail}")
        return f"{len(results)} tests pass"
    return step


# The starters' tests mostly wait: an unfinished exercise's test fails when its wait for what
# the stub never does runs out (five wait 10 s, a few more 2 to 6 s: 84 s of the 366 tests'
# summed time), and together they use about 16 to 32 s of CPU, so they run 8 at a time, not 2.
# This step took 46.9 and 45.0 s with -j2, and with -j8 15.3, 16.8, 16.9, 20.6 s (2026-11-27,
# 2 cores, load average 0.9 to 5.7; -j12: 10.9 to 16.9 s, -j6: 19.4 and 21.6 s), every run
# with the same verdicts: each exercise failing, the 24 given tests passing, no other test
# passing by luck (the step would name it). The solutions' tests, which stress and time the
# pools, keep ctest's -j2.
STARTER_TEST_JOBS = 8


def _starters_fail_each_exercise(lessons: list[Lesson]) -> Callable[[], str]:
    """Every starter compiles (warnings are errors) and fails at least one test of each of its
    exercises: no exercise ships solved, none is untested."""
    def step() -> str:
        b.build("default")
        junit = b.build_dir("default") / "reports" / "check-starters.xml"
        results = run_ctest("default", r"^lesson[0-9]+\.starter\.", junit,
                            jobs=STARTER_TEST_JOBS)
        problems, checked, notes, given_count = [], 0, [], 0
        for lesson in lessons:
            mine = [r for r in results if r.name.startswith(f"lesson{lesson.nn}.starter.")]
            summaries = {s.number: s for s in summarise(lesson, mine)}
            given = given_tests(lesson)
            given_count += len(given)
            for ex in lesson.exercises:
                checked += 1
                s = summaries.get(ex.number)
                if s is None or s.total == 0:
                    problems.append(f"lesson {lesson.nn} exercise {ex.number} has no tests "
                                    "(beyond given ones)")
                elif s.passed == s.total:
                    problems.append(f"lesson {lesson.nn} exercise {ex.number} ({ex.title}): "
                                    f"the starter passes all {s.total} of its tests — "
                                    "it ships solved or its tests cannot fail")
            names = {f"{r.suite}.{r.test}": r for r in mine}
            for name in sorted(given):
                if name not in names:
                    problems.append(f"lessons/{lesson.folder}/lesson.toml: given test {name} "
                                    "does not exist")
                elif not names[name].passed:
                    problems.append(f"lesson {lesson.nn}: given test {name} fails on the "
                                    "untouched starter: it is not given, or the starter broke")
            for name, r in sorted(names.items()):
                if r.passed and name not in given and r.exercise is not None:
                    notes.append(f"{name}")
        if problems:
            raise StepFailed("\n".join(problems))
        extra = (f"; {len(notes)} other test(s) passed on a starter this time (by luck, or "
                 f"given and undeclared): {', '.join(notes[:6])}" if notes else "")
        return (f"{checked} exercises, each with a failing test in its starter; {given_count} "
                f"given tests pass{extra}")
    return step


def _format() -> str:
    if shutil.which("clang-format") is None:
        raise StepFailed(f"clang-format is missing: {install_hint('clang-format')}")
    files = [str(p) for d in ("common", "lessons", "solutions", "tests", "bench")
             for p in sorted((ROOT / d).rglob("*")) if p.suffix in (".cpp", ".hpp")]
    result = subprocess.run(["clang-format", "--dry-run", "--Werror", *files], cwd=ROOT,
                            capture_output=True, text=True)
    if result.returncode != 0:
        bad = sorted({line.split(":")[0] for line in result.stderr.splitlines()
                      if ": error:" in line})
        raise StepFailed("not formatted (run clang-format -i on them):\n  " + "\n  ".join(bad))
    return f"{len(files)} files formatted"


def _python_lint() -> str:
    """pyflakes over the tool (tools/ and the workshop script): unused imports, undefined
    names, redefinitions. Debian's pyflakes3 command, or the pyflakes module where that is
    all there is."""
    if shutil.which("pyflakes3"):
        cmd = ["pyflakes3"]
    elif importlib.util.find_spec("pyflakes") is not None:
        cmd = [sys.executable, "-m", "pyflakes"]
    else:
        raise StepFailed(f"pyflakes is missing: {install_hint('pyflakes3')}")
    files = ["workshop",
             *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tools").rglob("*.py"))]
    r = subprocess.run([*cmd, *files], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise StepFailed((r.stdout + r.stderr).strip()[-4000:] or f"{cmd[0]} failed")
    return f"{len(files)} Python files, no warnings"


def _carried_copies() -> str:
    problems = carry.drift()
    if problems:
        raise StepFailed("\n".join(problems))
    return (f"all {len(carry.generate_all())} generated files (carried, given, starter and idea "
            "copies) match their source")


def _benchmarks_build_and_run() -> str:
    b.build("bench")
    exe = b.build_dir("bench") / "bench" / "ws_tour"
    result = subprocess.run([str(exe), "--benchmark_min_time=0.01", "--benchmark_repetitions=1"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise StepFailed(f"the tour failed to run:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return "benchmarks build; the tour runs"


def _book() -> str:
    ensure_book_dependencies(quiet=True)
    if not Path("/usr/bin/chromium").exists():
        raise StepFailed(f"chromium is missing: {install_hint('chromium')}")
    for script in ("test", "build", "check"):  # the preprocessor's unit tests first
        r = subprocess.run(["npm", "run", "--silent", script], cwd=BOOK, capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise StepFailed(f"npm run {script} failed:\n{(r.stdout + r.stderr)[-4000:]}")
        last = [l for l in r.stdout.splitlines() if l.strip()][-1:] or [""]
    return f"book builds; browser check: {last[0].strip()}"


def _break_it() -> str:
    """Every reliable break-it patch (solutions/NN/break-it/manifest.toml) applied to a copy of
    the tree makes its named test fail: the chapters' "this test catches that bug" stay true."""
    r = subprocess.run([sys.executable, "tools/break_it.py"], cwd=ROOT, capture_output=True,
                       text=True)
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    summary = next((l for l in reversed(lines) if l.startswith("break-it:")), "")
    if r.returncode != 0:
        raise StepFailed("\n".join(lines[-20:]) + r.stderr[-2000:])
    # The check line adds the step's own time: drop break_it.py's "(N s)" so it is not given twice.
    summary = re.sub(r" \(\d+ s\)$", "", summary.removeprefix("break-it: "))
    return summary or "no break-it patches"


# The tool's tests run in two processes at once: test_grading_submission.py, which grades a
# class of lesson 01 checkouts and is the slowest file by far, on its own, and every other file
# in the other. One process kept about one core busy; on 2 cores the step now takes about as
# long as the grading file (2026-11-26, load average about 2 from other work: 205 s in one
# process, 141 s in two, the other files finishing after 105 s). Nothing they write is shared:
# grading builds in a scratch copy of its own, the other files in temporary folders or under
# WS_BUILD_ROOT.
TOOL_TESTS_ALONE = "test_grading_submission"


def tool_test_groups() -> list[tuple[str, list[str]]]:
    """(what, the test modules) for each process of the tool-test step."""
    modules = sorted(p.stem for p in (ROOT / "tools" / "tests").glob("test_*.py"))
    rest = [m for m in modules if m != TOOL_TESTS_ALONE]
    alone = [m for m in modules if m == TOOL_TESTS_ALONE]
    groups = [(f"{TOOL_TESTS_ALONE}.py", alone),
              (f"the other {len(rest)} files of tools/tests", rest)]
    return [(what, [f"tools.tests.{m}" for m in names]) for what, names in groups if names]


def _tool_tests() -> str:
    runs = []
    for what, modules in tool_test_groups():
        # Into a file each, not a pipe: a process whose pipe nobody reads yet would block.
        log = tempfile.TemporaryFile(mode="w+")
        runs.append((what, log, subprocess.Popen([sys.executable, "-m", "unittest", *modules],
                                                  cwd=ROOT, stdout=log, stderr=log, text=True)))
    ran, failures, said = 0, [], []
    for what, log, proc in runs:
        code = proc.wait()
        log.seek(0)
        out = log.read()
        log.close()
        count = re.search(r"^Ran (\d+) tests? in ([\d.]+)s$", out, re.M)
        if count:
            ran += int(count.group(1))
            said.append(f"{count.group(1)} in {what} ({float(count.group(2)):.0f} s)")
        if code != 0 or not count:
            failures.append(f"--- {what} (exit {code}):\n{out[-4000:]}")
    if failures:
        raise StepFailed("\n".join(failures))
    return f"Ran {ran} tests in {len(runs)} processes at once: {'; '.join(said)}"


def steps(quick: bool) -> list[tuple[str, Callable[[], str]]]:
    lessons = all_lessons()
    out = [
        ("format (clang-format)", _format),
        ("python lint (pyflakes)", _python_lint),
        ("carried code matches its one source (./workshop sync)", _carried_copies),
        ("solutions pass (g++)", _tests_must_pass("default")),
        ("starters compile and fail each exercise", _starters_fail_each_exercise(lessons)),
        ("solutions pass (clang ThreadSanitizer)", _tests_must_pass("tsan")),
    ]
    if not quick:
        out += [
            ("solutions pass (clang AddressSanitizer + UBSan)", _tests_must_pass("asan")),
            ("break-it patches make their tests fail", _break_it),
            ("benchmarks build and run", _benchmarks_build_and_run),
            ("book builds and passes the browser check", _book),
        ]
    out.append(("the workshop tool's own tests", _tool_tests))
    return out


# Steps that run beside the step after them instead of before it. The book's step spends
# most of its time waiting (HonKit on one core, then Chromium waiting for each page to settle:
# about 45 s of CPU in its 95 s, 2026-11-27), and the tool tests leave a core idle part of the
# time (test_grading_submission.py about 135 s of CPU in its 164 s). Neither times anything,
# and nothing one writes is read by the other: the book builds in book/.staging and
# book/_book, the tool tests in temporary folders and under WS_BUILD_ROOT. What they share,
# book/node_modules, is installed first, before either starts. A step's line is printed in
# its place, with its own time.
RUNS_BESIDE_THE_NEXT = {_book}


def _run_step(name: str, step: Callable[[], str]) -> tuple[bool, str]:
    t0 = time.monotonic()
    try:
        detail = step()
        return True, f"PASS  {name}: {detail} ({time.monotonic() - t0:.0f} s)"
    except (StepFailed, b.BuildError, UsageError) as e:
        return False, f"FAIL  {name} ({time.monotonic() - t0:.0f} s)\n{e}"


def run_check(quick: bool = False) -> int:
    passed = failed = 0
    started = time.monotonic()
    beside: tuple[threading.Thread, list] | None = None  # a step running beside this one

    def report(ok: bool, line: str) -> None:
        nonlocal passed, failed
        passed, failed = passed + ok, failed + (not ok)
        print(line, flush=True)

    todo = steps(quick)
    for i, (name, step) in enumerate(todo):
        b.progress(f"check: {name} ...")
        if step in RUNS_BESIDE_THE_NEXT and i + 1 < len(todo) and beside is None:
            if step is _book:
                try:  # book/node_modules before anything that reads it starts
                    ensure_book_dependencies(quiet=True)
                except UsageError as e:
                    report(False, f"FAIL  {name} (0 s)\n{e}")
                    continue
            result: list = []

            def run_beside(n: str = name, s: Callable[[], str] = step, r: list = result) -> None:
                try:
                    r.append(_run_step(n, s))
                except Exception as e:  # a thread's exception would otherwise pass unseen
                    r.append((False, f"FAIL  {n}\n{e!r}"))
            thread = threading.Thread(target=run_beside, daemon=True)
            thread.start()
            beside = (thread, result)
            continue
        ok, line = _run_step(name, step)
        if beside is not None:  # the step started beside this one reports first
            beside[0].join()
            report(*beside[1][0])
            beside = None
        report(ok, line)
    print(f"\nchecked in {time.monotonic() - started:.0f} s")
    print(f"check: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1
