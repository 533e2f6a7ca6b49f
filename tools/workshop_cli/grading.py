"""`./workshop grade`: grade lessons, one student's checkout, or a whole class.

- `grade [--lessons N]` grades the code of this copy (the starters in lessons/, or with
  --solution the reference), building in build/grade-default and build/grade-tsan.
- `grade --submission PATH` grades a student's checkout from a trusted copy of this tree
  (submission.py): only the lesson's learner_files come from PATH.
- `grade --class DIR` does that for every checkout under DIR (one folder per student) and
  writes gradebook.csv; a student whose code does not build, hangs or crashes gets their row
  and the run goes on.
- `--hidden DIR` adds DIR/NN_topic/*.cpp to the lessons' test programs and
  DIR/NN_topic/model/*.cpp to their explorer programs (in a scratch copy).

A lesson's tests are those of all its test programs: its tests and, when tests/NN_topic/model/
*.cpp exist, its explorer tests (ws_lessonNN_model_tests; suites LessonNNExK like the others):
each is built, listed and run, under g++ and under ThreadSanitizer.

Scoring, the same as the Classroom workflow's points: per exercise 10 points times the share of
its tests that pass under g++ (a test passes only if GoogleTest's report says so, on each of
--repeat runs); per lesson 5 more when every exercise test passes under g++ and under
ThreadSanitizer. Tests in other suites (Lesson05TaskFifo, ...) test given code: reported,
not scored. Warnings are reported and cost nothing. The total is also given in percent, which
--threshold applies to (exit code 0 when it is met)."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from . import build as b, export
from .args import parse_lesson_spec
from .classroom import EXERCISE_POINTS, TSAN_POINTS
from .gtest_run import Outcome, list_tests, not_available_reason, run_tests
from .lessons import (ROOT, Lesson, UsageError, all_lessons, test_programs, test_target,
                      test_targets)
from .submission import (Placed, Workspace, add_hidden_tests, copy_trusted_tree,
                         place_learner_files, snapshot, warnings_in)


@dataclass
class ExerciseGrade:
    number: int
    title: str
    passed: int
    total: int
    tsan_passed: int | None  # None when TSan was not run
    points: float = 0.0
    max_points: int = EXERCISE_POINTS
    skipped: int = 0  # under g++: skipped themselves, checked nothing, scored nothing


@dataclass
class LessonGrade:
    number: int
    title: str
    exercises: list[ExerciseGrade] = field(default_factory=list)
    tsan_clean: bool | None = None   # no ThreadSanitizer report in any test run under it
    tsan_points: float = 0.0
    tsan_max: int = 0
    build_error: str | None = None
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    review: list[str] = field(default_factory=list)
    results: dict[str, Outcome] = field(default_factory=dict)        # g++
    tsan_results: dict[str, Outcome] = field(default_factory=dict)
    given: list[str] = field(default_factory=list)  # tests outside the exercises (not scored)

    @property
    def points(self) -> float:
        return sum(e.points for e in self.exercises) + self.tsan_points

    @property
    def max_points(self) -> int:
        return sum(e.max_points for e in self.exercises) + self.tsan_max

    @property
    def score(self) -> float:  # percent
        return 100 * self.points / self.max_points if self.max_points else 0.0

    @property
    def nn(self) -> str:
        return f"{self.number:02d}"


@dataclass
class Graded:
    """One student's (or this copy's) grade, as the reports show it."""
    what: str
    student: str | None
    lessons: list[LessonGrade]
    started: str
    finished: str = ""
    repeat: int = 1
    tsan: bool = True
    hidden: list[str] = field(default_factory=list)
    threshold: float = 100.0
    error: str | None = None  # the grading itself failed (class runs record it and go on)

    @property
    def points(self) -> float:
        return sum(l.points for l in self.lessons)

    @property
    def max_points(self) -> int:
        return sum(l.max_points for l in self.lessons)

    @property
    def total(self) -> float:  # percent
        return 100 * self.points / self.max_points if self.max_points else 0.0

    @property
    def passed(self) -> bool:
        return self.error is None and round(self.total, 2) >= self.threshold


def now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def parse_range(spec: str | None, lessons: list[Lesson]) -> list[Lesson]:
    """'1-4', '2', '0,3,5' or None (all)."""
    if not spec:
        return lessons
    try:
        wanted = parse_lesson_spec(spec)
    except ValueError as e:
        raise UsageError(f"--lessons: {e}") from None
    return [l for l in lessons if l.number in wanted]


def exercise_of(lesson: Lesson, test: str) -> int | None:
    """The exercise a test counts for (its suite LessonNNExK), or None for given code."""
    suite = test.split(".")[0].split("/")[0]
    m = re.fullmatch(rf"Lesson{lesson.nn}Ex(\d+)", suite)
    if m and any(e.number == int(m.group(1)) for e in lesson.exercises):
        return int(m.group(1))
    return None


def score(lesson: Lesson, grade: LessonGrade, expected: list[str], tsan: bool) -> None:
    """Fills in the exercises' counts and points from grade.results / grade.tsan_results."""
    grade.exercises = []
    grade.given = [t for t in expected if exercise_of(lesson, t) is None]
    grade.tsan_max = TSAN_POINTS if tsan else 0
    for ex in lesson.exercises:
        mine = [t for t in expected if exercise_of(lesson, t) == ex.number]
        # A test this machine cannot run (WS_SKIP_NOT_AVAILABLE_HERE: a kernel facility or a
        # permission is missing, whatever the code) is left out of the total, with a note:
        # it checked nothing, and no submission could have passed it here.
        not_run = [t for t in mine if t in grade.results
                   and grade.results[t].not_available_here]
        for t in not_run:
            grade.notes.append(f"{t} was not run on this machine, so exercise {ex.number} is "
                               "scored without it; missing here: "
                               + not_available_reason(grade.results[t].message))
        mine = [t for t in mine if t not in not_run]
        passed = sum(1 for t in mine if t in grade.results and grade.results[t].passed)
        tsan_passed = (sum(1 for t in mine if t in grade.tsan_results
                           and grade.tsan_results[t].ok("tsan")) if tsan else None)
        skipped = sum(1 for t in mine if t in grade.results
                      and grade.results[t].status == "skipped")
        points = EXERCISE_POINTS * passed / len(mine) if mine else 0.0
        grade.exercises.append(ExerciseGrade(ex.number, ex.title, passed, len(mine), tsan_passed,
                                             round(points, 2), skipped=skipped))
        if not mine and grade.build_error is None:
            grade.notes.append(f"exercise {ex.number} has no tests: it scores nothing")
    scored = [t for t in expected if exercise_of(lesson, t) is not None
              and not (t in grade.results and grade.results[t].not_available_here)]
    if tsan and grade.build_error is None and scored and grade.tsan_clean and all(
            t in grade.tsan_results and grade.tsan_results[t].ok("tsan") and
            grade.results[t].passed for t in scored):
        grade.tsan_points = TSAN_POINTS


