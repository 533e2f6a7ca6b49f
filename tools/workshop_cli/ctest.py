"""Running CTest with a JUnit report, and reading the report: each test's result and the lines
that say why it failed (building the tests: build.py)."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from .build import BuildError, build_dir, run


@dataclass
class TestResult:
    name: str       # the CTest name, e.g. lesson01.starter.Lesson01Ex2.WaitIdleIsReusable
    passed: bool
    output: str
    seconds: float

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
        return failure_reason(self.output)


def failure_reason(output: str) -> str:
    lines = output.splitlines()
    keep = []
    for i, line in enumerate(lines):
        if line.startswith(("[watchdog]", "[terminate]", "[seed]")):
            keep.append(line)
        elif re.match(r"^(\S+:\d+: Failure|unknown file: Failure)$", line):
            block = []
            for follow in lines[i + 1:]:
                if follow.startswith(("[  FAILED  ]", "[       OK ]", "[ RUN      ]")):
                    break
                if not follow.startswith("[exercise]"):
                    block.append(follow)
            keep.append(line)
            keep.extend(block[:8])
        elif "ThreadSanitizer" in line or "AddressSanitizer" in line or "runtime error:" in line:
            keep.append(line)
    if not keep:
        keep = [l for l in lines if l.strip()][-6:]
    return "\n".join(keep[:24])


def run_ctest(preset: str, name_regex: str, junit: Path, jobs: int = 2,
              label: str | None = None) -> list[TestResult]:
    """Runs the tests whose names match; returns their results (empty if none matched)."""
    junit.parent.mkdir(parents=True, exist_ok=True)
    if junit.exists():
        junit.unlink()
    cmd = ["ctest", "--test-dir", str(build_dir(preset)), "-R", name_regex,
           "-j", str(jobs), "--output-junit", str(junit)]
    if label:
        cmd += ["-L", label]
    env = {}
    if preset == "tsan":
        env["TSAN_OPTIONS"] = "halt_on_error=1 second_deadlock_stack=1"
    elif preset == "asan":
        env["ASAN_OPTIONS"] = "detect_leaks=1"
        env["UBSAN_OPTIONS"] = "print_stacktrace=1 halt_on_error=1"
    result = run(cmd, quiet=True, env=env)
    if not junit.exists():
        raise BuildError(f"ctest produced no report:\n{result.stdout}\n{result.stderr}")
    return parse_junit(junit)


def parse_junit(path: Path) -> list[TestResult]:
    results = []
    for case in ET.parse(path).getroot().iter("testcase"):
        status = case.get("status", "")
        failed = status != "run" or case.find("failure") is not None
        out = case.findtext("system-out") or ""
        results.append(TestResult(case.get("name", ""), not failed, out,
                                  float(case.get("time", "0") or 0)))
    return results
