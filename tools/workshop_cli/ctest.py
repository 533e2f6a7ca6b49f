"""Running CTest with a JUnit report, and reading the report: each test's result and the lines
that say why it failed (building the tests: build.py)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from .build import BuildError, build_dir
from .lessons import ROOT

# CTest's word for how a test process ended (its progress line), and what a learner should
# read into it.
CRASHES = {
    "SegFault": "crashed: SIGSEGV (a null or dangling pointer, or a stack overflow?)",
    "Subprocess aborted": "aborted: SIGABRT (a failed assert, std::terminate, or the "
                          "allocator found a corrupted heap)",
    "Illegal": "crashed: SIGILL (an illegal instruction: __builtin_trap or a corrupted stack?)",
    "Numerical": "crashed: SIGFPE (an integer division by zero?)",
    "Bus error": "crashed: SIGBUS (a misaligned or unmapped access)",
    "Child aborted": "aborted: SIGABRT",
    "Other": "crashed (killed by a signal)",
}
SANITIZER_START = re.compile(r"^(WARNING: ThreadSanitizer:|==\d+==ERROR: (Address|Leak)Sanitizer:)")
SANITIZER_END = re.compile(r"^SUMMARY: (Thread|Address|Leak|UndefinedBehavior)Sanitizer")
LEARNER_FRAME = re.compile(r"/(lessons|solutions)/\d\d_\w+/")


@dataclass
class TestResult:
    name: str       # the CTest name, e.g. lesson01.starter.Lesson01Ex2.WaitIdleIsReusable
    passed: bool
    output: str
    seconds: float
    ended: str = ""  # CTest's verdict when it is not a plain pass or fail, e.g. "SegFault"
    log: Path | None = None  # the whole output of a failed test
    skipped: bool = False  # GTEST_SKIP: not run in this build (e.g. under a sanitizer); not a failure

    @property
    def suite(self) -> str:  # Lesson01Ex2
        return self.name.split(".")[-2]

    @property
    def test(self) -> str:  # WaitIdleIsReusable
        return self.name.split(".")[-1]

    @property
    def exercise(self) -> int | None:
        m = re.search(r"Ex(\d+)$", self.suite)
        return int(m.group(1)) if m else None

    def reason(self) -> str:
        """The lines of the output that say why the test failed."""
        return failure_reason(self.output, self.ended)


def _sanitizer_reports(lines: list[str]) -> list[list[str]]:
    reports, current = [], None
    for line in lines:
        if SANITIZER_START.match(line):
            current = [line]
            reports.append(current)
        elif current is not None:
            current.append(line)
            if SANITIZER_END.match(line):
                current = None
    return reports


def _mark_learner_frames(report: list[str]) -> list[str]:
    """Frames in the lesson's own files are where to look first: mark them with '>>'."""
    out = []
    for line in report:
        if re.match(r"^\s+#\d+ ", line) and LEARNER_FRAME.search(line):
            out.append(">> " + line.strip())
        else:
            out.append(line)
    return out


def failure_reason(output: str, ended: str = "") -> str:
    lines = output.splitlines()
    keep: list[str] = []
    if ended in CRASHES:
        keep.append(CRASHES[ended])
    elif ended == "Timeout":
        keep.append("timed out: CTest stopped it (a hang that the watchdog did not catch)")
    reports = _sanitizer_reports(lines)
    if reports:
        # The first report whole (both stacks): the race is read from the two of them together.
        keep.extend(_mark_learner_frames(reports[0]))
        if len(reports) > 1:
            keep.append(f"... and {len(reports) - 1} more sanitizer report(s) in the same run")
    seen = set(keep)
    in_report = False
    for i, line in enumerate(lines):
        if SANITIZER_START.match(line):
            in_report = True
        if in_report:
            in_report = not SANITIZER_END.match(line)
            continue
        if line.startswith(("[watchdog]", "[terminate]", "[seed]")):
            if line not in seen:
                keep.append(line)
                seen.add(line)
        elif re.match(r"^(\S+:\d+: Failure|unknown file: Failure)$", line):
            block = [line]
            for follow in lines[i + 1:]:
                # A block ends where the next failure, tag line or test begins.
                if (follow.startswith(("[  FAILED  ]", "[       OK ]", "[ RUN      ]", "["))
                        or re.match(r"^(\S+:\d+: Failure|unknown file: Failure)$", follow)):
                    break
                block.append(follow)
            block = block[:9]
            key = "\n".join(block)
            if key not in seen:
                keep.extend(block)
                seen.add(key)
        elif "runtime error:" in line and line not in seen:
            keep.append(line)
            seen.add(line)
    if not keep or (len(keep) == 1 and ended in CRASHES):
        keep += [l for l in lines if l.strip() and not l.startswith("[exercise]")][-6:]
    limit = 60 if reports else 24
    return "\n".join(keep[:limit])


