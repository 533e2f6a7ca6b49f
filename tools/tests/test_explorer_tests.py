"""A lesson's explorer tests (tests/NN_topic/model/*.cpp, the program ws_lessonNN_model_tests)
are its tests like any other: `./workshop test`, grading and the Classroom build build them,
and grading runs and scores them. Fast (about a second): the builds are recorded, not run, and
the test programs are small Python scripts that answer like GoogleTest programs."""
import re
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from workshop_cli import args, classroom, gradebook, grading, submission, testing  # noqa: E402
from workshop_cli.lessons import UsageError, all_lessons, find_lesson, test_targets  # noqa: E402

# A GoogleTest program as grading uses one: --gtest_list_tests, or one test by --gtest_filter
# with its XML report. TESTS: Suite.Test -> whether it passes.
PROGRAM = '''#!{python}
import re
import sys
TESTS = {tests!r}
args = sys.argv[1:]
if "--gtest_list_tests" in args:
    suites = {{}}
    for name in TESTS:
        suite, test = name.split(".")
        suites.setdefault(suite, []).append(test)
    for suite, tests in suites.items():
        print(suite + ".")
        print("".join("  " + t + "\\n" for t in tests), end="")
    sys.exit(0)
name = next(a for a in args if a.startswith("--gtest_filter=")).split("=", 1)[1]
xml = next(a for a in args if a.startswith("--gtest_output=xml:")).split(":", 1)[1]
suite, test = name.split(".")
failure = "" if TESTS[name] else '<failure message="explorer.cpp:9&#x0A;lost an item"/>'
with open(xml, "w") as f:
    f.write(f'<testsuites><testsuite name="{{suite}}"><testcase name="{{test}}" '
            f'classname="{{suite}}" status="run" result="completed">{{failure}}</testcase>'
            '</testsuite></testsuites>')
sys.exit(0 if TESTS[name] else 1)
'''

LESSON = find_lesson("4")
PLAIN = "Lesson04Ex2.OwnerAndThiefShareTheWork"
EXPLORER = "Lesson04Ex2.ExplorerOwnerAndThiefRaceForTheLastItem"


class FakeWorkspace:
    """A grading workspace whose builds are recorded and whose programs are PROGRAM scripts:
    `programs` maps a target to its tests (Suite.Test -> passes)."""

    def __init__(self, base: Path, programs: dict[str, dict[str, bool]]):
        self.tree, self.base, self.built = base / "tree", base, {}
        model = self.tree / "tests" / LESSON.folder / "model"
        model.mkdir(parents=True)
        (model / "test_ex2_explorer.cpp").write_text("// scenarios\n")
        for target, tests in programs.items():
            for preset in ("default", "tsan"):
                exe = self.binary(preset, target)
                exe.parent.mkdir(parents=True, exist_ok=True)
                exe.write_text(PROGRAM.format(python=sys.executable, tests=tests))
                exe.chmod(0o755)

    def build_dir(self, preset: str) -> Path:
        return self.base / f"grade-{preset}"

    def binary(self, preset: str, target: str) -> Path:
        return self.build_dir(preset) / target

    def build(self, preset: str, targets: list[str]) -> str:
        self.built.setdefault(preset, []).extend(targets)
        return ""


