"""A test that this machine or build cannot run (WS_SKIP_NOT_AVAILABLE_HERE: a kernel facility
or a permission is missing, e.g. perf events in a container) is not run, not failed: `./workshop
test` does not fail for it and grading leaves it out of the exercise's total. Any other skip
under g++ still checks nothing and fails the run. Fast: no build, fake results."""
import contextlib
import io
import sys
import unittest
from unittest import mock
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from workshop_cli import grading, testing  # noqa: E402
from workshop_cli.ctest import TestResult  # noqa: E402
from workshop_cli.gtest_run import Outcome  # noqa: E402
from workshop_cli.lessons import find_lesson  # noqa: E402

LESSON = find_lesson("4")
WATCHED = "Lesson04Ex5.WaitIdleWaitsForAParentWhoseChildIsStolenAsItIsPushed"
OTHER = "Lesson04Ex5.TheSpawnTreeCountsExactly"
WHY = "perf_event_open: Operation not permitted (seccomp?)"


def result(name: str, *, skipped_with: str | None = None) -> TestResult:
    output = "[ RUN      ] " + name + "\n"
    if skipped_with is not None:
        output += f"test_ex5.cpp:96: Skipped\n{skipped_with}\n\n[  SKIPPED ] {name} (0 ms)\n"
    return TestResult(f"lesson04.starter.{name}", True, output, 0.1,
                      skipped=skipped_with is not None)


class WorkshopTestTest(unittest.TestCase):
    def run_test(self, results: list[TestResult], preset: str = "default") -> tuple[int, str]:
        out = io.StringIO()
        with mock.patch.object(testing, "run_lesson_tests", return_value=results), \
                mock.patch.object(testing, "record_status"), contextlib.redirect_stdout(out):
            code = testing.run_test(LESSON, exercise=5, preset=preset)
        return code, out.getvalue()

    def test_a_test_this_machine_cannot_run_is_not_counted_and_does_not_fail_the_run(self):
        code, out = self.run_test([result(OTHER),
                                   result(WATCHED, skipped_with=f"not available here: {WHY}")])
        self.assertEqual(code, 0, out)
        self.assertIn("1/1 tests pass, 1 not run here", out)
        self.assertIn(f"{WATCHED} not run on this machine, so not counted; missing here: {WHY}",
                      out)
        self.assertIn("tests: 1 passed, 1 not run on this machine, 0 failed", out)

    def test_any_other_skip_still_fails_the_run(self):
        code, out = self.run_test([result(OTHER),
                                   result(WATCHED, skipped_with="needs Linux (/proc)")])
        self.assertEqual(code, 1, out)
        self.assertIn("1/2 tests pass, 1 skipped", out)
        self.assertIn("tests: 1 passed, 1 skipped (not checked), 0 failed", out)

    def test_a_failure_is_still_a_failure(self):
        failed = TestResult(f"lesson04.starter.{WATCHED}", False, "x.cpp:1: Failure\nboom\n", 0.1)
        code, out = self.run_test([result(OTHER), failed])
        self.assertEqual(code, 1, out)
        self.assertIn("tests: 1 passed, 1 failed", out)


class GradingTest(unittest.TestCase):
    def grade(self, watched: Outcome) -> grading.LessonGrade:
        grade = grading.LessonGrade(LESSON.number, LESSON.title)
        grade.results = {OTHER: Outcome(OTHER, "passed", "", 0.1, 1), WATCHED: watched}
        grade.tsan_results = {OTHER: Outcome(OTHER, "passed", "", 0.1, 1)}
        grade.tsan_clean = True
        grading.score(LESSON, grade, [OTHER, WATCHED], tsan=True)
        return grade

    def exercise_5(self, grade: grading.LessonGrade) -> grading.ExerciseGrade:
        return next(e for e in grade.exercises if e.number == 5)

    def test_a_test_this_machine_cannot_run_is_left_out_of_the_total(self):
        message = f"test_ex5.cpp:96\nnot available here: {WHY}"
        grade = self.grade(Outcome(WATCHED, "skipped", f"skipped: {message}", 0.1, 1,
                                   message=message))
        ex5 = self.exercise_5(grade)
        self.assertEqual((ex5.passed, ex5.total, ex5.points), (1, 1, grading.EXERCISE_POINTS))
        self.assertIn(f"{WATCHED} was not run on this machine, so exercise 5 is scored without "
                      f"it; missing here: {WHY}", grade.notes)
        self.assertEqual(grade.tsan_points, grading.TSAN_POINTS)

    def test_any_other_skip_scores_nothing(self):
        message = "test_ex5.cpp:96\nneeds Linux (/proc)"
        grade = self.grade(Outcome(WATCHED, "skipped", f"skipped: {message}", 0.1, 1,
                                   message=message))
        ex5 = self.exercise_5(grade)
        self.assertEqual((ex5.passed, ex5.total, ex5.skipped), (1, 2, 1))
        self.assertEqual(ex5.points, grading.EXERCISE_POINTS / 2)
        self.assertEqual(grade.tsan_points, 0)


class HeaderTest(unittest.TestCase):
    def test_the_macro_writes_the_words_the_tool_looks_for(self):
        header = (ROOT / "common/include/ws/testing/harness.hpp").read_text()
        self.assertIn('GTEST_SKIP() << "not available here: " << why', header)
        self.assertEqual(grading.not_available_reason("x\nnot available here: y\n"), "y")


if __name__ == "__main__":
    unittest.main()
