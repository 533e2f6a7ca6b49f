"""`./workshop grade`: grade the starter code (the student's work) of chosen lessons.

Per lesson and exercise: tests passed/total under g++, and the same tests under ThreadSanitizer.
A lesson's score is 80 % its g++ pass rate and 20 % its TSan pass rate (a test that passes under
g++ but races under TSan loses those points). Writes grade.json, grade.md and grade-junit.xml;
the exit code says whether the total met the threshold."""
from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import build as b
from .lessons import Lesson, UsageError, all_lessons
from .testing import run_lesson_tests, summarise

GPP_WEIGHT, TSAN_WEIGHT = 0.8, 0.2


@dataclass
class ExerciseGrade:
    number: int
    title: str
    passed: int
    total: int
    tsan_passed: int | None  # None when TSan was not run


@dataclass
class LessonGrade:
    number: int
    title: str
    exercises: list[ExerciseGrade] = field(default_factory=list)
    tsan_clean: bool | None = None  # no ThreadSanitizer report in any test
    build_error: str | None = None
    score: float = 0.0  # 0..100


def parse_range(spec: str | None, lessons: list[Lesson]) -> list[Lesson]:
    """'1-4', '2', '0,3,5' or None (all)."""
    if not spec:
        return lessons
    wanted: set[int] = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        try:
            first, last = int(lo), int(hi or lo)
        except ValueError:
            raise UsageError(f"--lessons takes numbers like 1-4 or 0,2; not '{spec}'") from None
        wanted.update(range(first, last + 1))
    known = {l.number for l in lessons}
    unknown = sorted(wanted - known)
    if unknown:
        raise UsageError(f"no lesson {unknown[0]}; the lessons are "
                         + ", ".join(str(n) for n in sorted(known)))
    return [l for l in lessons if l.number in wanted]


def grade_lesson(lesson: Lesson, *, solution: bool, tsan: bool, junit_cases: list) -> LessonGrade:
    grade = LessonGrade(lesson.number, lesson.title)
    try:
        results = run_lesson_tests(lesson, solution=solution, preset="default")
        tsan_results = run_lesson_tests(lesson, solution=solution, preset="tsan") if tsan else []
    except b.BuildError as e:
        grade.build_error = str(e)[-3000:]
        grade.exercises = [ExerciseGrade(ex.number, ex.title, 0, 0, 0 if tsan else None)
                           for ex in lesson.exercises]
        junit_cases.append((f"lesson{lesson.nn}", "build", False, grade.build_error))
        return grade
    tsan_by_ex = {s.number: s for s in summarise(lesson, tsan_results)}
    for s in summarise(lesson, results):
        t = tsan_by_ex.get(s.number)
        grade.exercises.append(ExerciseGrade(s.number, s.title, s.passed, s.total,
                                             t.passed if t else (0 if tsan else None)))
    for r in results:
        junit_cases.append((f"lesson{lesson.nn}", f"{r.suite}.{r.test}", r.passed, r.reason()))
    for r in tsan_results:
        junit_cases.append((f"lesson{lesson.nn}.tsan", f"{r.suite}.{r.test}", r.passed,
                            r.reason()))
    if tsan:
        grade.tsan_clean = not any("WARNING: ThreadSanitizer" in r.output for r in tsan_results)
    total = sum(e.total for e in grade.exercises) or 1
    gpp = sum(e.passed for e in grade.exercises) / total
    if tsan:
        grade.score = 100 * (GPP_WEIGHT * gpp +
                             TSAN_WEIGHT * sum(e.tsan_passed or 0 for e in grade.exercises) / total)
    else:
        grade.score = 100 * gpp
    return grade


def markdown(grades: list[LessonGrade], total: float, threshold: float, what: str) -> str:
    lines = [f"# Grade report ({what})", "",
             f"Total: **{total:.1f} / 100** (pass threshold {threshold:g}): "
             f"**{'PASS' if total >= threshold else 'FAIL'}**", "",
             "| lesson | exercise | tests (g++) | tests (TSan) | score |",
             "| --- | --- | --- | --- | --- |"]
    for g in grades:
        if g.build_error:
            lines.append(f"| {g.number:02d} {g.title} | — | does not build | — | 0.0 |")
            continue
        for i, e in enumerate(g.exercises):
            tsan = "—" if e.tsan_passed is None else f"{e.tsan_passed}/{e.total}"
            score = f"{g.score:.1f}" if i == 0 else ""
            name = f"{g.number:02d} {g.title}" if i == 0 else ""
            lines.append(f"| {name} | {e.number}: {e.title} | {e.passed}/{e.total} | {tsan} | "
                         f"{score} |")
        if g.tsan_clean is not None:
            clean = "yes" if g.tsan_clean else "NO: data races reported"
            lines.append(f"| | TSan clean: {clean} | | | |")
    lines += ["", f"Scoring: each lesson counts equally; within a lesson, {GPP_WEIGHT:.0%} for "
              f"the tests passing under g++ and {TSAN_WEIGHT:.0%} for the same tests passing "
              "under ThreadSanitizer.", ""]
    return "\n".join(lines)


def junit(cases: list) -> ET.ElementTree:
    suites = ET.Element("testsuites")
    by_suite: dict[str, ET.Element] = {}
    for suite_name, name, passed, reason in cases:
        suite = by_suite.get(suite_name)
        if suite is None:
            suite = by_suite[suite_name] = ET.SubElement(suites, "testsuite", name=suite_name)
        case = ET.SubElement(suite, "testcase", classname=suite_name, name=name)
        if not passed:
            ET.SubElement(case, "failure", message=(reason.splitlines() or ["failed"])[0][:200]
                          ).text = reason
    for suite in by_suite.values():
        cases_ = list(suite)
        suite.set("tests", str(len(cases_)))
        suite.set("failures", str(sum(1 for c in cases_ if c.find("failure") is not None)))
    return ET.ElementTree(suites)


def run_grade(spec: str | None, out: Path, *, threshold: float, tsan: bool,
              solution: bool) -> int:
    lessons = parse_range(spec, all_lessons())
    cases: list = []
    grades = []
    for lesson in lessons:
        b.progress(f"grading lesson {lesson.nn} ...")
        grades.append(grade_lesson(lesson, solution=solution, tsan=tsan, junit_cases=cases))
    total = sum(g.score for g in grades) / len(grades)
    what = "reference solutions" if solution else "starter code in lessons/"
    out.mkdir(parents=True, exist_ok=True)
    (out / "grade.json").write_text(json.dumps({
        "graded": what, "time": time.strftime("%Y-%m-%d %H:%M:%S"), "total": round(total, 2),
        "threshold": threshold, "passed": total >= threshold,
        "lessons": [asdict(g) for g in grades]}, indent=2))
    md = markdown(grades, total, threshold, what)
    (out / "grade.md").write_text(md)
    junit(cases).write(out / "grade-junit.xml", encoding="utf-8", xml_declaration=True)
    print(md)
    print(f"reports: {out}/grade.json, grade.md, grade-junit.xml")
    return 0 if total >= threshold else 1
