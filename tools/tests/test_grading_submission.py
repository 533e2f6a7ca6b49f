"""Grading students' checkouts from a trusted copy (`./workshop grade --class/--submission`).

SLOW (about a minute and a half on 2 cores): one `grade --class` run over eleven checkouts of a
lesson 01 export (one grading copy built once, each student built incrementally), and one
`grade --submission --repeat 2`. Lesson 01 only, without ThreadSanitizer (test_classroom.py's
GradeTest covers the TSan run on lesson 00)."""
import csv
import json
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from workshop_cli import submission  # noqa: E402
from workshop_cli.lessons import find_lesson  # noqa: E402

LESSON = "01_shared_queue"
SOLUTION = ROOT / "solutions" / LESSON / "thread_pool.cpp"

EXIT_CHEAT = """
// A cheat: end the process with 0 unless the test program is only listing its tests.
#include <unistd.h>
#include <fstream>
#include <iterator>
#include <string>
namespace {
struct ExitUnlessListing {
    ExitUnlessListing() {
        std::ifstream f("/proc/self/cmdline");
        std::string args((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        if (args.find("--gtest_list_tests") == std::string::npos) _exit(0);
    }
} exit_unless_listing;
}  // namespace
"""

# Dropped into the lesson folder, which is on the include path before GoogleTest's: every TEST
# body becomes a function nobody calls, so every test passes. (In the student's own build it
# does: ./workshop test 1 then reports 18 of 18 on the untouched starter.)
SHADOW_GTEST = """// A cheat: shadows GoogleTest's header.
#pragma once
#pragma GCC system_header
#include_next <gtest/gtest.h>
#undef TEST
#define TEST(suite, name)                                                              \\
    GTEST_TEST_(suite, name, ::testing::Test, ::testing::internal::GetTestTypeId()) {}  \\
    [[maybe_unused]] static void suite##_##name##_never_run()
"""

HIDDEN = """// A hidden test: only the instructors' grading copy has it.
#include <gtest/gtest.h>

#include <atomic>

#include "exercises.hpp"
#include "thread_pool.hpp"

TEST(Lesson01Ex2, HiddenWaitIdleTwiceInARow) {
    ws::lesson01::ThreadPool pool(2);
    std::atomic<int> ran{0};
    for (int i = 0; i < 100; ++i) pool.spawn([&] { ran.fetch_add(1); });
    pool.wait_idle();
    pool.wait_idle();
    EXPECT_EQ(ran.load(), 100);
}

TEST(Lesson01Given, HiddenPoolHasItsWorkers) {
    ws::lesson01::ThreadPool pool(3);
    EXPECT_EQ(pool.num_workers(), 3u);
}
"""