# A lesson's expected tests, per test program (lessons.test_programs: "tests", "model_tests"):
# each program runs its own.
Expected = dict[str, list[str]]


def all_tests(expected: Expected) -> list[str]:
    """The tests of all of the lesson's programs, in one list of Suite.Test names (the
    explorer's tests are in the exercises' suites too: LessonNNExK.Explorer...)."""
    return [name for names in expected.values() for name in names]


def in_two_programs(expected: Expected) -> list[str]:
    """The test names that more than one of the lesson's programs lists. Results are kept by
    name, so one program's outcome would silently replace the other's: grading refuses."""
    seen: dict[str, str] = {}
    clashes = []
    for program, names in expected.items():
        for name in names:
            if name in seen and seen[name] != program:
                clashes.append(f"{name} (in {seen[name]} and {program})")
            seen.setdefault(name, program)
    return clashes


def list_program_tests(ws: Workspace, targets: dict[str, str]) -> Expected:
    """What each built program lists (a tree that grades itself). Raises RuntimeError, also
    when two programs list the same test."""
    expected = {program: list_tests(ws.binary("default", target))
                for program, target in targets.items()}
    clashes = in_two_programs(expected)
    if clashes:
        raise RuntimeError("a test name is in two test programs, so one result would replace "
                           "the other: " + "; ".join(clashes))
    return expected