class TargetsTest(unittest.TestCase):
    def test_a_lesson_with_a_model_folder_has_the_model_program_too(self):
        for lesson in all_lessons():
            model = any((ROOT / "tests" / lesson.folder / "model").glob("*.cpp"))
            for solution, lib in ((False, f"ws_lesson{lesson.nn}"),
                                  (True, f"ws_lesson{lesson.nn}_solution")):
                self.assertEqual(test_targets(lesson, solution),
                                 [f"{lib}_tests"] + ([f"{lib}_model_tests"] if model else []),
                                 lesson.folder)
        self.assertIn("ws_lesson04_model_tests", test_targets(LESSON, False))

    def test_a_model_folder_without_a_cpp_file_is_no_program(self):
        with tempfile.TemporaryDirectory() as tmp:
            model = Path(tmp) / "tests" / LESSON.folder / "model"
            model.mkdir(parents=True)
            (model / "scenarios.hpp").write_text("#pragma once\n")
            self.assertEqual(test_targets(LESSON, False, Path(tmp)), ["ws_lesson04_tests"])
            (model / "test_ex2_explorer.cpp").write_text("\n")
            self.assertEqual(test_targets(LESSON, False, Path(tmp)),
                             ["ws_lesson04_tests", "ws_lesson04_model_tests"])

    def test_workshop_test_builds_both_programs(self):
        """Else CTest runs no explorer test, or one built before the learner's last edit."""
        for solution in (False, True):
            with mock.patch.object(testing.b, "build") as build, \
                    mock.patch.object(testing, "run_ctest", return_value=[]) as run:
                testing.run_lesson_tests(LESSON, solution=solution, preset="default",
                                         exercise=2)
            build.assert_called_once_with("default", test_targets(LESSON, solution))
            self.assertIn(r"Lesson04Ex2\.", run.call_args.args[1])

    def test_the_classroom_build_builds_both_programs(self):
        text = classroom.workflow([LESSON], single_lesson=True)
        for target in ("ws_lesson04_tests", "ws_lesson04_model_tests"):
            self.assertEqual(text.count(f"--target {target}"), 2, target)  # g++ and TSan
        self.assertNotIn("--target ws_lesson01_model_tests",
                         classroom.workflow([find_lesson("1")], single_lesson=True))


class GradingTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ws-explorer-grading-")
        self.addCleanup(self.tmp.cleanup)

    def workspace(self, explorer_passes: bool) -> FakeWorkspace:
        return FakeWorkspace(Path(self.tmp.name), {
            "ws_lesson04_tests": {PLAIN: True},
            "ws_lesson04_model_tests": {EXPLORER: explorer_passes},
            "ws_lesson04_solution_tests": {PLAIN: True},
            "ws_lesson04_solution_model_tests": {EXPLORER: True}})

    def grade(self, ws: FakeWorkspace, expected=None, tsan=False) -> grading.LessonGrade:
        return grading.grade_lesson(ws, LESSON, False, expected=expected, tsan=tsan, repeat=1,
                                    jobs=2)

    def exercise_2(self, grade: grading.LessonGrade) -> grading.ExerciseGrade:
        return next(e for e in grade.exercises if e.number == 2)

    def test_a_failing_explorer_test_costs_its_exercises_points(self):
        ws = self.workspace(explorer_passes=False)
        grade = self.grade(ws)
        self.assertEqual(ws.built["default"], ["ws_lesson04_tests", "ws_lesson04_model_tests"])
        self.assertEqual(sorted(grade.results), sorted([PLAIN, EXPLORER]))
        self.assertEqual(grade.results[EXPLORER].status, "failed")
        ex2 = self.exercise_2(grade)
        self.assertEqual((ex2.passed, ex2.total, ex2.points),
                         (1, 2, grading.EXERCISE_POINTS / 2))
        text = gradebook.markdown(grading.Graded("test", None, [grade], "now"))
        self.assertIn(EXPLORER, text)

    def test_a_passing_explorer_test_counts_and_runs_under_tsan_too(self):
        ws = self.workspace(explorer_passes=True)
        grade = self.grade(ws, tsan=True)
        ex2 = self.exercise_2(grade)
        self.assertEqual((ex2.passed, ex2.total, ex2.tsan_passed, ex2.points),
                         (2, 2, 2, grading.EXERCISE_POINTS))
        self.assertEqual(ws.built["tsan"], ["ws_lesson04_tests", "ws_lesson04_model_tests"])
        self.assertEqual(sorted(grade.tsan_results), sorted([PLAIN, EXPLORER]))
        self.assertTrue(grade.tsan_clean)

    def test_a_failing_explorer_test_costs_the_tsan_points(self):
        grade = self.grade(self.workspace(explorer_passes=False), tsan=True)
        self.assertEqual(sorted(grade.tsan_results), [PLAIN])  # what passed under g++
        self.assertEqual(grade.tsan_points, 0)
        self.assertIn("ThreadSanitizer: ran the 1 tests that pass under g++", grade.notes)

    def test_a_submission_must_pass_the_reference_explorer_tests(self):
        """The expected lists come from both of the reference's programs; a submission whose
        explorer program lacks a test, or fails it, scores nothing for it."""
        ws = self.workspace(explorer_passes=False)
        copy = grading.TrustedCopy.__new__(grading.TrustedCopy)
        copy.tree, copy.ws = ws.tree, ws
        expected = copy._reference_tests(LESSON, has_solution=True)
        self.assertEqual(expected, {"tests": [PLAIN], "model_tests": [EXPLORER]})
        self.assertEqual(self.exercise_2(self.grade(ws, expected)).passed, 1)
        missing = {**expected, "model_tests": [EXPLORER, "Lesson04Ex3.ExplorerHidden"]}
        grade = self.grade(ws, missing)
        self.assertEqual(grade.results["Lesson04Ex3.ExplorerHidden"].status, "crashed")
        ex3 = next(e for e in grade.exercises if e.number == 3)
        self.assertEqual((ex3.passed, ex3.total), (0, 1))


    def test_a_test_name_in_both_programs_is_refused(self):
        """Results are kept by name: one program's outcome would silently replace the other's."""
        ws = FakeWorkspace(Path(self.tmp.name), {
            "ws_lesson04_tests": {PLAIN: True, EXPLORER: True},
            "ws_lesson04_model_tests": {EXPLORER: False},
            "ws_lesson04_solution_tests": {PLAIN: True, EXPLORER: True},
            "ws_lesson04_solution_model_tests": {EXPLORER: True}})
        grade = self.grade(ws)
        self.assertIn(f"{EXPLORER} (in tests and model_tests)", grade.build_error or "")
        self.assertEqual(grade.results, {})
        copy = grading.TrustedCopy.__new__(grading.TrustedCopy)
        copy.tree, copy.ws = ws.tree, ws
        with self.assertRaisesRegex(grading.b.BuildError, "two of the instructors' test progr"):
            copy._reference_tests(LESSON, has_solution=True)


