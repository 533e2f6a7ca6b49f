"""`./workshop test`: build one lesson's tests, run them, and summarise them per exercise."""
from __future__ import annotations

import json
import re
import time
import tomllib
from dataclasses import dataclass, field

from . import build as b
from .ctest import TestResult, run_ctest
from .export import is_student_edition
from .gtest_run import not_available_reason, says_not_available
from .lessons import ROOT, Lesson, UsageError, test_targets

STATUS_FILE = ROOT / ".workshop" / "status.json"


@dataclass
class ExerciseSummary:
    number: int
    title: str
    passed: int
    total: int
    failures: list[TestResult]
    given: int = 0          # tests of given code (lesson.toml's given_tests), not counted above
    given_failing: int = 0  # of those, failing: the learner broke something that worked
    # Tests that skipped themselves (GTEST_SKIP) in a build where a skip is no pass (g++, see
    # counts_as_passed): nothing was checked, so they count as neither passed nor failed, and
    # the exercise is not done.
    skipped: list[TestResult] = field(default_factory=list)
    # Tests that this machine or build cannot run (WS_SKIP_NOT_AVAILABLE_HERE): not counted in
    # passed or total, and no reason for a failing exit.
    not_run: list[TestResult] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.passed == self.total and self.given_failing == 0


def given_tests(lesson: Lesson) -> set[str]:
    """Suite.Test names that check code the starter already holds (lesson.toml's given_tests):
    they pass before any work, so they say nothing about an exercise being done, only that
    it did not break what was given."""
    path = ROOT / "lessons" / lesson.folder / "lesson.toml"
    try:
        return set(tomllib.loads(path.read_text()).get("given_tests", []))
    except (OSError, tomllib.TOMLDecodeError):
        return set()


def name_regex(lesson: Lesson, solution: bool, exercise: int | None) -> str:
    kind = "solution" if solution else "starter"
    suite = rf"Lesson{lesson.nn}Ex{exercise}\." if exercise is not None else ""
    return rf"^lesson{lesson.nn}\.{kind}\.{suite}"


def run_lesson_tests(lesson: Lesson, *, solution: bool, preset: str,
                     exercise: int | None = None, jobs: int = 2) -> list[TestResult]:
    # All of the lesson's test programs, the explorer's too: CTest would otherwise run an
    # explorer program built before the learner's last edit, or none.
    b.build(preset, test_targets(lesson, solution))
    kind = "solution" if solution else "starter"
    junit = b.build_dir(preset) / "reports" / f"lesson{lesson.nn}-{kind}.xml"
    return run_ctest(preset, name_regex(lesson, solution, exercise), junit, jobs=jobs)


def counts_as_passed(result: TestResult, preset: str) -> bool:
    """Passed. A test that skipped itself checked nothing: it counts only under a sanitizer,
    where the reference skips the same tests (those that replace operator new), as in grading
    (gtest_run.Outcome.ok)."""
    return result.passed and (not result.skipped or preset != "default")


def skipped_here_by_the_machine(result: TestResult, preset: str) -> bool:
    """Left out of the counts: a not_available_here skip in a build where a skip is no pass
    (under a sanitizer every skip counts as passed, as before)."""
    return preset == "default" and not_available_here(result)


def not_available_here(result: TestResult) -> bool:
    """A skip because this machine or build lacks what the test needs (a kernel facility, a
    permission; WS_SKIP_NOT_AVAILABLE_HERE): not run here, so neither a pass nor a failure."""
    return result.skipped and says_not_available(result.output)


def skipped_here(result: TestResult, preset: str) -> bool:
    """A skip that does not count as a pass in this build (see counts_as_passed), and is not
    one this machine cannot run (not_available_here)."""
    return result.skipped and not counts_as_passed(result, preset) and \
        not not_available_here(result)