def run_programs(ws: Workspace, preset: str, lesson: Lesson, targets: dict[str, str],
                 tests: Expected, *, repeat: int, jobs: int) -> dict[str, Outcome]:
    """Runs each program's tests (reports in one folder per lesson, emptied first): the
    outcomes of all of them."""
    runs = ws.build_dir(preset) / "test-runs" / lesson.nn
    shutil.rmtree(runs, ignore_errors=True)
    results: dict[str, Outcome] = {}
    for program, names in tests.items():
        results.update(run_tests(ws.binary(preset, targets[program]), names, preset, runs,
                                 repeat=repeat, jobs=jobs))
    return results


def tsan_pass(ws: Workspace, lesson: Lesson, grade: LessonGrade, targets: dict[str, str],
              expected: Expected, *, repeat: int, jobs: int) -> None:
    """Runs under ThreadSanitizer the tests that pass under g++, of every program (the
    explorer's too, as `./workshop check` and the Classroom step do): fills in
    grade.tsan_results and grade.tsan_clean."""
    passing = {program: [t for t in names if grade.results[t].passed]
               for program, names in expected.items()}
    ran, total = len(all_tests(passing)), len(all_tests(expected))
    if not ran:
        grade.notes.append("ThreadSanitizer: not run (no test passes under g++)")
        return
    try:
        ws.build("tsan", list(targets.values()))
    except b.BuildError as e:
        grade.notes.append("the ThreadSanitizer build failed: " +
                           str(e).strip().splitlines()[0][:200])
        return
    grade.tsan_results = run_programs(ws, "tsan", lesson, targets, passing, repeat=repeat,
                                      jobs=jobs)
    grade.tsan_clean = not any("WARNING: ThreadSanitizer" in o.output
                               for o in grade.tsan_results.values())
    if ran < total:
        grade.notes.append(f"ThreadSanitizer: ran the {ran} tests that pass under g++")


def grade_lesson(ws: Workspace, lesson: Lesson, solution: bool, *, expected: Expected | None,
                 tsan: bool, repeat: int, jobs: int, grade: LessonGrade | None = None
                 ) -> LessonGrade:
    """Builds the lesson's test programs (its explorer's too), against the starter or the
    reference, in the workspace's grading builds and runs their tests: the `expected` ones of
    each program (None: whatever the programs list, for a tree that grades itself)."""
    grade = grade or LessonGrade(lesson.number, lesson.title)
    programs = list(expected) if expected is not None else test_programs(lesson, ws.tree)
    targets = {p: test_target(lesson, solution, p) for p in programs}
    try:
        grade.warnings += warnings_in(ws.build("default", list(targets.values())), ws.tree)
    except b.BuildError as e:
        grade.build_error = str(e)[-4000:]
        score(lesson, grade, all_tests(expected or {}), tsan)
        return grade
    if expected is None:
        try:
            expected = list_program_tests(ws, targets)
        except RuntimeError as e:
            grade.build_error = f"the test programs do not list their tests: {e}"
            score(lesson, grade, [], tsan)
            return grade
    grade.results = run_programs(ws, "default", lesson, targets, expected, repeat=repeat,
                                 jobs=jobs)
    if tsan:
        tsan_pass(ws, lesson, grade, targets, expected, repeat=repeat, jobs=jobs)
    score(lesson, grade, all_tests(expected), tsan)
    return grade


# ---------------------------------------------------------------------------------------------
# grading this copy


def grade_here(lessons: list[Lesson], *, solution: bool, tsan: bool, repeat: int, jobs: int,
               threshold: float) -> Graded:
    what = "reference solutions" if solution else "starter code in lessons/"
    graded = Graded(what, None, [], now(), repeat=repeat, tsan=tsan, threshold=threshold)
    ws = Workspace(ROOT, b.BUILD_ROOT)
    for lesson in lessons:
        b.progress(f"grading lesson {lesson.nn} ({what}) ...")
        graded.lessons.append(grade_lesson(ws, lesson, solution, expected=None, tsan=tsan,
                                           repeat=repeat, jobs=jobs))
    graded.finished = now()
    return graded


# ---------------------------------------------------------------------------------------------
# grading from a trusted copy


