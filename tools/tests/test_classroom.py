"""Tests of the classroom tooling: grading, the student export, the autograding workflow,
watch's change detection. Grading runs real builds; the export builds a fresh copy."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from workshop_cli import classroom, edition_book, environment, grading, watch  # noqa: E402
from workshop_cli.lessons import (UsageError, all_lessons, find_lesson,  # noqa: E402
                                  test_targets)

VALIDATOR = ROOT / "book" / "node_modules" / ".bin" / "action-validator"


def workshop(*args, cwd=ROOT, timeout=900, env=None):
    """The tool of the checkout `cwd`. Another checkout (an exported copy) builds in its own
    build/: the caller's WS_BUILD_ROOT holds this checkout's trees, which that copy refuses."""
    if env is None and Path(cwd).resolve() != ROOT:
        env = {k: v for k, v in os.environ.items() if k != "WS_BUILD_ROOT"}
    return subprocess.run([sys.executable, str(Path(cwd) / "workshop"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=env)


class GradeTest(unittest.TestCase):
    def test_a_solved_lesson_passes_and_an_unsolved_one_fails(self):
        """Grading this copy in place (build/grade-default and build/grade-tsan), with TSan."""
        with tempfile.TemporaryDirectory() as tmp:
            solved = workshop("grade", "--lessons", "0", "--solution", "--out", f"{tmp}/s")
            self.assertEqual(solved.returncode, 0, solved.stdout + solved.stderr)
            report = json.loads(Path(f"{tmp}/s/grade.json").read_text())
            self.assertEqual(report["total"], 100.0)
            self.assertEqual(report["points"], report["max_points"])
            self.assertEqual(report["max_points"], classroom.lesson_points(find_lesson("0")))
            self.assertTrue(report["lessons"][0]["tsan_clean"])
            self.assertEqual(report["lessons"][0]["tsan_points"], classroom.TSAN_POINTS)

            unsolved = workshop("grade", "--lessons", "0", "--out", f"{tmp}/u")
            self.assertEqual(unsolved.returncode, 1, unsolved.stdout + unsolved.stderr)
            report = json.loads(Path(f"{tmp}/u/grade.json").read_text())
            self.assertLess(report["total"], 50)
            self.assertFalse(report["passed"])
            self.assertEqual(report["lessons"][0]["tsan_points"], 0)
            md = Path(f"{tmp}/u/grade.md").read_text()
            self.assertIn("| 1: spawn | 0/2 |", md)
            self.assertIn("## Failing tests", md)
            junit = Path(f"{tmp}/u/grade-junit.xml").read_text()
            self.assertIn('classname="Lesson00Ex1" name="SpawnQueuesWithoutRunning"', junit)
            self.assertIn("<failure", junit)

    def test_lesson_ranges(self):
        lessons = all_lessons()
        self.assertEqual([l.number for l in grading.parse_range("0-1", lessons)], [0, 1])
        self.assertEqual([l.number for l in grading.parse_range("1", lessons)], [1])
        self.assertEqual([l.number for l in grading.parse_range("3,0-1", lessons)], [0, 1, 3])
        for bad in ("42", "one", "9-1", "1-", ",", "-2"):
            with self.assertRaises(UsageError, msg=bad):
                grading.parse_range(bad, lessons)


def code_lines(path: Path) -> set[str]:
    """A file's lines of code, whitespace-normalised; short or generic lines left out."""
    out = set()
    for line in path.read_text(errors="replace").splitlines():
        s = " ".join(line.split())
        if len(s) >= 24 and not s.startswith(("//", "/*", "*", "#include", "namespace", "}")) \
                and "ANCHOR" not in s:
            out.add(s)
    return out


def lines_under(folder: Path) -> set[str]:
    out: set[str] = set()
    for f in folder.rglob("*"):
        if f.is_file() and f.suffix in (".hpp", ".cpp", ".h", ".patch"):
            out |= code_lines(f)
    return out