def skip_reason(result: TestResult) -> str:
    """What a skipped test said (GTEST_SKIP's message: the lines after 'file:line: Skipped')."""
    lines = result.output.splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith(": Skipped"):
            said = []
            for text in lines[i + 1:]:
                if text.startswith("[") or not text.strip():
                    break
                said.append(text.strip())
            if said:
                return " ".join(said)
    return "skipped (no reason given)"


def summarise(lesson: Lesson, results: list[TestResult],
              preset: str = "default") -> list[ExerciseSummary]:
    given = given_tests(lesson)
    out = []
    for ex in lesson.exercises:
        mine = [r for r in results if r.exercise == ex.number]
        if not mine:
            continue
        not_run = [r for r in mine if skipped_here_by_the_machine(r, preset)]
        own = [r for r in mine if f"{r.suite}.{r.test}" not in given and r not in not_run]
        kept = [r for r in mine if f"{r.suite}.{r.test}" in given and r not in not_run]
        out.append(ExerciseSummary(ex.number, ex.title,
                                   sum(counts_as_passed(r, preset) for r in own), len(own),
                                   [r for r in mine if not r.passed], len(kept),
                                   sum(not counts_as_passed(r, preset) for r in kept),
                                   [r for r in mine if skipped_here(r, preset)], not_run))
    return out


NOT_IMPLEMENTED = re.compile(r"not implemented yet: lesson (\d+), exercise (\d+): ([^\"\n]+)")


def explain(result: TestResult, exercise: int) -> str:
    """Why a test failed, in the learner's terms: a test of exercise K that stopped at the
    unfinished code of exercise J < K says so in one line, not as a C++ exception dump."""
    reason = result.reason()
    m = NOT_IMPLEMENTED.search(reason)
    if m and int(m.group(2)) != exercise and "[watchdog]" not in reason:
        return f"needs exercise {int(m.group(2))} first (not implemented yet: {m.group(3)})"
    return reason


def print_report(lesson: Lesson, summaries: list[ExerciseSummary], *, what: str,
                 verbose: bool, other: list[TestResult]) -> None:
    print(f"\nlesson {lesson.nn}: {lesson.title} ({what})")
    width = max((len(s.title) for s in summaries), default=10) + 4
    failing_before: list[int] = []
    done = sum(s.done for s in summaries)
    print(f"  {done} of {len(summaries)} exercises done")
    for s in summaries:
        mark = "ok  " if s.done else "FAIL"
        kept = ""
        if s.given:
            kept = (f"  (+{s.given} given: pass from the start)" if not s.given_failing else
                    f"  ({s.given_failing} of {s.given} given tests now FAIL: what worked broke)")
        skips = f", {len(s.skipped)} skipped" if s.skipped else ""
        skips += f", {len(s.not_run)} not run here" if s.not_run else ""
        print(f"  {mark} exercise {s.number}: {s.title:<{width}} {s.passed}/{s.total} tests "
              f"pass{skips}{kept}")
        shown = s.failures if verbose else s.failures[:2]
        for r in shown:
            print(f"         x {r.suite}.{r.test}")
            for line in explain(r, s.number).splitlines():
                print(f"             {line}")
        for r in s.skipped:
            print(f"         - {r.suite}.{r.test} skipped, so not checked: {skip_reason(r)}")
        for r in s.not_run:
            print(f"         - {r.suite}.{r.test} not run on this machine, so not counted; "
                  f"missing here: {not_available_reason(skip_reason(r))}")
        hung = any("[watchdog]" in r.output for r in s.failures)
        if hung and failing_before:
            earlier = ", ".join(str(n) for n in failing_before)
            print(f"         note: these tests also run the code of exercise {earlier}, which "
                  "fails too: a hang here often comes from there, so start with it")
        if not s.done:
            failing_before.append(s.number)
        if len(shown) < len(s.failures):
            print(f"         ... and {len(s.failures) - len(shown)} more failing "
                  f"(--verbose shows them all)")
    logs = {r.log.parent for r in [*other, *(f for s in summaries for f in s.failures)]
            if r.log is not None}
    for folder in sorted(logs):
        shown = folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder
        print(f"  the whole output of each failed test: {shown}/<test name>.log")
    broken = [r for r in other if not r.passed]
    if broken:
        print("  tests outside the exercises failed:")
        for r in broken:
            print(f"         x {r.name}\n             " + r.reason().replace("\n", "\n             "))