class TrustedCopy:
    """A scratch copy of this tree, built once with the instructors' code (and hidden tests),
    from which each submission gets a fresh copy."""

    def __init__(self, lessons: list[Lesson], *, hidden: Path | None, tsan: bool,
                 keep_solutions: bool = False):
        self.lessons, self.tsan = lessons, tsan
        self.scratch = Path(tempfile.mkdtemp(prefix="ws-grade-"))
        self.tree = self.scratch / "tree"
        self.pristine = self.scratch / "pristine"
        self.ws = Workspace(self.tree, self.tree / "build")
        self.expected: dict[int, Expected] = {}  # the reference's tests, per lesson
        self.hidden: list[str] = []
        self.fresh = True
        self._prepare(hidden, keep_solutions)

    def _prepare(self, hidden: Path | None, keep_solutions: bool) -> None:
        b.progress(f"grading copy of the instructors' tree in {self.scratch} ...")
        copy_trusted_tree(ROOT, self.tree, export._files(ROOT))
        if hidden is not None:
            self.hidden = add_hidden_tests(hidden, self.tree, self.lessons)
            b.progress(f"hidden tests: {', '.join(self.hidden) or 'none for these lessons'}")
        has_solutions = {l.number: (self.tree / "solutions" / l.folder).is_dir()
                         for l in self.lessons}
        for preset in ("default", "tsan") if self.tsan else ("default",):
            targets = []
            for l in self.lessons:
                targets += test_targets(l, False, self.tree)
                if has_solutions[l.number] and (preset == "default" or keep_solutions):
                    targets += test_targets(l, True, self.tree)
            b.progress(f"building the instructors' code ({preset}) ...")
            try:
                self.ws.build(preset, targets)
            except b.BuildError as e:
                raise b.BuildError("the instructors' tree does not build for grading"
                                   + (" (with the hidden tests)" if self.hidden else "")
                                   + f":\n{e}") from None
        for l in self.lessons:
            self.expected[l.number] = self._reference_tests(l, has_solutions[l.number])
        if not keep_solutions:
            # From here on student code is compiled: it must not be able to #include these.
            shutil.rmtree(self.tree / "solutions", ignore_errors=True)
            snapshot(self.tree, self.pristine)

    def _reference_tests(self, lesson: Lesson, has_solution: bool) -> Expected:
        """What every submission must pass: the tests each of the reference's programs lists
        (the starter's, in an edition without solutions/)."""
        expected: Expected = {}
        for program in test_programs(lesson, self.tree):
            reference = test_target(lesson, has_solution, program)
            try:
                expected[program] = list_tests(self.ws.binary("default", reference))
            except RuntimeError as e:
                raise b.BuildError(f"the instructors' {reference} does not list its tests: "
                                   f"{e}") from None
        clashes = in_two_programs(expected)
        if clashes:
            raise b.BuildError(f"lesson {lesson.nn}: a test name is in two of the instructors' "
                               "test programs, so one result would replace the other: "
                               + "; ".join(clashes))
        return expected

    def fresh_tree(self) -> None:
        if not self.fresh:
            shutil.rmtree(self.tree, ignore_errors=True)
            snapshot(self.pristine, self.tree)
        self.fresh = False

    def grade(self, name: str, submission: Path, *, repeat: int, jobs: int,
              threshold: float) -> Graded:
        graded = Graded(f"submission {submission}", name, [], now(), repeat=repeat,
                        tsan=self.tsan, hidden=self.hidden, threshold=threshold)
        self.fresh_tree()
        for lesson in self.lessons:
            grade = LessonGrade(lesson.number, lesson.title)
            placed = place_learner_files(submission, lesson, self.tree)
            _note_placed(grade, placed)
            expected = self.expected[lesson.number]
            if placed.nothing:
                grade.build_error = (f"not submitted: none of {', '.join(lesson.learner_files)} "
                                     f"is in lessons/{lesson.folder}/")
                score(lesson, grade, all_tests(expected), self.tsan)
            else:
                b.progress(f"  {name}: lesson {lesson.nn} ...")
                grade_lesson(self.ws, lesson, False, expected=expected, tsan=self.tsan,
                             repeat=repeat, jobs=jobs, grade=grade)
            graded.lessons.append(grade)
        graded.finished = now()
        return graded

    def grade_reference(self, *, repeat: int, jobs: int, threshold: float) -> Graded:
        graded = Graded("reference solutions (with the hidden tests)", None, [], now(),
                        repeat=repeat, tsan=self.tsan, hidden=self.hidden, threshold=threshold)
        for lesson in self.lessons:
            graded.lessons.append(grade_lesson(
                self.ws, lesson, True, expected=self.expected[lesson.number], tsan=self.tsan,
                repeat=repeat, jobs=jobs))
        graded.finished = now()
        return graded

    def close(self) -> None:
        if os.environ.get("WS_GRADE_KEEP"):
            b.progress(f"kept the grading copy: {self.scratch}")
            return
        shutil.rmtree(self.scratch, ignore_errors=True)


