"""Every bad input is one line and a non-zero exit, never a traceback, and is caught before any
long run starts (about 15 s: many short runs of ./workshop, one lesson 01 export)."""
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The first lesson number this copy does not have (lessons are added over time).
MISSING = max(int(p.name[:2]) for p in (ROOT / "lessons").iterdir() if p.name[:2].isdigit()) + 1


def workshop(*args, cwd=ROOT, timeout=60):
    return subprocess.run([sys.executable, str(Path(cwd) / "workshop"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


class OneLineErrors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ws-inputs-test-")
        tmp = Path(cls.tmp.name)
        cls.file = tmp / "a-file"
        cls.file.write_text("x")
        cls.empty = tmp / "empty"
        cls.empty.mkdir()
        cls.full = tmp / "full"
        (cls.full / "something").mkdir(parents=True)
        cls.no_lessons = tmp / "no-lessons"
        cls.no_lessons.mkdir()
        cls.stray_hidden = tmp / "hidden"
        (cls.stray_hidden / "not_a_lesson").mkdir(parents=True)
        cls.edition = tmp / "edition"
        r = workshop("export-student", str(cls.edition), "--lesson", "1")
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assertOneLine(self, *args, cwd=ROOT, says: str = ""):
        start = time.monotonic()
        r = workshop(*args, cwd=cwd)
        took = time.monotonic() - start
        what = " ".join(args)
        self.assertNotEqual(r.returncode, 0, f"{what}: exit code 0\n{r.stdout}{r.stderr}")
        self.assertNotIn("Traceback", r.stdout + r.stderr, what)
        # argparse prints its usage first; the error itself is one line
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        errors = [l for l in lines if l.startswith("workshop")]
        self.assertEqual(len(errors), 1, f"{what}:\n{r.stderr}")
        self.assertTrue(lines[-1].startswith("workshop"), f"{what}:\n{r.stderr}")
        self.assertTrue(all(l.startswith(("usage:", " ")) for l in lines[:-1]),
                        f"{what}:\n{r.stderr}")
        self.assertIn(says, errors[0], what)
        self.assertLess(took, 20, f"{what}: took {took:.0f} s: checked only after a long run?")
        self.assertNotIn("grading lesson", r.stderr + r.stdout, what)
        return errors[0]

    def test_grade(self):
        for args, says in [
            (["--lessons", "9-1"], "reversed range"),
            (["--lessons", "1-42"], f"no lesson {MISSING}"),
            (["--lessons", "x"], "not a list of lessons"),
            (["--lessons", "-3"], "not a list of lessons"),
            (["--lessons", ""], "not a list of lessons"),
            (["--repeat", "0"], "1 or more"),
            (["--repeat", "-2"], "1 or more"),
            (["--repeat", "two"], "not a whole number"),
            (["--jobs", "0"], "1 or more"),
            (["--threshold", "101"], "from 0 to 100"),
            (["--threshold", "-1"], "from 0 to 100"),
            (["--threshold", "most"], "not a number"),
            (["--lessons", "0", "--out", str(self.file)], "is a file"),
            (["--lessons", "0", "--out", f"{self.file}/reports"], "is a file"),
            (["--lessons", "0", "--out", "/proc/no/such/folder"], "cannot write"),
            (["--submission", str(self.tmp.name) + "/missing"], "does not exist"),
            (["--submission", str(self.file)], "not a folder"),
            (["--submission", str(self.no_lessons)], "no lessons/ folder"),
            (["--class", str(self.empty)], "no subfolders"),
            (["--class", str(self.file)], "not a folder"),
            (["--hidden", str(self.stray_hidden)], "not a lesson's test folder"),
            (["--hidden", str(self.empty)], "no NN_topic/*.cpp"),
            (["--submission", str(self.edition), "--class", str(self.full)], "choose one"),
            (["--submission", str(self.edition), "--solution"], "choose one"),
            (["--submission", str(self.edition), "--lessons", "2",
              "--out", str(self.file)], "is a file"),
        ]:
            with self.subTest(args=args):
                self.assertOneLine("grade", *args, says=says)

    def test_test_hint_bench_tour(self):
        for args, says in [
            (["test", "42"], "there is no lesson '42'"),
            (["test", "1", "--jobs", "0"], "1 or more"),
            (["test", "1", "--jobs", "-1"], "1 or more"),
            (["test", "1", "--exercise", "x"], "invalid int"),
            (["test", "1", "--exercise", "9"], "no exercise 9"),
            (["hint", "1", "--level", "0"], "1 or more"),
            (["hint", "1", "2", "--level", "-1"], "1 or more"),
            (["hint", "1", "x"], "invalid int"),
            (["hint", "1", "9"], "no exercise 9"),
            (["bench", "1", "--repetitions", "0"], "1 or more"),
            (["bench", "1", "--repetitions", "-3"], "1 or more"),
            (["bench", "1", "--min-time", "0"], "above 0"),
            (["bench", "1", "--min-time", "-1"], "above 0"),
            (["bench", "1", "--min-time", "soon"], "not a number"),
            (["bench", "1", "--filter", "("], "not a valid regular expression"),
            (["bench", "x"], "there is no lesson 'x'"),
            (["tour", "--repetitions", "0"], "1 or more"),
            (["tour", "--min-time", "-0.5"], "above 0"),
        ]:
            with self.subTest(args=args):
                self.assertOneLine(*args, says=says)

    def test_export_and_workflow(self):
        for args, says in [
            (["export-student", str(self.file)], "is a file"),
            (["export-student", str(self.full)], "not empty"),
            (["export-student", str(ROOT / "build" / "student")], "outside this repository"),
            (["export-student", "/proc/no/such/folder"], "cannot create"),
            (["export-student", str(self.empty), "--lesson", str(MISSING)], f"no lesson {MISSING}"),
            (["export-student", str(self.empty), "--lesson", "one"], "not a lesson number"),
            (["classroom-workflow", "--lesson", "12"], "no lesson 12"),
            (["classroom-workflow", "--lesson", "-1"], "not a lesson number"),
        ]:
            with self.subTest(args=args):
                self.assertOneLine(*args, says=says)

    def test_what_an_edition_lacks(self):
        for args, says in [
            (["test", "1", "--solution"], "student edition"),
            (["grade", "--solution"], "student edition"),
            (["bench", "1"], "not part of a one-lesson edition"),
            (["test", "4"], "there is no lesson '4'"),
            (["export-student", str(self.empty)], "already a student edition"),
            (["sync"], "student edition"),
            (["grade", "--lessons", "4"], "no lesson 4"),
        ]:
            with self.subTest(args=args):
                self.assertOneLine(*args, cwd=self.edition, says=says)


if __name__ == "__main__":
    unittest.main()
