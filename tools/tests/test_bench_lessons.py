"""`./workshop bench N` is built from several lessons (bench 7: 05, 06 and 07); when the learner's
code makes it fail, the tool names the lessons at fault, not lesson N. The list comes from
bench/CMakeLists.txt alone (bench_lessons.linked_lessons)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from workshop_cli import bench_lessons, build as b  # noqa: E402
from workshop_cli.benchmarks import BenchmarkFailed  # noqa: E402
from workshop_cli.lessons import all_lessons, find_lesson  # noqa: E402

BENCH = ROOT / "bench"

# What a starter's stub does to the benchmark: the worker thread that parks throws, the process
# ends (the last lines of its output, as run_benchmark keeps them).
STUB_05 = BenchmarkFailed(
    "bench_lesson07 failed (exit code -6):\n"
    "terminate called after throwing an instance of 'ws::NotImplemented'\n"
    "  what():  not implemented yet: lesson 05, exercise 2: Parker::park\n")


def build_failed(*lines: str) -> b.BuildError:
    return b.BuildError("the 'bench' build failed:\n" + "\n".join(lines))


class LinkedLessonsTest(unittest.TestCase):
    def test_every_lessons_benchmark_is_read_from_its_cmake_line(self):
        lines = [l for l in (BENCH / "CMakeLists.txt").read_text().splitlines()
                 if l.lstrip().startswith("ws_add_benchmark(bench_lesson")]
        self.assertEqual(len(lines), len(list(BENCH.glob("bench_lesson[0-9][0-9].cpp"))))
        for line in lines:
            name, _source, *numbers = line.split("(", 1)[1].rstrip(")").split()
            number = int(name.removeprefix("bench_lesson"))
            with self.subTest(line=line):
                self.assertEqual(bench_lessons.linked_lessons(number),
                                 [int(n) for n in numbers])
                self.assertEqual(bench_lessons.linked_lessons(number)[-1], number)
        self.assertEqual(bench_lessons.linked_lessons(7), [5, 6, 7])

    def test_the_lessons_a_benchmark_includes_are_among_those_it_links(self):
        """The CMake line agrees with the code: every lesson header a benchmark includes
        (itself or through a header of bench/) comes from a lesson it links."""
        for lesson in all_lessons():
            source = BENCH / f"bench_lesson{lesson.nn}.cpp"
            if not source.exists():
                continue
            texts = [source.read_text()]
            for header in re.findall(r'#include "(\w+\.hpp)"', texts[0]):
                if (BENCH / header).exists():
                    texts.append((BENCH / header).read_text())
            included = {int(n) for text in texts
                        for n in re.findall(r'#include "(\d\d)_\w+/', text)}
            with self.subTest(lesson=lesson.nn):
                self.assertLessEqual(included, set(bench_lessons.linked_lessons(lesson.number)))

    def test_without_a_cmake_line_a_benchmark_is_its_lesson_alone(self):
        with tempfile.TemporaryDirectory() as tmp:
            stub = Path(tmp) / "CMakeLists.txt"
            stub.write_text("# ws_add_benchmark(bench_lesson07 bench_lesson07.cpp 05 06 07)\n")
            self.assertEqual(bench_lessons.linked_lessons(7, stub), [7])
            self.assertEqual(bench_lessons.linked_lessons(7, Path(tmp) / "absent"), [7])


class ExplainTest(unittest.TestCase):
    """What the learner is told, from the output of a failed build or run."""

    def test_the_student_edition_names_the_unfinished_lesson_05_in_bench_7(self):
        said = str(bench_lessons.explain(STUB_05, 7, student=True))
        self.assertIn("bench 7 runs your lessons 05, 06 and 07", said)
        self.assertIn("your lesson 05 code is not finished yet", said)
        self.assertIn("exercise 2", said)
        self.assertIn("./workshop test 5 says what is left", said)
        self.assertNotIn("lesson 07 code", said)
        self.assertNotIn("--solution", said)  # the student edition has no solutions/

    def test_a_failure_that_names_no_lesson_names_every_lesson_of_the_benchmark(self):
        crash = BenchmarkFailed("bench_lesson07 failed (exit code -11):\nSegmentation fault\n")
        said = str(bench_lessons.explain(crash, 7, student=True))
        self.assertIn("bench 7 runs your lessons 05, 06 and 07: one of them crashed", said)
        self.assertIn("./workshop test 5, ./workshop test 6 and ./workshop test 7 say", said)

    def test_a_build_error_names_the_lesson_whose_file_it_is_in(self):
        error = build_failed(
            "FAILED: lessons/06_injector/CMakeFiles/ws_lesson06.dir/thread_pool.cpp.o",
            "/usr/bin/g++ -I/s/lessons/05_parking -I/s/lessons/07_fork_join -Werror -c x.cpp",
            "/s/lessons/06_injector/thread_pool.cpp:12:5: error: expected ';'")
        said = bench_lessons.explain(error, 7, student=True)
        self.assertIsInstance(said, b.BuildError)
        first, rest = str(said).split("\n", 1)
        self.assertIn("bench 7 builds your lessons 05, 06 and 07: your lesson 06 code does not "
                      "build", first)
        self.assertIn("error: expected ';'", rest)  # the compiler's words stay

    def test_a_link_error_names_the_lesson_of_the_missing_symbol(self):
        error = build_failed("FAILED: bench/bench_lesson07",
                             "/usr/bin/ld: x.o: undefined reference to "
                             "`ws::lesson05::Parker::park()'")
        self.assertIn("your lesson 05 code does not build",
                      str(bench_lessons.explain(error, 7, student=True)))

    def test_a_build_error_in_no_lesson_of_the_learners_stays_as_it_was(self):
        error = build_failed("FAILED: bench/CMakeFiles/ws_bench_peers.dir/peers.cpp.o",
                             "/s/bench/peers.cpp:3:10: fatal error: tbb/tbb.h: No such file")
        self.assertIs(bench_lessons.explain(error, 7, student=True), error)

    def test_the_instructors_copy_blames_lesson_n_the_only_learners_code_in_bench_n_mine(self):
        error = BenchmarkFailed("bench_lesson07_mine failed (exit code -6):\nterminate called "
                                "after throwing an instance of 'ws::NotImplemented'\n")
        self.assertEqual(str(bench_lessons.explain(error, 7, student=False)),
                         "your lesson 07 code is not finished yet (it threw in the benchmark): "
                         "./workshop test 7 says what is left; ./workshop bench 7 --solution "
                         "measures the reference")


@unittest.skipUnless(os.environ.get("WS_SLOW_TESTS", "1") == "1", "WS_SLOW_TESTS=0")
class StudentEditionBenchTest(unittest.TestCase):
    """SLOW (a bench build of lessons 05-07 in a fresh whole-course student edition: a few
    minutes on 2 cores). A learner finished lessons 06 and 07 (their reference code copied in)
    but not lesson 05, and runs ./workshop bench 7: the one error line names lesson 05."""

    def test_bench_7_names_the_unfinished_lesson_05(self):
        with tempfile.TemporaryDirectory(prefix="ws-bench-edition-") as tmp:
            dest = Path(tmp) / "course"
            run = [sys.executable, str(ROOT / "workshop"), "export-student", str(dest)]
            r = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            for number in (6, 7):
                lesson = find_lesson(str(number))
                for name in lesson.learner_files:
                    shutil.copy2(ROOT / "solutions" / lesson.folder / name,
                                 dest / "lessons" / lesson.folder / name)
            env = {**os.environ, "WS_BUILD_ROOT": str(Path(tmp) / "build"),
                   "CMAKE_BUILD_PARALLEL_LEVEL": os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL",
                                                                "2")}
            r = subprocess.run([sys.executable, str(dest / "workshop"), "bench", "7", "--filter",
                                "wake_vs_floor", "--repetitions", "1", "--min-time", "0.01"],
                               cwd=dest, env=env, capture_output=True, text=True, timeout=1800)
        said = r.stdout + r.stderr
        self.assertEqual(r.returncode, 2, said)
        self.assertNotIn("Traceback", said)
        errors = [l for l in r.stderr.splitlines() if l.startswith("workshop")]
        self.assertEqual(len(errors), 1, said)
        # Which lesson threw is in the benchmark's last lines only when std::terminate printed
        # the stub's what(): both workers can throw at once, and then (CI, 2026-11-26, once in
        # three runs) the tail lacks it and the tool names every lesson bench 7 is built from,
        # lesson 05 first. The named form is checked deterministically above (explain()).
        self.assertTrue("your lesson 05 code is not finished yet" in errors[0] or
                        "bench 7 runs your lessons 05, 06 and 07: one of them is not finished"
                        in errors[0], errors[0])
        self.assertIn("./workshop test 5", errors[0])
        self.assertNotIn("lesson 07 code", said)
        self.assertNotIn("reference solution", said)  # there is none in this edition


if __name__ == "__main__":
    unittest.main()