def answer_lines(lesson: int) -> set[str]:
    """The code that lesson `lesson`'s assignment must not show: every line of the solutions
    of it and later lessons, and of later lessons' starters (which hold its answers), that
    appears nowhere a student of this lesson may look (its own starter, the earlier lessons'
    solutions, common/, tests/, bench/)."""
    allowed, forbidden = set(), set()
    for top in ("common", "tests", "bench"):
        allowed |= lines_under(ROOT / top)
    for folder in sorted((ROOT / "lessons").glob("[0-9][0-9]_*")):
        (allowed if int(folder.name[:2]) <= lesson else forbidden).update(lines_under(folder))
    for folder in sorted((ROOT / "solutions").glob("[0-9][0-9]_*")):
        (allowed if int(folder.name[:2]) < lesson else forbidden).update(lines_under(folder))
    return forbidden - allowed


def leaks(export: Path, lesson: int) -> dict[str, list[str]]:
    """The files of an export that hold answer lines, with some of the lines."""
    answers = answer_lines(lesson)
    found = {}
    for f in export.rglob("*"):
        if f.is_file() and "node_modules" not in f.parts:
            mine = {" ".join(l.split()) for l in f.read_text(errors="replace").splitlines()}
            hits = sorted(answers & mine)
            if hits:
                found[str(f.relative_to(export))] = hits[:3]
    return found


class ExportTest(unittest.TestCase):
    def test_the_student_copy_has_no_solutions_builds_and_its_tests_fail(self):
        with tempfile.TemporaryDirectory() as tmp:
            dest = Path(tmp) / "student"
            r = workshop("export-student", str(dest))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertFalse((dest / "solutions").exists())
            self.assertFalse((dest / "book" / "src" / "instructor-guide.md").exists())
            self.assertFalse(list((dest / "book" / "src").rglob("*.md")) == [])
            for page in (dest / "book" / "src").glob("*.md"):
                self.assertIsNone(edition_book.DIRECTIVE.search(page.read_text()), page.name)
            self.assertEqual(list((dest / "book").rglob("solution-*")), [])
            self.assertNotIn("solution-", (dest / "book/src/SUMMARY.md").read_text())
            self.assertTrue((dest / ".student-edition").exists())
            self.assertFalse((dest / ".github/workflows/ci.yml").exists())
            self.assertEqual((dest / ".github/workflows/classroom.yml").read_text(),
                             (ROOT / ".github/workflows/classroom.yml").read_text())
            readme = (dest / "README.md").read_text()
            self.assertIn("lesson N+1's starter holds lesson N's solved code", readme)
            self.assertNotIn("--solution ", readme.split("## Troubleshooting")[0])
            self.assertNotIn("diff -ru solutions", readme)
            test = workshop("test", "0", cwd=dest)
            self.assertEqual(test.returncode, 1, test.stdout + test.stderr)
            self.assertIn("exercise 1: spawn", test.stdout)
            self.assertIn("not implemented yet: lesson 00, exercise 1", test.stdout)
            no_solution = subprocess.run(
                ["cmake", "--build", "build/default", "--target", "ws_lesson00_solution"],
                cwd=dest, capture_output=True, text=True)
            self.assertNotEqual(no_solution.returncode, 0, "the copy builds a solution target")
            refused = workshop("test", "0", "--solution", cwd=dest)
            self.assertEqual(refused.returncode, 2)
            self.assertIn("student edition", refused.stderr)

    def test_export_refuses_a_folder_inside_the_repository(self):
        r = workshop("export-student", str(ROOT / "build" / "student"))
        self.assertEqual(r.returncode, 2)

    def test_the_leak_check_finds_answers(self):
        """The check below is not vacuous: the whole-course edition, read as lesson 00's
        assignment, holds later lessons' answers and is caught."""
        with tempfile.TemporaryDirectory() as tmp:
            r = workshop("export-student", f"{tmp}/course")
            self.assertEqual(r.returncode, 0, r.stderr)
            found = leaks(Path(tmp) / "course", 0)
            self.assertIn("lessons/02_local_queues/thread_pool.cpp", found)