PROGRESS = re.compile(r"^\s*(\d+)/(\d+) Test\s+#\d+: (\S+) \.*\s*(\*\*\*)?(.*?)\s+[\d.]+ sec")


class _Progress:
    """One line on stderr while the tests run: how many are done, how many failed, and which
    finished last. Rewritten in place on a terminal; elsewhere a line every 15 s at most."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last_print = time.monotonic()
        self.width = 0

    def update(self, done: int, total: int, failed: int, last: str) -> None:
        text = f"tests: {done}/{total} done, {failed} failed (last: {last})"
        if self.tty:
            text = text[:118]
            sys.stderr.write("\r" + text.ljust(self.width))
            self.width = len(text)
            sys.stderr.flush()
        elif time.monotonic() - self.last_print >= 15:
            print(text, file=sys.stderr, flush=True)
            self.last_print = time.monotonic()

    def finish(self) -> None:
        if self.tty and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()


def run_ctest(preset: str, name_regex: str, junit: Path, jobs: int = 2,
              label: str | None = None, progress: bool = True) -> list[TestResult]:
    """Runs the tests whose names match; returns their results (empty if none matched)."""
    junit.parent.mkdir(parents=True, exist_ok=True)
    if junit.exists():
        junit.unlink()
    cmd = ["ctest", "--test-dir", str(build_dir(preset)), "-R", name_regex,
           "-j", str(jobs), "--output-junit", str(junit)]
    if label:
        cmd += ["-L", label]
    env = dict(os.environ)
    if preset == "tsan":
        env["TSAN_OPTIONS"] = "halt_on_error=1 second_deadlock_stack=1"
    elif preset == "asan":
        env["ASAN_OPTIONS"] = "detect_leaks=1"
        env["UBSAN_OPTIONS"] = "print_stacktrace=1 halt_on_error=1"
    ended: dict[str, str] = {}
    shown = _Progress() if progress else None
    failed = 0
    out_lines = []
    with subprocess.Popen(cmd, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            out_lines.append(line)
            m = PROGRESS.match(line)
            if not m:
                continue
            done, total, name, bad, verdict = m.groups()
            verdict = verdict.removeprefix("Exception: ").strip()
            if bad and not verdict.startswith("Skipped"):  # a skipped test did not fail
                failed += 1
                ended[name] = verdict
            if shown:
                shown.update(int(done), int(total), failed, name.split(".", 2)[-1])
    if shown:
        shown.finish()
    if not junit.exists():
        raise BuildError(f"ctest produced no report:\n{''.join(out_lines)[-4000:]}")
    results = parse_junit(junit)
    logs = junit.parent / "logs"
    for r in results:
        if r.name in ended and ended[r.name] not in ("Failed", ""):
            r.ended = ended[r.name]
        if not r.passed:
            logs.mkdir(exist_ok=True)
            r.log = logs / f"{r.name}.log"
            r.log.write_text(r.output)
    return results


def parse_junit(path: Path) -> list[TestResult]:
    results = []
    for case in ET.parse(path).getroot().iter("testcase"):
        status = case.get("status", "")
        # A test that skipped itself (GTEST_SKIP, matched by gtest_discover_tests' skip
        # expression) is "notrun" with a <skipped> element: it did not fail.
        skipped = status == "notrun" and case.find("skipped") is not None
        failed = not skipped and (status != "run" or case.find("failure") is not None)
        out = case.findtext("system-out") or ""
        results.append(TestResult(case.get("name", ""), not failed, out,
                                  float(case.get("time", "0") or 0), skipped=skipped))
    return results