class NamesTest(unittest.TestCase):
    def test_no_lesson_has_a_test_name_in_both_of_its_programs(self):
        """The same rule on this tree's sources, so a clash is found before anyone grades."""
        test = re.compile(r"^\s*TEST(?:_F)?\(\s*(\w+)\s*,\s*(\w+)\s*\)", re.M)

        def names(folder: Path) -> set[str]:
            return {f"{s}.{t}" for f in folder.glob("*.cpp") for s, t in
                    test.findall(f.read_text())}
        checked = 0
        for lesson in all_lessons():
            folder = ROOT / "tests" / lesson.folder
            model = names(folder / "model")
            if model:
                checked += 1
                self.assertEqual(names(folder) & model, set(), lesson.folder)
        self.assertGreaterEqual(checked, 4)  # lessons 04, 05, 06, 08 at least


class HiddenTestsTest(unittest.TestCase):
    def test_hidden_explorer_tests_go_into_the_model_program(self):
        with tempfile.TemporaryDirectory() as tmp:
            hidden, tree = Path(tmp) / "hidden", Path(tmp) / "tree"
            (hidden / LESSON.folder / "model").mkdir(parents=True)
            (hidden / LESSON.folder / "hidden_ex2.cpp").write_text("// plain\n")
            (hidden / LESSON.folder / "model" / "hidden_ex2_explorer.cpp").write_text("// x\n")
            (tree / "tests" / LESSON.folder).mkdir(parents=True)
            self.assertEqual(test_targets(LESSON, False, tree), ["ws_lesson04_tests"])
            added = submission.add_hidden_tests(hidden, tree, [LESSON])
            self.assertEqual(added, [f"tests/{LESSON.folder}/hidden_ex2.cpp",
                                     f"tests/{LESSON.folder}/model/hidden_ex2_explorer.cpp"])
            self.assertTrue((tree / added[1]).is_file())
            self.assertEqual(test_targets(LESSON, False, tree),
                             ["ws_lesson04_tests", "ws_lesson04_model_tests"])
            (hidden / LESSON.folder / "hidden_ex2.cpp").unlink()  # only the model file clashes
            with self.assertRaisesRegex(UsageError, "name of a public test file .*model/"):
                submission.add_hidden_tests(hidden, tree, [LESSON])
            # A folder of explorer tests only is a valid --hidden argument.
            self.assertEqual(args.hidden_dir(str(hidden)), hidden)


if __name__ == "__main__":
    unittest.main()