class BuildRootTest(unittest.TestCase):
    def test_a_build_root_that_holds_another_checkouts_trees_is_refused_in_one_line(self):
        """One WS_BUILD_ROOT for two checkouts: its trees were configured for the other one,
        whose code this one would build (a tree with build.ninja) or CMake would refuse (a
        cache alone). The tool says so in one line naming the variable, and builds nothing."""
        for with_ninja_file in (True, False):
            with self.subTest(with_ninja_file=with_ninja_file), \
                    tempfile.TemporaryDirectory() as tmp:
                tree = Path(tmp) / "default"
                tree.mkdir()
                other = Path(tmp) / "another-checkout"
                (tree / "CMakeCache.txt").write_text(
                    f"CMAKE_HOME_DIRECTORY:INTERNAL={other}\n")
                if with_ninja_file:
                    (tree / "build.ninja").write_text("")
                before = sorted(tree.iterdir())
                r = workshop("test", "0", timeout=120,
                             env={**os.environ, "WS_BUILD_ROOT": str(tmp)})
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                errors = [line for line in r.stderr.splitlines()
                          if line and not line.startswith("building lesson")]  # progress
                self.assertEqual(len(errors), 1, r.stderr)
                self.assertIn(f"WS_BUILD_ROOT={tmp}", errors[0])
                self.assertIn(str(other), errors[0])
                self.assertIn("of its own", errors[0])
                self.assertEqual(sorted(tree.iterdir()), before, "the tool built in the tree")


    def test_a_grading_tree_of_another_checkout_is_refused_before_it_grades_that_code(self):
        """Grading builds (grade-<preset>, under the same build root when the local checkout is
        graded) had no such check: with build.ninja there, the grade would be the other
        checkout's."""
        from workshop_cli.lessons import UsageError
        from workshop_cli.submission import Workspace
        with tempfile.TemporaryDirectory() as tmp:
            checkout, other = Path(tmp) / "checkout", Path(tmp) / "another-checkout"
            checkout.mkdir()
            tree = Path(tmp) / "root" / "grade-default"
            tree.mkdir(parents=True)
            (tree / "CMakeCache.txt").write_text(f"CMAKE_HOME_DIRECTORY:INTERNAL={other}\n")
            (tree / "build.ninja").write_text("")
            with self.assertRaises(UsageError) as refused:
                Workspace(checkout, Path(tmp) / "root").configure("default")
            self.assertIn(str(other), str(refused.exception))
            self.assertIn(str(checkout), str(refused.exception))
            (tree / "CMakeCache.txt").write_text(f"CMAKE_HOME_DIRECTORY:INTERNAL={checkout}\n")
            Workspace(checkout, Path(tmp) / "root").configure("default")  # its own: no error


