"""Tests of the workshop tool itself (python3 -m unittest discover -s tools/tests -t .)."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from workshop_cli import ctest, hints  # noqa: E402
from workshop_cli.lessons import UsageError, all_lessons, find_lesson  # noqa: E402


def workshop(*args):
    return subprocess.run([sys.executable, str(ROOT / "workshop"), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


class LessonsTest(unittest.TestCase):
    def test_every_solution_has_a_starter_with_metadata_and_tests(self):
        for lesson in all_lessons():
            self.assertTrue((ROOT / "lessons" / lesson.folder / "lesson.toml").exists(), lesson)
            self.assertTrue((ROOT / "tests" / lesson.folder).is_dir(), lesson)
            self.assertGreater(len(lesson.exercises), 0, lesson)

    def test_lesson_numbers_are_accepted_in_several_forms(self):
        self.assertEqual(find_lesson("1").folder, find_lesson("01").folder)
        self.assertEqual(find_lesson("01_shared_queue").number, 1)

    def test_an_unknown_lesson_lists_the_lessons(self):
        with self.assertRaises(UsageError) as ctx:
            find_lesson("42")
        self.assertIn("there is no lesson '42'", str(ctx.exception))
        self.assertIn("One queue and one lock", str(ctx.exception))

    def test_the_cli_answers_an_unknown_lesson_with_exit_2_and_the_list(self):
        for command in (["test", "42"], ["hint", "42"], ["bench", "x"]):
            result = workshop(*command)
            self.assertEqual(result.returncode, 2, command)
            self.assertIn("The lessons are:", result.stderr)

    def test_an_unknown_exercise_names_the_known_ones(self):
        result = workshop("hint", "1", "9")
        self.assertEqual(result.returncode, 2)
        self.assertIn("has no exercise 9", result.stderr)


class HintsTest(unittest.TestCase):
    def test_every_exercise_has_at_least_two_hints(self):
        for lesson in all_lessons():
            found = hints.load_hints(lesson)
            for ex in lesson.exercises:
                self.assertGreaterEqual(len(found.get(ex.number, [])), 2,
                                        f"lesson {lesson.nn} exercise {ex.number}")

    def test_hint_levels_are_progressive(self):
        lesson = find_lesson("1")
        one = hints.hint_text(lesson, 2, 1)
        every = hints.hint_text(lesson, 2, None)
        self.assertIn("Hint 1", one)
        self.assertNotIn("Hint 2", one)
        self.assertIn("--level 2", one)
        self.assertIn("Hint 2", every)


class ReportParsingTest(unittest.TestCase):
    JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="2" failures="1">
  <testcase name="lesson01.starter.Lesson01Ex2.WaitIdleIsReusable" status="fail" time="0.1">
    <failure message=""/>
    <system-out>[ RUN      ] Lesson01Ex2.WaitIdleIsReusable
/x/test.cpp:12: Failure
Expected equality of these values:
  ran.load()
[exercise] Lesson01Ex2.WaitIdleIsReusable checks lesson 01, exercise 2 (wait_idle)
[  FAILED  ] Lesson01Ex2.WaitIdleIsReusable (1 ms)
</system-out>
  </testcase>
  <testcase name="lesson01.starter.Lesson01Ex1.ZeroWorkersIsAnError" status="run" time="0.0">
    <system-out>[       OK ] Lesson01Ex1.ZeroWorkersIsAnError</system-out>
  </testcase>
</testsuite>
"""

    def test_junit_results_are_grouped_by_exercise(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "r.xml"
            path.write_text(self.JUNIT)
            results = ctest.parse_junit(path)
        self.assertEqual([r.passed for r in results], [False, True])
        self.assertEqual([r.exercise for r in results], [2, 1])
        reason = results[0].reason()
        self.assertIn("test.cpp:12: Failure", reason)
        self.assertIn("Expected equality", reason)
        self.assertNotIn("[exercise]", reason)

    def test_watchdog_and_terminate_lines_are_the_reason(self):
        out = ("[ RUN      ] X.Y\n[watchdog] X.Y did not finish within 30 s: it hangs.\n"
               "[watchdog] likely cause: no notify\n")
        self.assertIn("likely cause: no notify", ctest.failure_reason(out))

    TSAN = """[ RUN      ] Lesson01Ex2.WaitIdleWaitsForEveryTask
==================
WARNING: ThreadSanitizer: data race (pid=4242)
  Write of size 8 at 0x7b0c00000010 by thread T1:
    #0 ws::lesson01::ThreadPool::worker_loop() /work/x/lessons/01_shared_queue/thread_pool.cpp:41:18 (t+0x1)
    #1 std::thread::_State_impl<...>::_M_run() /usr/include/c++/12/bits/std_thread.h:211 (t+0x2)

  Previous read of size 8 at 0x7b0c00000010 by main thread:
    #0 ws::lesson01::ThreadPool::wait_idle() /work/x/lessons/01_shared_queue/thread_pool.cpp:60:12 (t+0x3)
    #1 Lesson01Ex2_WaitIdleWaitsForEveryTask_Test::TestBody() /work/x/tests/01_shared_queue/test_ex2_wait_idle.cpp:20 (t+0x4)

SUMMARY: ThreadSanitizer: data race /work/x/lessons/01_shared_queue/thread_pool.cpp:41:18 in worker_loop
==================
==================
WARNING: ThreadSanitizer: data race (pid=4242)
  Write of size 8 at 0x7b0c00000020 by thread T2:
    #0 other /work/x/lessons/01_shared_queue/thread_pool.cpp:44:18 (t+0x1)
SUMMARY: ThreadSanitizer: data race /work/x/lessons/01_shared_queue/thread_pool.cpp:44:18 in other
==================
"""

    def test_the_first_thread_sanitizer_report_is_shown_whole_with_the_lessons_frames_marked(self):
        reason = ctest.failure_reason(self.TSAN)
        self.assertIn("WARNING: ThreadSanitizer: data race", reason)
        self.assertIn("Previous read of size 8", reason)  # the second stack too
        self.assertIn(">> #0 ws::lesson01::ThreadPool::wait_idle()", reason)
        self.assertNotIn(">> #1 std::thread", reason)  # only the lesson's own frames
        self.assertIn("SUMMARY: ThreadSanitizer: data race", reason)
        self.assertIn("1 more sanitizer report", reason)
        self.assertNotIn("0x7b0c00000020", reason)  # the second report is only counted

    def test_a_crash_says_which_signal(self):
        out = "[ RUN      ] Lesson04Ex1.PushThenPop\n"
        self.assertIn("crashed: SIGSEGV", ctest.failure_reason(out, "SegFault"))
        self.assertIn("aborted: SIGABRT", ctest.failure_reason(out, "Subprocess aborted"))

    def test_no_failure_block_or_tag_line_is_printed_twice(self):
        out = ("[ RUN      ] X.Y\n"
               "t.cpp:10: Failure\nExpected equality of these values:\n  a\n    Which is: 1\n"
               "t.cpp:10: Failure\nExpected equality of these values:\n  a\n    Which is: 1\n"
               "t.cpp:12: Failure\nValue of: ok\n"
               "[seed] this run used seed 7; rerun it with WS_SEED=7\n"
               "[seed] this run used seed 7; rerun it with WS_SEED=7\n"
               "[  FAILED  ] X.Y (1 ms)\n")
        reason = ctest.failure_reason(out)
        self.assertEqual(reason.count("t.cpp:10: Failure"), 1, reason)
        self.assertEqual(reason.count("t.cpp:12: Failure"), 1, reason)
        self.assertEqual(reason.count("[seed]"), 1, reason)
        # the first block stops at the next failure: it does not swallow t.cpp:12's lines
        first = reason.split("t.cpp:12: Failure")[0]
        self.assertNotIn("Value of: ok", first)

    def test_a_skipped_test_is_not_a_failure(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "r.xml"
            path.write_text('''<?xml version="1.0" encoding="UTF-8"?>
<testsuite tests="2">
  <testcase name="lesson06.solution.Lesson06Ex4.Skips" status="notrun">
    <skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/><system-out>[  SKIPPED ] X</system-out>
  </testcase>
  <testcase name="lesson06.solution.Lesson06Ex4.NotRun" status="notrun"><system-out/></testcase>
</testsuite>''')
            skipped, not_run = ctest.parse_junit(path)
        self.assertTrue(skipped.passed and skipped.skipped)
        self.assertFalse(not_run.passed)  # not run for another reason (not built, ...) fails

    def test_progress_lines_of_ctest_are_recognised(self):
        line = (" 16/195 Test  #35: lesson01.starter.Lesson01Ex4.OnlyTheFirst ......"
                "***Exception: SegFault  0.01 sec")
        m = ctest.PROGRESS.match(line)
        self.assertIsNotNone(m)
        self.assertEqual(m.group(3), "lesson01.starter.Lesson01Ex4.OnlyTheFirst")
        self.assertEqual(m.group(5), "Exception: SegFault")


class SkipsAreNotPassesTest(unittest.TestCase):
    """A graded test that skipped itself checked nothing: under g++ it is reported as skipped,
    neither as passed (no points, the exercise not done, a non-zero exit for Classroom) nor as
    failed; under a sanitizer, where the reference skips the same tests, it counts."""

    SKIP_OUTPUT = ("[ RUN      ] Lesson06Ex4.Skips\n"
                   "/x/tests/06_injector/test_ex4_failed_spawn.cpp:246: Skipped\n"
                   "the moment this test needs\ndid not happen\n\n"
                   "[  SKIPPED ] Lesson06Ex4.Skips (3 ms)\n")

    def results(self):
        return [ctest.TestResult("lesson06.starter.Lesson06Ex4.Skips", True, self.SKIP_OUTPUT,
                                 0.0, skipped=True),
                ctest.TestResult("lesson06.starter.Lesson06Ex4.Passes", True, "", 0.0)]

    def test_workshop_test_reports_a_skip_as_a_skip(self):
        import contextlib
        import io
        from workshop_cli import testing
        lesson = find_lesson("6")
        ex4 = next(s for s in testing.summarise(lesson, self.results()) if s.number == 4)
        own = 2 - ex4.given  # given tests of exercise 4 are not in passed/total
        self.assertEqual([r.test for r in ex4.skipped], ["Skips"])
        self.assertEqual(ex4.passed, own - 1)
        self.assertFalse(ex4.done)
        self.assertEqual(ex4.failures, [])  # not a failure either
        self.assertEqual(testing.skip_reason(ex4.skipped[0]),
                         "the moment this test needs did not happen")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            testing.print_report(lesson, [ex4], what="starter", verbose=False, other=[])
        self.assertIn("1 skipped", out.getvalue())
        self.assertIn("Lesson06Ex4.Skips skipped, so not checked: the moment", out.getvalue())
        tsan = next(s for s in testing.summarise(lesson, self.results(), "tsan")
                    if s.number == 4)
        self.assertEqual((tsan.skipped, tsan.passed), ([], own))

    def test_grading_scores_a_skip_as_nothing_and_lists_it_apart(self):
        from workshop_cli import gradebook, grading
        from workshop_cli.gtest_run import Outcome
        lesson = find_lesson("6")
        names = ["Lesson06Ex4.Skips", "Lesson06Ex4.Passes"]
        grade = grading.LessonGrade(lesson.number, lesson.title)
        grade.results = {
            names[0]: Outcome(names[0], "skipped", "skipped: the moment did not happen", 0.1, 1),
            names[1]: Outcome(names[1], "passed", "", 0.1, 1)}
        grading.score(lesson, grade, names, tsan=False)
        ex4 = next(e for e in grade.exercises if e.number == 4)
        self.assertEqual((ex4.passed, ex4.total, ex4.skipped), (1, 2, 1))
        self.assertEqual(ex4.points, grading.EXERCISE_POINTS / 2)
        graded = grading.Graded("test", None, [grade], "now")
        text = gradebook.markdown(graded)
        self.assertIn("1/2 (1 skipped)", text)
        self.assertIn("## Skipped tests", text)
        self.assertNotIn("## Failing tests", text)
        self.assertEqual(gradebook.as_json(graded)["lessons"][0]["exercises"][3]["skipped"], 1)
        junit = gradebook.junit(graded).getroot()
        self.assertEqual((junit.get("skipped"), junit.get("failures")), ("1", "0"))


class TranscriptTest(unittest.TestCase):
    """The book's transcripts are real runs of the current examples (./workshop transcripts)."""

    def test_every_transcript_matches_its_source_and_what_the_chapter_reads_in_it(self):
        from workshop_cli import transcripts
        for name in transcripts.TRANSCRIPTS:
            self.assertEqual(transcripts.check_against_source(name), [], name)
            text = (transcripts.EXAMPLES / f"{name}.transcript.txt").read_text()
            self.assertEqual(transcripts.check_output(name, text), [], name)

    def test_a_shifted_source_line_is_caught(self):
        from workshop_cli import transcripts
        with tempfile.TemporaryDirectory() as tmp:
            old = transcripts.EXAMPLES
            try:
                transcripts.EXAMPLES = Path(tmp)
                (Path(tmp) / "racy_counter.transcript.txt").write_text(
                    (old / "racy_counter.transcript.txt").read_text())
                source = (old / "racy_counter.cpp").read_text().splitlines()
                # the ++counter line moved down by one: the report now names a blank
                shifted = source[:9] + [""] + ["        ;"] + source[10:]
                (Path(tmp) / "racy_counter.cpp").write_text("\n".join(shifted))
                self.assertTrue(transcripts.check_against_source("racy_counter"))
            finally:
                transcripts.EXAMPLES = old


if __name__ == "__main__":
    unittest.main()


class TourTargetsTest(unittest.TestCase):
    """The workloads each lesson aimed at: one file (book/tools/lib/tour-targets.json) that the
    book's charts and the tool's printed tables both read."""

    def test_the_targets_name_real_workloads_and_lessons(self):
        from workshop_cli import benchmarks
        targets = benchmarks.targets()
        self.assertTrue(targets, f"{benchmarks.TARGETS_FILE} is missing or empty")
        lessons = {f"lesson{lesson.nn}" for lesson in all_lessons()}
        for workload, aimed in targets.items():
            self.assertIn(workload, benchmarks.WORKLOADS)
            self.assertTrue(aimed, workload)
            self.assertLessEqual(set(aimed), lessons, workload)

    def test_the_printed_table_marks_the_aimed_cells_only(self):
        import contextlib
        import io
        from workshop_cli import benchmarks
        table = {"spawn_tree": {"lesson01": 40.0, "lesson02": 13.0},
                 "flat_spawn": {"lesson01": 200.0, "lesson02": 170.0}}
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            benchmarks.print_table(table, reference="lesson01")
        rows = {line.split()[0]: line for line in out.getvalue().splitlines() if line.strip()}
        self.assertIn("*13 ms (0.33x)", rows["spawn_tree"])
        self.assertNotIn("*", rows["flat_spawn"])
        self.assertIn("*: the lesson whose idea aimed at this workload", out.getvalue())

    def test_long_names_keep_their_columns_apart(self):
        import contextlib
        import io
        from workshop_cli import benchmarks
        table = {"ping_pong_two_pools": {"lesson09": 20.8},
                 "spawn_await": {"lesson09": 542.0, "futex_floor": 0.0186,
                                 "lesson09_frame_pool": 559.0}}
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            benchmarks.print_table(table, reference=None)
        lines = [line for line in out.getvalue().splitlines() if line.strip()]
        header = next(line for line in lines if line.startswith("workload"))
        self.assertEqual(header.split(), ["workload", "lesson09", "futex_floor",
                                          "lesson09_frame_pool"])
        row = next(line for line in lines if line.startswith("ping_pong_two_pools"))
        self.assertTrue(row.startswith("ping_pong_two_pools "), row)
        # every cell ends where its column's name ends
        for line in lines:
            if line.startswith("spawn_await"):
                self.assertEqual(len(line), len(header))


class ImbalancedSharesTest(unittest.TestCase):
    """The tour's imbalanced row: each contender's share of the ideal (sequential / workers) and,
    where the static split ran, its share of that machine's ceiling."""

    TABLE = {"imbalanced": {"sequential": 100.0, "lesson07": 52.0, "onetbb": 55.0,
                            "static_split": 54.6}}

    def _printed(self, table):
        import contextlib
        import io
        from workshop_cli import benchmarks
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            benchmarks.print_ideal_shares(table, 2)
        return out.getvalue()

    def test_both_shares_are_printed_and_the_split_is_its_own_ceiling_only_once(self):
        printed = self._printed(self.TABLE)
        self.assertIn("share of ideal (sequential / 2 workers): lesson07 96 %, onetbb 91 %, "
                      "static_split 92 %", printed)
        ceiling = next(line for line in printed.splitlines() if "ceiling" in line)
        self.assertTrue(ceiling.endswith(": lesson07 105 %, onetbb 99 %"), ceiling)

    def test_without_the_static_split_only_the_ideal_is_printed(self):
        table = {"imbalanced": {k: v for k, v in self.TABLE["imbalanced"].items()
                                if k != "static_split"}}
        printed = self._printed(table)
        self.assertIn("lesson07 96 %, onetbb 91 %", printed)
        self.assertNotIn("ceiling", printed)


class WakeAgainstFloorTest(unittest.TestCase):
    """bench 5-7's wake_vs_floor row: its counters become one printed line of ratios."""

    REPORT = {"benchmarks": [
        {"name": "wake_vs_floor/lesson06/iterations:20/manual_time_mean",
         "run_name": "wake_vs_floor/lesson06/iterations:20/manual_time",
         "aggregate_name": "mean", "futex_floor_us": 99.0, "lesson06_us": 99.0},
        {"name": "wake_vs_floor/lesson06/iterations:20/manual_time_median",
         "run_name": "wake_vs_floor/lesson06/iterations:20/manual_time",
         "aggregate_name": "median", "futex_floor_us": 18.0, "lesson05_us": 21.0,
         "lesson05_x_floor": 1.1667, "lesson06_us": 24.0, "lesson06_x_floor": 1.3333},
    ]}

    def test_the_median_repetition_is_read_and_printed_with_its_ratios(self):
        import contextlib
        import io
        from workshop_cli import benchmarks
        found = benchmarks.wake_against_floor(self.REPORT)
        self.assertEqual(found["futex_floor"], (18.0, None))
        self.assertEqual(found["lesson06"], (24.0, 1.3333))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            benchmarks.print_wake_against_floor(self.REPORT)
        self.assertIn("futex wake-up 18.0 us; lesson05 21.0 us (1.17x), lesson06 24.0 us (1.33x)",
                      out.getvalue())

    def test_nothing_is_printed_without_the_benchmark(self):
        import contextlib
        import io
        from workshop_cli import benchmarks
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            benchmarks.print_wake_against_floor({"benchmarks": []})
        self.assertEqual(out.getvalue(), "")