COMPILER = {"default": "g++", "tsan": "clang ThreadSanitizer", "asan": "clang AddressSanitizer"}


def run_test(lesson: Lesson, exercise: int | None = None, solution: bool = False,
             preset: str = "default", verbose: bool = False, jobs: int = 2) -> int:
    """`./workshop test` (and each run of `./workshop watch`): builds and runs the lesson's
    tests, prints them per exercise, records the result; the exit code: 0 if all passed."""
    if exercise is not None:
        lesson.exercise(exercise)
    if solution and is_student_edition():
        raise UsageError("this is the student edition: it has no solutions/ to test")
    kind = "solution" if solution else "starter"
    where = "solutions" if solution else "lessons"
    b.progress(f"building lesson {lesson.nn} ({where}/{lesson.folder}, {preset} build) ...")
    results = run_lesson_tests(lesson, solution=solution, preset=preset, exercise=exercise,
                               jobs=jobs)
    if not results:
        raise UsageError(f"no tests matched lesson {lesson.nn}"
                         + (f" exercise {exercise}" if exercise else ""))
    summaries = summarise(lesson, results, preset)
    other = [r for r in results if r.exercise is None]
    print_report(lesson, summaries, what=f"{kind} code, {COMPILER[preset]}", verbose=verbose,
                 other=other)
    record_status(lesson, kind, preset, summaries)
    # A skip that checked nothing is no pass: the exit code (a Classroom step's points) says so.
    # A test this machine cannot run (skipped_here_by_the_machine) is no failure either.
    ok = all(counts_as_passed(r, preset) or skipped_here_by_the_machine(r, preset)
             for r in results)
    passed = sum(counts_as_passed(r, preset) for r in results)
    skipped = sum(skipped_here(r, preset) for r in results)
    not_run = sum(skipped_here_by_the_machine(r, preset) for r in results)
    first = next((s for s in summaries if not s.done), None)
    if not ok and not solution and first is not None:
        needed = [int(m.group(2)) for r in first.failures
                  if (m := NOT_IMPLEMENTED.search(r.reason()))]
        start = min([first.number, *needed])
        print(f"\nstuck? ./workshop hint {lesson.number} {start}")
    skips = f", {skipped} skipped (not checked)" if skipped else ""
    skips += f", {not_run} not run on this machine" if not_run else ""
    print(f"\ntests: {passed} passed{skips}, {len(results) - passed - skipped - not_run} failed")
    return 0 if ok else 1


def record_status(lesson: Lesson, kind: str, preset: str,
                  summaries: list[ExerciseSummary]) -> None:
    """Remembers the last result per lesson, kind and build, for `./workshop status`."""
    STATUS_FILE.parent.mkdir(exist_ok=True)
    try:
        data = json.loads(STATUS_FILE.read_text())
    except (OSError, ValueError):
        data = {}
    entry = data.setdefault(f"{lesson.nn}/{kind}/{preset}", {"exercises": {}})
    entry["time"] = time.strftime("%Y-%m-%d %H:%M:%S")
    # given tests included: an exercise is done when every one of its tests passes
    entry["exercises"].update({str(s.number): [s.passed + s.given - s.given_failing,
                                               s.total + s.given] for s in summaries})
    STATUS_FILE.write_text(json.dumps(data, indent=2, sort_keys=True))


def load_status() -> dict:
    try:
        return json.loads(STATUS_FILE.read_text())
    except (OSError, ValueError):
        return {}