def workshop(*args, cwd=ROOT, timeout=900):
    return subprocess.run([sys.executable, str(Path(cwd) / "workshop"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def without_exercise_4(code: str) -> str:
    """The reference with exercise 4 taken out: a task's exception escapes the worker."""
    catch = """    try {
        task();
    } catch (...) {
        error = std::current_exception();  // never let it escape: it would kill the worker
    }
"""
    assert catch in code, "the reference's run_task changed: update this test"
    return code.replace(catch, "    task();\n")


def public_tests(suite: str = "") -> int:
    """The instructors' public tests of lesson 01 (of one suite), counted in the sources."""
    text = "".join(p.read_text() for p in (ROOT / "tests" / LESSON).glob("*.cpp"))
    return len(re.findall(rf"^TEST\({suite or 'Lesson01'}\w*,", text, re.M))


def expected_tests() -> int:
    return public_tests() + 2  # and the two hidden ones


def make_class(base: Path, export: Path) -> None:
    def student(name: str) -> Path:
        shutil.copytree(export, base / name, symlinks=True)
        return base / name / "lessons" / LESSON

    solution = SOLUTION.read_text()
    student("starter")
    (student("reference") / "thread_pool.cpp").write_text(solution)
    broken = student("broken") / "thread_pool.cpp"
    broken.write_text(broken.read_text() + "\nthis is not C++;\n")
    cheat = student("cheat_exit") / "thread_pool.cpp"
    cheat.write_text(cheat.read_text() + EXIT_CHEAT)
    folder = student("cheat_toml")
    (folder / "thread_pool.cpp").write_text(without_exercise_4(solution))
    toml = (folder / "lesson.toml").read_text()
    (folder / "lesson.toml").write_text(toml[:toml.index("[[exercise]]\nnumber = 4")])
    folder = student("shadow")
    (folder / "gtest").mkdir()
    (folder / "gtest" / "gtest.h").write_text(SHADOW_GTEST)
    warned = solution.replace("void ThreadPool::spawn(Task task) {",
                              "void ThreadPool::spawn(Task task) {\n    int unused_variable = 42;", 1)
    assert warned != solution
    (student("warning") / "thread_pool.cpp").write_text(warned)
    # A student who edited the tests so that nothing can fail, with the starter's code.
    student("edited_tests")
    for test in (base / "edited_tests" / "tests" / LESSON).glob("test_*.cpp"):
        test.write_text("#include <gtest/gtest.h>\nTEST(Lesson01Ex1, Nothing) {}\n")
    # thread_pool.cpp a link to the instructors' own reference: refused, the starter's used.
    folder = student("symlink")
    (folder / "thread_pool.cpp").unlink()
    (folder / "thread_pool.cpp").symlink_to(SOLUTION)
    # A checkout of another assignment: no lessons/01_shared_queue at all.
    shutil.rmtree(student("other_lesson"))


class ClassGradingTest(unittest.TestCase):
    """SLOW: one grading copy for eleven students."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ws-grading-test-")
        tmp = Path(cls.tmp.name)
        r = workshop("export-student", str(tmp / "export"), "--lesson", "1")
        assert r.returncode == 0, r.stdout + r.stderr
        (tmp / "class").mkdir()
        make_class(tmp / "class", tmp / "export")
        (tmp / "hidden" / LESSON).mkdir(parents=True)
        (tmp / "hidden" / LESSON / "hidden_ex2.cpp").write_text(HIDDEN)
        cls.out = tmp / "reports"
        cls.graded = workshop("grade", "--class", str(tmp / "class"), "--lessons", "1",
                           "--no-tsan", "--hidden", str(tmp / "hidden"), "--out", str(cls.out))
        with open(cls.out / "gradebook.csv", newline="") as f:
            cls.rows = {row["student"]: row for row in csv.DictReader(f)}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def report(self, student: str) -> dict:
        return json.loads((self.out / student / "grade.json").read_text())

    def lesson(self, student: str) -> dict:
        return self.report(student)["lessons"][0]

    def points(self, student: str) -> list[float]:
        row = self.rows[student]
        return [float(row[f"lesson01 ex{k}"]) for k in range(1, 5)]

    def test_the_run_finishes_and_every_student_has_a_row(self):
        self.assertEqual(self.graded.returncode, 0, self.graded.stdout + self.graded.stderr)
        self.assertNotIn("Traceback", self.graded.stderr)
        self.assertEqual(sorted(self.rows), sorted(p.name for p in (self.out).iterdir()
                                                   if p.is_dir()))
        self.assertEqual(len(self.rows), 10)
        self.assertIn("gradebook.csv", self.graded.stdout)

    def test_the_reference_in_an_untouched_export_gets_full_marks(self):
        self.assertEqual(self.points("reference"), [10, 10, 10, 10])
        self.assertEqual(float(self.rows["reference"]["points"]), 40)
        self.assertEqual(float(self.rows["reference"]["percent"]), 100)
        self.assertEqual(self.rows["reference"]["build error"], "")

    def test_the_starter_gets_what_passes_on_it(self):
        """Points are 10 x passed / total per exercise; a few tests pass on the starter (the
        constructor's check is given, for one), never a whole exercise."""
        exercises = self.lesson("starter")["exercises"]
        self.assertEqual(self.points("starter"),
                         [round(10 * e["passed"] / e["total"], 2) for e in exercises])
        self.assertTrue(all(e["passed"] < e["total"] for e in exercises))
        self.assertGreater(sum(e["passed"] for e in exercises), 0)
        self.assertLess(float(self.rows["starter"]["points"]), 40)

    def test_a_broken_build_scores_zero_with_its_error_and_the_run_goes_on(self):
        self.assertEqual(float(self.rows["broken"]["points"]), 0)
        self.assertIn("error:", self.rows["broken"]["build error"])
        self.assertIn("thread_pool.cpp", self.rows["broken"]["build error"])
        md = (self.out / "broken" / "grade.md").read_text()
        self.assertIn("## Build errors", md)
        self.assertIn("this is not C++", md)

    def test_exiting_zero_without_running_the_tests_scores_zero(self):
        self.assertEqual(float(self.rows["cheat_exit"]["points"]), 0)
        failing = self.lesson("cheat_exit")["failing_tests"]
        self.assertEqual(len(failing), expected_tests())  # every public and hidden test
        for f in failing:
            self.assertIn("without a GoogleTest report", f["first_failure"])
        review = " ".join(self.lesson("cheat_exit")["review"])
        self.assertIn("ends the process itself", review)
        self.assertIn("/proc/self/cmdline", review)

    def test_deleting_an_exercise_from_lesson_toml_changes_nothing(self):
        self.assertEqual(self.points("cheat_toml"), [10, 10, 10, 0])
        ex4 = self.lesson("cheat_toml")["exercises"][3]
        self.assertEqual((ex4["number"], ex4["passed"]), (4, 0))
        self.assertEqual(ex4["total"], self.lesson("reference")["exercises"][3]["total"])

    def test_a_shadowing_gtest_header_never_arrives(self):
        self.assertEqual(self.points("shadow"), self.points("starter"))
        self.assertEqual(self.points("edited_tests"), self.points("starter"))

    def test_a_warning_costs_nothing_and_is_reported(self):
        self.assertEqual(self.points("warning"), [10, 10, 10, 10])
        warnings = self.lesson("warning")["warnings"]
        self.assertTrue(any("unused_variable" in w for w in warnings), warnings)
        self.assertIn("Compiler warnings", (self.out / "warning" / "grade.md").read_text())

    def test_a_symbolic_link_is_not_followed(self):
        """The link points at the instructors' reference; taking it would give full marks."""
        self.assertEqual(float(self.rows["symlink"]["points"]), 0)
        self.assertIn("not submitted", self.rows["symlink"]["build error"])
        self.assertTrue(any("symbolic link" in n for n in self.lesson("symlink")["notes"]))

    def test_a_checkout_without_the_lesson_is_not_submitted(self):
        self.assertEqual(float(self.rows["other_lesson"]["points"]), 0)
        self.assertIn("not submitted", self.rows["other_lesson"]["build error"])

    def test_hidden_tests_count_and_other_suites_are_given(self):
        ref, starter = self.lesson("reference"), self.lesson("starter")
        self.assertEqual(ref["exercises"][1]["total"], public_tests("Lesson01Ex2") + 1)
        self.assertEqual(ref["exercises"][1]["passed"], ref["exercises"][1]["total"])
        self.assertIn("Lesson01Ex2.HiddenWaitIdleTwiceInARow",
                      [f["test"] for f in starter["failing_tests"]])
        self.assertEqual(starter["given_tests"],
                         [{"test": "Lesson01Given.HiddenPoolHasItsWorkers", "passed": True}])
        self.assertEqual(self.report("reference")["hidden_tests"],
                         [f"tests/{LESSON}/hidden_ex2.cpp"])

    def test_the_reports(self):
        report = self.report("starter")
        self.assertEqual(report["schema_version"], 2)
        for key in ("started", "finished"):
            self.assertRegex(report[key], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$")
        for value in (report["points"], report["total"],
                      *(e["points"] for e in report["lessons"][0]["exercises"])):
            self.assertEqual(value, round(value, 2))
        failing = {f["test"]: f for f in report["lessons"][0]["failing_tests"]}
        spawn = failing["Lesson01Ex1.TasksSpawnedByTasksRun"]
        self.assertIn("not implemented yet: lesson 01, exercise 1", spawn["first_failure"])
        self.assertNotIn("\n", spawn["first_failure"])
        md = (self.out / "starter" / "grade.md").read_text()
        self.assertIn("## Failing tests", md)
        self.assertIn("`Lesson01Ex1.TasksSpawnedByTasksRun`", md)
        ex1 = report["lessons"][0]["exercises"][0]
        self.assertIn(f"| 1: spawn and the worker loop | {ex1['passed']}/{ex1['total']} |", md)
        junit = ET.parse(self.out / "starter" / "grade-junit.xml").getroot()
        self.assertEqual(junit.tag, "testsuites")
        suite = junit.find("testsuite")
        for key in ("tests", "failures", "errors", "skipped", "time", "timestamp"):
            self.assertIn(key, suite.attrib)
        self.assertEqual(int(suite.get("tests")), expected_tests())
        self.assertEqual(int(junit.get("tests")), expected_tests())
        cases = suite.findall("testcase")
        self.assertTrue(all(re.fullmatch(r"\d+\.\d{3}", c.get("time")) for c in cases))
        failed = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
        self.assertEqual(len(failed), int(suite.get("failures")) + int(suite.get("errors")))

    def test_the_gradebook_columns(self):
        with open(self.out / "gradebook.csv", newline="") as f:
            header = next(csv.reader(f))
        self.assertEqual(header[:5], ["student", "lesson01 ex1", "lesson01 ex2", "lesson01 ex3",
                                      "lesson01 ex4"])
        for column in ("lesson01 tsan clean", "points", "max points", "percent", "build error"):
            self.assertIn(column, header)


class SubmissionTest(unittest.TestCase):
    def test_one_submission_with_repeats(self):
        """SLOW: its own grading copy. The reference copied into an untouched export gets full
        marks with every test run twice."""
        with tempfile.TemporaryDirectory() as tmp:
            export = Path(tmp) / "alice"
            r = workshop("export-student", str(export), "--lesson", "1")
            self.assertEqual(r.returncode, 0, r.stderr)
            shutil.copyfile(SOLUTION, export / "lessons" / LESSON / "thread_pool.cpp")
            r = workshop("grade", "--submission", str(export), "--no-tsan", "--repeat", "2",
                         "--out", f"{tmp}/out")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            report = json.loads(Path(f"{tmp}/out/grade.json").read_text())
            self.assertEqual([l["number"] for l in report["lessons"]], [1])  # what it has
            self.assertEqual((report["points"], report["max_points"], report["total"]),
                             (40, 40, 100))
            self.assertEqual(report["repeat"], 2)
            self.assertEqual(report["student"], "alice")


class LearnerFilesTest(unittest.TestCase):
    def test_learner_files_are_the_files_with_todo_markers(self):
        for lesson in map(find_lesson, "01234567"):
            folder = ROOT / "lessons" / lesson.folder
            marked = sorted(p.name for p in folder.iterdir() if p.suffix in (".hpp", ".cpp")
                            and "TODO(exercise" in p.read_text())
            self.assertEqual(sorted(lesson.learner_files), marked, lesson.folder)

    def test_review_flags(self):
        flags = submission.review_flags("x.cpp", EXIT_CHEAT + '#include "../../solutions/a.cpp"\n'
                                        "#define EXPECT_EQ(a, b) (void)0\n")
        text = "\n".join(flags)
        for why in ("ends the process itself", "reads its own command line",
                    "includes a file by an absolute or parent path",
                    "redefines a GoogleTest macro"):
            self.assertIn(why, text)
        self.assertEqual(submission.review_flags("y.cpp", SOLUTION.read_text()), [])

    def test_grading_builds_keep_warnings_warnings(self):
        values = submission.preset_cache_variables(ROOT, "tsan")
        self.assertEqual(values["WS_WARNINGS_AS_ERRORS"], "OFF")
        self.assertEqual(values["WS_SANITIZER"], "thread")
        self.assertEqual(values["CMAKE_CXX_COMPILER"], "clang++")
        self.assertEqual(values["WS_BUILD_BENCHMARKS"], "OFF")
        # Each test file compiled alone: a hidden test file may reuse a public one's helper name,
        # which a unity group (cmake/WsTesting.cmake) would refuse.
        self.assertEqual(values["WS_UNITY_TESTS"], "OFF")


if __name__ == "__main__":
    unittest.main()