class OneLessonExportTest(unittest.TestCase):
    """`export-student DIR --lesson 4`: lesson 04 alone, nothing of its answer or of later
    lessons; CMake configures; the book builds."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ws-export-test-")
        cls.dest = Path(cls.tmp.name) / "a4"
        cls.result = workshop("export-student", str(cls.dest), "--lesson", "4")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_it_holds_lesson_04_alone(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        d = self.dest
        self.assertEqual(sorted(p.name for p in (d / "lessons").iterdir()), ["04_chase_lev"])
        self.assertEqual(sorted(p.name for p in (d / "tests").iterdir()
                                if p.name[:1].isdigit()), ["04_chase_lev"])
        self.assertTrue((d / "tests" / "common").is_dir())
        # the explorer's scenarios too: `./workshop test 4` and the Classroom steps run them
        model = sorted(p.name for p in (ROOT / "tests" / "04_chase_lev" / "model").iterdir())
        self.assertEqual(sorted(p.name for p in (d / "tests" / "04_chase_lev" / "model")
                                .iterdir()), model)
        self.assertIn("test_ex2_explorer.cpp", model)
        self.assertFalse((d / "solutions").exists())
        self.assertEqual([p.name for p in (d / "bench").iterdir()], ["CMakeLists.txt"])
        for later in ("05", "06", "07"):
            self.assertEqual(list(d.rglob(f"*{later}_*")), [])
            self.assertEqual(list(d.rglob(f"lesson-{later}-*")), [])
        chapters = sorted(p.name for p in (d / "book" / "src").glob("lesson-*.md"))
        self.assertEqual(chapters, [f"lesson-0{n}-{t}.md" for n, t in
                                    enumerate(["warmup", "shared-queue", "local-queues",
                                               "steal-half", "chase-lev"])])
        self.assertFalse((d / "book" / "src" / "instructor-guide.md").exists())
        self.assertIn('lesson = 4', (d / ".student-edition").read_text())

    def test_no_file_holds_an_answer(self):
        self.assertEqual(leaks(self.dest, 4), {})
        solution = ROOT / "solutions" / "04_chase_lev"
        for f in self.dest.rglob("*"):
            for s in solution.iterdir():
                if f.is_file() and s.is_file():
                    self.assertNotEqual(f.read_bytes(), s.read_bytes(), f"{f} is {s}")
        self.assertEqual(list(self.dest.rglob("solution-*")), [])
        for page in (self.dest / "book" / "src").glob("*.md"):
            self.assertIsNone(edition_book.DIRECTIVE.search(page.read_text()), page.name)

    def test_cmake_configures_and_the_tool_knows_the_lesson(self):
        r = subprocess.run(["cmake", "--preset", "default"], cwd=self.dest, capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        made = (self.dest / "build" / "default" / "build.ninja").read_text()
        for target in test_targets(find_lesson("4"), False, self.dest):
            self.assertIn(f"build {target}:", made)
        self.assertIn("ws_lesson04_model_tests", test_targets(find_lesson("4"), False, self.dest))
        listed = workshop("list", cwd=self.dest)
        self.assertEqual(listed.returncode, 0, listed.stderr)
        self.assertIn("A lock-free Chase-Lev deque", listed.stdout)
        self.assertNotIn("Parking", listed.stdout)

    def test_the_readme_and_the_workflow_match_the_edition(self):
        readme = (self.dest / "README.md").read_text()
        self.assertIn("./workshop test 4", readme)
        self.assertNotIn("--solution ", readme.split("## Troubleshooting")[0])
        self.assertNotIn("solutions/0", readme)
        lesson = find_lesson("4")
        self.assertIn(f"{classroom.lesson_points(lesson)} points in all", readme)
        workflow = (self.dest / ".github/workflows/classroom.yml").read_text()
        self.assertEqual(workflow, classroom.workflow([lesson], single_lesson=True))

    def test_the_book_builds(self):
        modules = ROOT / "book" / "node_modules"
        if not modules.is_dir():
            self.skipTest("book/node_modules is absent (./workshop book --build-only installs it)")
        # A folder of links to the instructors' packages (never one link to the folder: npm ci
        # would empty the folder it points to), older than nothing: so no npm ci runs at all.
        mine = self.dest / "book" / "node_modules"
        mine.mkdir()
        for entry in modules.iterdir():
            (mine / entry.name).symlink_to(entry)
        os.utime(self.dest / "book" / "package-lock.json", (1, 1))
        r = workshop("book", "--build-only", cwd=self.dest, timeout=300)
        self.assertNotIn("npm ci", r.stdout + r.stderr)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue((self.dest / "book" / "_book" / "lesson-04-chase-lev.html").exists())
        self.assertFalse((self.dest / "book" / "_book" / "lesson-05-parking.html").exists())


class ClassroomWorkflowTest(unittest.TestCase):
    def test_the_committed_workflow_is_up_to_date(self):
        committed = (ROOT / ".github/workflows/classroom.yml").read_text()
        self.assertEqual(committed, classroom.workflow(all_lessons()),
                         "run: ./workshop classroom-workflow > .github/workflows/classroom.yml")

    def test_every_exercise_has_a_step(self):
        text = classroom.workflow(all_lessons())
        for lesson in all_lessons():
            for ex in lesson.exercises:
                self.assertIn(f"./workshop test {lesson.number} --exercise {ex.number}", text)
            self.assertIn(f"./workshop test {lesson.number} --tsan", text)

    def test_titles_are_quoted_yaml_strings(self):
        """A title such as 'the ring buffer: push, pop, steal' is a double-quoted string: an
        unquoted ': ' would start a mapping and break the whole file."""
        text = classroom.workflow(all_lessons())
        for lesson in all_lessons():
            for ex in lesson.exercises:
                name = f"Lesson {lesson.nn} exercise {ex.number} ({ex.title})"
                self.assertIn(f"test-name: {json.dumps(name, ensure_ascii=False)}\n", text)
        self.assertEqual(classroom.quoted('a: "b" # c'), '"a: \\"b\\" # c"')

    def test_it_installs_the_listed_packages(self):
        """The autograder installs tools/debian-packages.txt's required and optional peers."""
        text = classroom.workflow(all_lessons())
        install = next(l for l in text.splitlines() if "apt-get install" in l)
        for package in environment.packages_in("required", "optional peers"):
            self.assertIn(f" {package}", install)
        for package in environment.packages_in("book"):
            self.assertNotIn(f" {package} ", install)


