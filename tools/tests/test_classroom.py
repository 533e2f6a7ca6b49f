"""Tests of the classroom tooling: grading, the student export, the autograding workflow,
watch's change detection. Grading runs real builds; the export builds a fresh copy."""
import json
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from workshop_cli import classroom, environment, grading, watch  # noqa: E402
from workshop_cli.lessons import UsageError, all_lessons  # noqa: E402


def workshop(*args, cwd=ROOT, timeout=900):
    return subprocess.run([sys.executable, str(Path(cwd) / "workshop"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


class GradeTest(unittest.TestCase):
    def test_a_solved_lesson_passes_and_an_unsolved_one_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            solved = workshop("grade", "--lessons", "0", "--solution", "--out", f"{tmp}/s")
            self.assertEqual(solved.returncode, 0, solved.stdout + solved.stderr)
            report = json.loads(Path(f"{tmp}/s/grade.json").read_text())
            self.assertEqual(report["total"], 100.0)
            self.assertTrue(report["lessons"][0]["tsan_clean"])

            unsolved = workshop("grade", "--lessons", "0", "--out", f"{tmp}/u")
            self.assertEqual(unsolved.returncode, 1, unsolved.stdout + unsolved.stderr)
            report = json.loads(Path(f"{tmp}/u/grade.json").read_text())
            self.assertLess(report["total"], 50)
            self.assertFalse(report["passed"])
            md = Path(f"{tmp}/u/grade.md").read_text()
            self.assertIn("| 1: spawn | 0/2 |", md)
            junit = Path(f"{tmp}/u/grade-junit.xml").read_text()
            self.assertIn("Lesson00Ex1.SpawnQueuesWithoutRunning", junit)
            self.assertIn("<failure", junit)

    def test_lesson_ranges(self):
        lessons = all_lessons()
        self.assertEqual([l.number for l in grading.parse_range("0-1", lessons)], [0, 1])
        self.assertEqual([l.number for l in grading.parse_range("1", lessons)], [1])
        with self.assertRaises(UsageError):
            grading.parse_range("42", lessons)
        with self.assertRaises(UsageError):
            grading.parse_range("one", lessons)


class ExportTest(unittest.TestCase):
    def test_the_student_copy_has_no_solutions_builds_and_its_tests_fail(self):
        with tempfile.TemporaryDirectory() as tmp:
            dest = Path(tmp) / "student"
            r = workshop("export-student", str(dest))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertFalse((dest / "solutions").exists())
            self.assertFalse((dest / "book").exists())
            self.assertTrue((dest / ".student-edition").exists())
            self.assertTrue((dest / ".github/workflows/classroom.yml").exists())
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


class WatchTest(unittest.TestCase):
    def test_a_changed_file_is_noticed(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / "thread_pool.cpp"
            f.write_text("a")
            before = watch.snapshot([Path(tmp)])
            time.sleep(0.01)
            f.write_text("b")
            import os
            os.utime(f, (before[f] + 1, before[f] + 1))
            self.assertEqual(watch.changed(before, watch.snapshot([Path(tmp)])), [f])
            self.assertEqual(watch.changed(before, before), [])


if __name__ == "__main__":
    unittest.main()
