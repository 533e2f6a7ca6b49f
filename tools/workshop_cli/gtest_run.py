"""Running GoogleTest programs for grading: each test in a process of its own, and a test passes
only when GoogleTest's own XML report, written by that process, says it ran and passed (and the
process then exited with 0). A program that exits 0 without running its tests, or that lacks a
test the instructors' build has, scores nothing for them.

What a test program does is up to the code linked into it, so none of this can stop code that
forges the report itself; the instructor guide says so."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .ctest import failure_reason

# The last resort against a hang (the harness's watchdog fails a test after 30 s x slowdown).
TIMEOUT = {"default": 120, "tsan": 400}
SANITIZER_ENV = {"tsan": {"TSAN_OPTIONS": "halt_on_error=1 second_deadlock_stack=1"}}
OUTPUT_KEPT = 6000  # characters of a failing test's output kept for the reports


# The first words of a skip that says this machine or build lacks what the test needs
# (WS_SKIP_NOT_AVAILABLE_HERE in <ws/testing/harness.hpp>): not run here, rather than not passed.
NOT_AVAILABLE = "not available here:"


def says_not_available(text: str) -> bool:
    """A skip message (or a test's output) from WS_SKIP_NOT_AVAILABLE_HERE."""
    return bool(not_available_reason(text))


def not_available_reason(text: str) -> str:
    """What WS_SKIP_NOT_AVAILABLE_HERE said is missing ('' if the text has no such skip)."""
    return next((line.strip().removeprefix(NOT_AVAILABLE).strip() or "(no reason given)"
                 for line in text.splitlines() if line.strip().startswith(NOT_AVAILABLE)), "")


@dataclass
class Outcome:
    name: str            # Suite.Test
    status: str          # passed, failed, skipped, crashed, timeout, no report, missing
    first_failure: str   # one line; empty when it passed
    seconds: float
    runs: int            # how many of the repeats ran (a failure stops the repeats)
    output: str = ""     # the failing run's output (trimmed)
    message: str = ""    # GoogleTest's failure message, when it has one

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def not_available_here(self) -> bool:
        """Skipped because the machine or build lacks what the test needs (not the code's
        fault): left out of the exercise's total."""
        return self.status == "skipped" and says_not_available(self.message)

    def ok(self, preset: str) -> bool:
        """Passed; under a sanitizer a skip counts too (the reference skips the same tests
        there, e.g. one that replaces operator new)."""
        return self.passed or (self.status == "skipped" and preset != "default")


def list_tests(binary: Path) -> list[str]:
    """Suite.Test for every test the program has (not DISABLED_ ones). Raises RuntimeError."""
    try:
        r = subprocess.run([str(binary), "--gtest_list_tests"], capture_output=True, text=True,
                           timeout=60, env=_env("default"), errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"{binary.name} --gtest_list_tests failed: {e}") from None
    if r.returncode != 0:
        raise RuntimeError(f"{binary.name} --gtest_list_tests exited with {r.returncode}:\n"
                           + (r.stdout + r.stderr)[-2000:])
    names, suite = [], None
    for line in r.stdout.splitlines():
        text = line.split("#")[0].rstrip()
        if not text:
            continue
        if not line.startswith(" "):
            suite = text.rstrip(".")
        elif suite is not None:
            test = text.strip()
            if not suite.startswith("DISABLED_") and not test.startswith("DISABLED_"):
                names.append(f"{suite}.{test}")
    return names


def _env(preset: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GTEST_")}
    env.update(SANITIZER_ENV.get(preset, {}))
    return env


def _first_line_of_message(message: str) -> str:
    """'file.cpp:12\\nExpected equality...' -> 'file.cpp:12: Expected equality...'"""
    lines = [l.strip() for l in message.splitlines() if l.strip()]
    if not lines:
        return "failed"
    where = lines[0]
    if (re.fullmatch(r"\S+:\d+", where) or where == "unknown file") and len(lines) > 1:
        return f"{Path(where).name}: {lines[1]}"[:300]
    return where[:300]


def _first_line_of_output(output: str) -> str:
    lines = failure_reason(output).splitlines()
    for prefix in ("[terminate] uncaught", "[watchdog] likely cause", "WARNING: ThreadSanitizer",
                   "[watchdog]", "[terminate]", "==", ""):
        for line in lines:
            if line.startswith(prefix) and line.strip():
                return line.strip()[:300]
    return ""


def _read_report(xml: Path, suite: str, test: str):
    """(status, message) from the report, or None when there is no usable report."""
    try:
        root = ET.parse(xml).getroot()
    except (OSError, ET.ParseError):
        return None
    for case in root.iter("testcase"):
        if case.get("classname") == suite and case.get("name") == test:
            if case.get("status") != "run":
                return "missing", "the test did not run"
            failures = case.findall("failure")
            if failures:
                return "failed", failures[0].get("message", "") or (failures[0].text or "")
            if case.get("result") == "skipped":
                skipped = case.find("skipped")
                return "skipped", (skipped.get("message", "") if skipped is not None else "")
            return "passed", ""
    return "missing", ""


def run_one(binary: Path, name: str, preset: str, workdir: Path, run: int) -> Outcome:
    suite, _, test = name.partition(".")
    xml = workdir / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.{run}.xml"
    if xml.exists():
        xml.unlink()
    cmd = [str(binary), f"--gtest_filter={name}", f"--gtest_output=xml:{xml}", "--gtest_color=no"]
    try:
        proc = subprocess.Popen(cmd, cwd=workdir, env=_env(preset), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as e:
        return Outcome(name, "crashed", f"cannot start the test program: {e}", 0.0, 1)
    start = time.monotonic()
    try:
        out, _ = proc.communicate(timeout=TIMEOUT[preset])
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        timed_out = True
    finally:
        try:  # whatever the test started in its session ends with it
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    seconds = time.monotonic() - start
    output = out.decode("utf-8", "replace")
    trimmed = output[-OUTPUT_KEPT:]
    if timed_out:
        return Outcome(name, "timeout", f"still running after {TIMEOUT[preset]} s: ended",
                       seconds, 1, trimmed)
    report = _read_report(xml, suite, test)
    code = proc.returncode
    if report is None:
        why = _first_line_of_output(output)
        status = "no report" if code == 0 else "crashed"
        what = (f"the test program exited with code {code} without a GoogleTest report"
                if code >= 0 else f"the test program was killed by signal {-code}")
        return Outcome(name, status, f"{what}" + (f": {why}" if why else ""), seconds, 1,
                       trimmed)
    status, message = report
    if status == "passed" and code != 0:
        return Outcome(name, "crashed", f"the test passed, then its program exited with code "
                       f"{code}: {_first_line_of_output(output)}".rstrip(": "), seconds, 1,
                       trimmed)
    if status == "passed":
        return Outcome(name, "passed", "", seconds, 1)
    if status == "missing":
        return Outcome(name, "missing", message or "the test program does not have this test "
                       "(the instructors' build does)", seconds, 1, trimmed)
    if status == "skipped":
        return Outcome(name, "skipped", f"skipped: {message}".strip(), seconds, 1, trimmed,
                       message)
    return Outcome(name, "failed", _first_line_of_message(message), seconds, 1, trimmed,
                   message[:2000])


def run_repeated(binary: Path, name: str, preset: str, workdir: Path, repeat: int) -> Outcome:
    """Runs the test up to `repeat` times; it passes only if every run passes (a skip counts as
    a pass only under a sanitizer, where the reference skips the same tests)."""
    total = 0.0
    last = None
    for run in range(1, repeat + 1):
        last = run_one(binary, name, preset, workdir, run)
        total += last.seconds
        if not last.ok(preset):
            if repeat > 1:
                last.first_failure = f"run {run} of {repeat}: {last.first_failure}"
            last.runs, last.seconds = run, total
            return last
    last.runs, last.seconds = repeat, total
    return last


def run_tests(binary: Path, names: list[str], preset: str, workdir: Path, *, repeat: int = 1,
              jobs: int = 2) -> dict[str, Outcome]:
    workdir.mkdir(parents=True, exist_ok=True)
    if not binary.exists():
        return {n: Outcome(n, "crashed", f"{binary.name} was not built", 0.0, 0) for n in names}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {n: pool.submit(run_repeated, binary, n, preset, workdir, repeat)
                   for n in names}
        return {n: f.result() for n, f in futures.items()}