class OneAssignmentWorkflowTest(unittest.TestCase):
    def workflow(self, number: str) -> str:
        return classroom.workflow([find_lesson(number)], single_lesson=True)

    def test_it_grades_one_lesson(self):
        for lesson in all_lessons():
            text = self.workflow(str(lesson.number))
            steps = re.findall(r'command: "(\./workshop test [^"]+)"', text)
            self.assertEqual(steps, [f"./workshop test {lesson.number} --exercise {e.number}"
                                     for e in lesson.exercises]
                             + [f"./workshop test {lesson.number} --tsan"])
            self.assertIn(f"--target ws_lesson{lesson.nn}_tests", text)
            self.assertIn(f"{classroom.lesson_points(lesson)} points in all", text)
            self.assertEqual(sum(map(int, re.findall(r"max-score: (\d+)", text))),
                             classroom.lesson_points(lesson))

    def test_a_warning_costs_no_points_and_every_step_has_a_timeout(self):
        for text in (self.workflow("1"), classroom.workflow(all_lessons())):
            self.assertEqual(text.count("cmake --preset"), 2)
            self.assertEqual(text.count("-DWS_WARNINGS_AS_ERRORS=OFF"), 2)
            self.assertEqual(text.count("-DWS_UNITY_TESTS=OFF"), 2)  # a student's own test file
            self.assertEqual(text.count("timeout:"), text.count("max-score:"))
            self.assertIn(f"timeout-minutes: {classroom.JOB_TIMEOUT}", text)
            self.assertIn("classroom-resources/autograding-grading-reporter@v1", text)
            install = next(l for l in text.splitlines() if "apt-get install" in l)
            for package in environment.packages_in("required", "optional peers"):
                self.assertIn(f" {package}", install)

    def test_the_cli_prints_it(self):
        r = workshop("classroom-workflow", "--lesson", "4")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, self.workflow("4"))

    def test_every_lessons_workflow_is_valid(self):
        """The validator test of test_tool_hygiene.py, for each one-assignment workflow."""
        if not (ROOT / "book" / "node_modules").is_dir():
            self.skipTest("book/node_modules is absent (./workshop book --build-only installs it)")
        self.assertTrue(VALIDATOR.exists(), "book/node_modules lacks @action-validator/cli")
        with tempfile.TemporaryDirectory() as tmp:
            for lesson in all_lessons():
                path = Path(tmp) / f"classroom-{lesson.nn}.yml"
                path.write_text(self.workflow(str(lesson.number)))
                r = subprocess.run([str(VALIDATOR), str(path)], cwd=ROOT / "book",
                                   capture_output=True, text=True, timeout=120)
                self.assertEqual(r.returncode, 0, f"lesson {lesson.nn}:\n{r.stdout}{r.stderr}")


class InstructorGuideTest(unittest.TestCase):
    def test_the_guide_gives_the_true_points(self):
        guide = (ROOT / "book" / "src" / "instructor-guide.md").read_text()
        for lesson in all_lessons():
            row = re.search(rf"^\| {lesson.nn} \| [^|]+ \| (\d+) \| (\d+) \|$", guide, re.M)
            self.assertIsNotNone(row, f"the guide's points table has no row for lesson "
                                 f"{lesson.nn}")
            self.assertEqual((int(row.group(1)), int(row.group(2))),
                             (len(lesson.exercises), classroom.lesson_points(lesson)),
                             f"lesson {lesson.nn}")
        total = sum(classroom.lesson_points(l) for l in all_lessons())
        self.assertIn(f"**{total} points**", guide)

    def test_the_guide_documents_the_grading_commands(self):
        guide = (ROOT / "book" / "src" / "instructor-guide.md").read_text()
        for words in ("--submission", "--class", "--hidden", "--repeat", "gradebook.csv",
                      "export-student", "--lesson", "learner_files", "cannot judge"):
            self.assertIn(words, guide)


class WatchTest(unittest.TestCase):
    def test_a_changed_file_is_noticed(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / "thread_pool.cpp"
            f.write_text("a")
            before = watch.snapshot([Path(tmp)])
            time.sleep(0.01)
            f.write_text("b")
            os.utime(f, (before[f] + 1, before[f] + 1))
            self.assertEqual(watch.changed(before, watch.snapshot([Path(tmp)])), [f])
            self.assertEqual(watch.changed(before, before), [])


if __name__ == "__main__":
    unittest.main()