def _note_placed(grade: LessonGrade, placed: Placed) -> None:
    for rel in placed.missing:
        grade.notes.append(f"{rel} is not in the submission: the starter's was used")
    grade.notes += placed.refused
    grade.review += placed.review


def lessons_in(folders: list[Path], lessons: list[Lesson]) -> list[Lesson]:
    return [l for l in lessons if any((f / "lessons" / l.folder).is_dir() for f in folders)]


def students_in(class_dir: Path) -> list[tuple[str, Path]]:
    return [(p.name, p) for p in sorted(class_dir.iterdir())
            if p.is_dir() and not p.name.startswith(".")]


# ---------------------------------------------------------------------------------------------
# the command


def run_grade(spec: str | None, out: Path, *, threshold: float, tsan: bool, solution: bool,
              submission: Path | None = None, class_dir: Path | None = None,
              hidden: Path | None = None, repeat: int = 1, jobs: int = 2) -> int:
    from . import gradebook
    lessons = all_lessons()
    if submission is not None or class_dir is not None:
        if solution:
            raise UsageError("--solution grades the reference; --submission and --class grade "
                             "students: choose one")
        folders = [submission] if submission is not None else \
            [p for _, p in students_in(class_dir)]
        chosen = parse_range(spec, lessons) if spec else lessons_in(folders, lessons)
        if not chosen:
            raise UsageError("no lesson to grade: the checkout has none of the lessons' folders "
                             "(lessons/NN_topic); name them with --lessons")
    else:
        chosen = parse_range(spec, lessons)
    if not chosen:
        raise UsageError("no lesson to grade")
    gradebook.prepare_output(out)
    started = time.monotonic()

    if submission is None and class_dir is None and hidden is None:
        graded = grade_here(chosen, solution=solution, tsan=tsan, repeat=repeat, jobs=jobs,
                            threshold=threshold)
        return gradebook.finish_one(graded, out)

    copy = TrustedCopy(chosen, hidden=hidden, tsan=tsan, keep_solutions=solution)
    try:
        if submission is None and class_dir is None:  # --hidden alone: this copy's code
            if solution:
                graded = copy.grade_reference(repeat=repeat, jobs=jobs, threshold=threshold)
            else:
                graded = copy.grade("this copy", ROOT, repeat=repeat, jobs=jobs,
                                    threshold=threshold)
                graded.what = "starter code in lessons/ (with the hidden tests)"
            return gradebook.finish_one(graded, out)
        if submission is not None:
            graded = copy.grade(submission.name, submission, repeat=repeat, jobs=jobs,
                                threshold=threshold)
            return gradebook.finish_one(graded, out)
        rows = []
        for name, path in students_in(class_dir):
            b.progress(f"grading {name} ...")
            try:
                graded = copy.grade(name, path, repeat=repeat, jobs=jobs, threshold=threshold)
            except Exception as e:  # one student's trouble never stops the class
                graded = Graded(f"submission {path}", name, [], now(), repeat=repeat,
                                tsan=tsan, threshold=threshold,
                                error=f"grading failed: {type(e).__name__}: {e}")
                copy.fresh = False
            gradebook.write_reports(graded, out / gradebook.safe_name(name))
            rows.append(graded)
            gradebook.write_gradebook(rows, chosen, out)  # after each student: never lost
            b.progress(f"  {name}: {graded.points:.2f} / {graded.max_points} points"
                       + (f" ({graded.error})" if graded.error else ""))
        path = gradebook.write_gradebook(rows, chosen, out)
        print(gradebook.class_summary(rows))
        print(f"gradebook: {path}; each student's reports in {out}/<student>/ "
              f"({time.monotonic() - started:.0f} s)")
        return 0 if all(r.error is None for r in rows) else 1
    finally:
        copy.close()
