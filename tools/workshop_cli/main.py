"""Argument parsing and the commands of ./workshop."""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from . import (bench_lessons, benchmarks, breakit, build as b, carry, charts, check, classroom,
               export, grading, hints, node, testing, watch)
from .lessons import ROOT, UsageError, all_lessons, find_lesson
from . import args as argtypes

EPILOG = """\
examples:
  ./workshop tour                      every lesson's pool against oneTBB and OpenMP
  ./workshop check                     everything CI checks
  ./workshop test 1                    your code for lesson 01, summarised per exercise
  ./workshop test 1 --exercise 2       only exercise 2's tests
  ./workshop test 1 --solution --tsan  the reference solution under ThreadSanitizer
  ./workshop hint 1 2                  the first hint for lesson 01, exercise 2
"""


def cmd_list(_args) -> int:
    status = testing.load_status()
    print("lessons (./workshop test N runs one):")
    for lesson in all_lessons():
        entry = status.get(f"{lesson.nn}/starter/default")
        state = "not run yet"
        if entry:
            done = sum(1 for p, t in entry["exercises"].values() if p == t)
            state = f"{done}/{len(lesson.exercises)} exercises pass"
        print(f"  {lesson.number:>2}  {lesson.title:<44} {state}")
    return 0


def cmd_test(args) -> int:
    preset = "tsan" if args.tsan else "asan" if args.asan else "default"
    return testing.run_test(find_lesson(args.lesson), exercise=args.exercise,
                            solution=args.solution, preset=preset, verbose=args.verbose,
                            jobs=args.jobs)


def cmd_hint(args) -> int:
    lesson = find_lesson(args.lesson)
    level = None if args.all else args.level
    print(hints.hint_text(lesson, args.exercise, level))
    return 0


def cmd_bench(args) -> int:
    lesson = find_lesson(args.lesson)
    student = export.is_student_edition()
    if args.solution and student:
        raise UsageError("this is the student edition: it has no solutions/ to measure")
    # Your own code by default: what a learner wants to see is what *their* idea bought. The
    # student edition's plain binary already measures lessons/ (it has nothing else).
    # The book's figures are the reference's: --save-to-book measures it, whatever else is said.
    mine = not args.solution and not args.save_to_book and not student
    binary = f"bench_lesson{lesson.nn}" + ("_mine" if mine else "")
    # The other lessons bench N is built from: the learner's too in the student edition.
    others = bench_lessons.linked_lessons(lesson.number)[:-1]
    yours = f"measuring YOUR code in lessons/{lesson.folder} (the rows named lesson{lesson.nn})"
    if student:
        beside = f", beside your code of {bench_lessons.lessons_phrase(others)}" if others else ""
        b.progress(yours + beside)
    elif mine:
        against = (f", against the reference solution of {bench_lessons.lessons_phrase(others)}"
                   if others else "")
        b.progress(yours + against + "; --solution measures the reference instead")
    else:
        b.progress(f"measuring the reference solution in solutions/{lesson.folder}")
    out = b.build_dir("bench") / "results" / f"{binary}.json"
    try:
        report = benchmarks.run_benchmark(binary, out, repetitions=args.repetitions,
                                          min_time=args.min_time, bench_filter=args.filter)
    except b.BuildError as e:
        if not (mine or student):
            raise
        # Name the learner's lessons that failed: bench N is built from more than lesson N.
        raise bench_lessons.explain(e, lesson.number, student=student) from None
    previous = f"lesson{lesson.number - 1:02d}" if lesson.number > 0 else "sequential"
    table = benchmarks.medians(report)
    benchmarks.print_table(table, reference=previous)
    benchmarks.print_wake_against_floor(report)
    _finish_bench_output(table, previous, f"Lesson {lesson.nn} against its peers (lower is faster)", out,
                         args.save_to_book)
    return 0


def _finish_bench_output(table, reference: str, title: str, out_json, save: bool) -> None:
    """Draws the charts from the JSON, beside it; with --save-to-book the JSON goes into the book
    first and its charts are drawn there, by the same code (charts.write_charts)."""
    print(f"\nfull results: {b.shown(out_json)}")
    for svg in charts.write_charts(out_json, save_to_book=save):
        print(f"chart: {b.shown(svg)}")
    if save:
        print("saved to book/src/charts/ for the book")


def cmd_charts(_args) -> int:
    return charts.redraw_book()


def cmd_tour(args) -> int:
    out = b.build_dir("bench") / "results" / "tour.json"
    b.progress("the tour: building the reference pools and the peers (first time: a minute) ...")
    report = benchmarks.run_benchmark("ws_tour", out, repetitions=args.repetitions,
                                      min_time=args.min_time, bench_filter=args.filter)
    table = benchmarks.medians(report)
    reference = "onetbb" if any("onetbb" in row for row in table.values()) else "sequential"
    benchmarks.print_table(table, reference=reference)
    benchmarks.print_ideal_shares(table, report.get("context", {}).get("num_cpus", 0))
    _finish_bench_output(table, reference, "The tour: every lesson against the peers (lower is faster)", out,
                         args.save_to_book)
    return 0


def cmd_check(args) -> int:
    if export.is_student_edition():
        print("student edition: check grades your code in every lesson (no solutions here)")
        return grading.run_grade(None, ROOT / "reports", threshold=100, tsan=not args.quick,
                                 solution=False)
    return check.run_check(quick=args.quick)


def cmd_grade(args) -> int:
    if args.solution and export.is_student_edition():
        raise UsageError("this is the student edition: it has no solutions/ to grade")
    if args.submission and args.class_dir:
        raise UsageError("--submission grades one checkout, --class a folder of them: "
                         "choose one")
    return grading.run_grade(args.lessons, Path(args.out), threshold=args.threshold,
                             tsan=not args.no_tsan, solution=args.solution,
                             submission=args.submission, class_dir=args.class_dir,
                             hidden=args.hidden, repeat=args.repeat, jobs=args.jobs)


def cmd_export_student(args) -> int:
    if export.is_student_edition():
        raise UsageError("this is already a student edition: export from the instructors' "
                         "copy")
    return export.export_student(args.dir, args.lesson)


def cmd_classroom_workflow(args) -> int:
    if args.lesson is None:
        print(classroom.workflow(all_lessons()), end="")
    else:
        lesson = find_lesson(str(args.lesson))
        print(classroom.workflow([lesson], single_lesson=True), end="")
    return 0


def cmd_watch(args) -> int:
    lesson = find_lesson(args.lesson)

    def run_once() -> int:
        try:
            return testing.run_test(lesson, exercise=args.exercise)
        except b.BuildError as e:  # keep watching: the next save may fix it
            print(f"workshop: {e}", file=sys.stderr)
            return 1

    return watch.watch(lesson, run_once)


def cmd_break_it(args) -> int:
    lesson = find_lesson(args.lesson)
    if args.patch is None:
        return breakit.list_patches(lesson)
    return breakit.run_patch(lesson, args.patch)


def cmd_trace(args) -> int:
    from . import trace
    lesson = find_lesson(args.lesson)
    out = args.out or b.build_dir("trace") / "results" / f"lesson{lesson.nn}"
    return trace.run(lesson, args.workload, args.workers, args.solution, out,
                     save_to_book=args.save_to_book)


def cmd_transcripts(_args) -> int:
    from . import transcripts
    for path in transcripts.make_all():
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


def cmd_sync(args) -> int:
    if export.is_student_edition():
        raise UsageError("this is the student edition: generated files come from solutions/, "
                         "which it does not have (every copy here is already in place)")
    if args.record:
        number, file = args.record
        lesson = find_lesson(number)
        for patch in carry.record(lesson.number, file):
            print(f"recorded the hand edit of {file} in lesson {lesson.nn} as "
                  f"{patch.relative_to(ROOT)}")
    if args.check:
        problems = carry.drift()
        for line in problems:
            print(line)
        n = len(carry.generate().texts)
        if problems:
            print(f"sync: {len(problems)} problems in {n} generated files (carried, given, "
                  "starter and idea copies)")
            return 1
        print(f"sync: all {n} generated files (carried, given, starter and idea copies) match "
              "their source")
        return 0
    written, failures = carry.sync()
    for path in written:
        print(f"wrote {path.relative_to(ROOT)}")
    if written:
        print(f"(the text each replaced is in {carry.PREVIOUS_DIR}/, in case it held an edit to "
              "keep: copy it back and run ./workshop sync --record N FILE)")
    print(f"sync: {len(written)} files written, "
          f"{len(carry.generate().texts) - len(written)} already up to date")
    if failures:
        print(failures, file=sys.stderr)
        return 1
    return 0


def cmd_status(_args) -> int:
    status = testing.load_status()
    if not status:
        print("no test run recorded yet: try ./workshop test 0")
        return 0
    for lesson in all_lessons():
        for key, entry in sorted(status.items()):
            nn, kind, preset = key.split("/")
            if nn != lesson.nn:
                continue
            print(f"lesson {nn} ({kind}, {preset} build, {entry.get('time', '?')})")
            for ex in lesson.exercises:
                p, t = entry["exercises"].get(str(ex.number), (None, None))
                state = "not run" if p is None else f"{p}/{t} tests pass"
                mark = "ok  " if p is not None and p == t else "    "
                print(f"  {mark}exercise {ex.number}: {ex.title:<36} {state}")
    return 0


def cmd_book(args) -> int:
    node.ensure_book_dependencies()
    book = node.BOOK
    if subprocess.run(["npm", "run", "--silent", "build"], cwd=book).returncode:
        print("workshop: the book did not build (see above)", file=sys.stderr)
        return 1
    if args.build_only:
        print(f"built: {(book / '_book' / 'index.html').relative_to(ROOT)}")
        return 0
    return subprocess.run(["npm", "run", "--silent", "serve", "--", str(args.port)],
                          cwd=book).returncode


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="workshop", description="The work-stealing workshop's tool.",
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="command")
    sub.add_parser("list", help="the lessons and how far you got").set_defaults(func=cmd_list)

    t = sub.add_parser("test", help="build and run one lesson's tests, per exercise")
    t.add_argument("lesson", help="lesson number, e.g. 1")
    t.add_argument("--exercise", "-e", type=int, help="only this exercise's tests")
    t.add_argument("--solution", action="store_true", help="test the reference solution")
    t.add_argument("--tsan", action="store_true", help="under ThreadSanitizer (clang)")
    t.add_argument("--asan", action="store_true", help="under AddressSanitizer + UBSan (clang)")
    t.add_argument("--verbose", "-v", action="store_true", help="show every failure")
    t.add_argument("--jobs", "-j", type=argtypes.positive_int, default=2,
                   help="tests run at once (default 2)")
    t.set_defaults(func=cmd_test)

    h = sub.add_parser("hint", help="hints for an exercise, from a nudge to nearly the answer")
    h.add_argument("lesson")
    h.add_argument("exercise", type=int, nargs="?")
    h.add_argument("--level", type=argtypes.positive_int, default=1,
                   help="show hints 1..LEVEL (default 1)")
    h.add_argument("--all", action="store_true", help="show every hint")
    h.set_defaults(func=cmd_hint)

    for name, func, helptext in (("bench", cmd_bench, "one lesson's benchmark"),
                                 ("tour", cmd_tour, "every lesson's pool against the peers")):
        s = sub.add_parser(name, help=helptext)
        if name == "bench":
            s.add_argument("lesson", type=argtypes.bench_lesson)
            s.add_argument("--solution", action="store_true",
                           help="measure the reference solution instead of your code "
                                "(--save-to-book always does)")
        s.add_argument("--repetitions", type=argtypes.positive_int, default=3,
                       help="runs per benchmark (median)")
        s.add_argument("--min-time", type=argtypes.positive_float, default=0.2,
                       help="seconds per repetition")
        s.add_argument("--filter", type=argtypes.regex, help="only benchmarks matching this regex")
        s.add_argument("--save-to-book", action="store_true",
                       help="copy the JSON and the SVG chart to book/src/charts/")
        s.set_defaults(func=func)

    c = sub.add_parser("check", help="everything CI checks (both directions, sanitizers, book)")
    c.add_argument("--quick", action="store_true", help="skip ASan, benchmarks and the book")
    c.set_defaults(func=cmd_check)

    g = sub.add_parser("grade", help="grade lessons, a student's checkout (--submission) or a "
                       "class (--class): JSON, Markdown and JUnit reports, gradebook.csv")
    g.add_argument("--lessons", type=argtypes.lesson_spec,
                   help="which lessons, e.g. 1-4 or 0,2 (default: all; with --submission or "
                        "--class, those the checkouts have)")
    g.add_argument("--out", type=argtypes.output_dir, default="reports",
                   help="folder for the reports (default reports/)")
    g.add_argument("--threshold", type=argtypes.percent, default=100.0,
                   help="total score in percent (0-100) needed for exit code 0 (default 100)")
    g.add_argument("--no-tsan", action="store_true", help="skip the ThreadSanitizer run")
    g.add_argument("--solution", action="store_true", help="grade the reference solutions")
    g.add_argument("--submission", type=argtypes.submission_dir, metavar="PATH",
                   help="a student's checkout, graded from a trusted copy of this tree: only "
                        "the lessons' learner_files are taken from it")
    g.add_argument("--class", dest="class_dir", type=argtypes.class_dir, metavar="DIR",
                   help="a folder with one student's checkout per subfolder: grades each as "
                        "--submission does and writes gradebook.csv")
    g.add_argument("--hidden", type=argtypes.hidden_dir, metavar="DIR",
                   help="hidden tests: DIR/NN_topic/*.cpp (and NN_topic/model/*.cpp, explorer "
                        "tests), added to the lessons' tests")
    g.add_argument("--repeat", type=argtypes.positive_int, default=1, metavar="K",
                   help="run each test K times; it passes only if all K pass (default 1)")
    g.add_argument("--jobs", "-j", type=argtypes.positive_int, default=2,
                   help="tests run at once (default 2)")
    g.set_defaults(func=cmd_grade)

    e = sub.add_parser("export-student", help="a copy for students without the solutions: one "
                       "lesson's assignment (--lesson N) or the whole course")
    e.add_argument("dir", type=argtypes.export_dir,
                   help="a new, empty folder outside this repository")
    e.add_argument("--lesson", type=argtypes.lesson_number,
                   help="only this lesson: nothing of later lessons (whose starters hold its "
                        "answers)")
    e.set_defaults(func=cmd_export_student)

    cw = sub.add_parser("classroom-workflow", help="print the GitHub Classroom autograding "
                        "workflow (.github/workflows/classroom.yml)")
    cw.add_argument("--lesson", type=argtypes.lesson_number,
                    help="one assignment's workflow (as export-student --lesson writes it)")
    cw.set_defaults(func=cmd_classroom_workflow)

    w = sub.add_parser("watch", help="re-run a lesson's tests whenever its files change")
    w.add_argument("lesson")
    w.add_argument("--exercise", "-e", type=int)
    w.set_defaults(func=cmd_watch)

    bi = sub.add_parser("break-it", help="see a classic bug caught: a patch applied to a "
                        "scratch copy of the reference solution, and the test that catches it")
    bi.add_argument("lesson")
    bi.add_argument("patch", nargs="?", help="the patch's name (or its number, e.g. 01); "
                    "without it, the lesson's patches are listed")
    bi.set_defaults(func=cmd_break_it)

    tr = sub.add_parser("trace", help="see a lesson's pool work: every worker's tasks, steals, "
                        "parks on a timeline (trace.json for Perfetto, timeline.svg, a summary)")
    tr.add_argument("lesson")
    tr.add_argument("--workload", choices=("tree", "flat", "imbalanced", "fib", "graph", "coro"),
                    help="tree: a spawn tree of 65,535 tasks; flat: 100,000 spawns from outside; "
                         "imbalanced: 20,000 uneven tasks spawned by one task; fib: fib(27) by "
                         "join (lessons 07, 08); graph: a task graph of 20 stages of 3 nodes of "
                         "100 us, each after every node of the stage before (lesson 08); coro: "
                         "fib(24) by coroutines, co_await when_all (lesson 09). Default: tree, "
                         "graph for lesson 08, coro for lesson 09")
    tr.add_argument("--workers", type=argtypes.positive_int, default=2)
    whose = tr.add_mutually_exclusive_group()
    whose.add_argument("--solution", action="store_true", help="trace the reference solution")
    whose.add_argument("--mine", action="store_true", help="trace your code in lessons/ (the "
                       "default)")
    tr.add_argument("--out", type=argtypes.output_dir, help="folder for trace.json and "
                    "timeline.svg (default: build/trace/results/lessonNN)")
    tr.add_argument("--save-to-book", action="store_true", help="trace the reference and keep "
                    "its timeline for the book (book/src/timelines/lessonNN-WORKLOAD.json, .svg)")
    tr.set_defaults(func=cmd_trace)

    sub.add_parser("transcripts", help="run the book's example programs again and write their "
                   "transcripts (book/src/examples/*.transcript.txt)").set_defaults(
        func=cmd_transcripts)

    sy = sub.add_parser("sync", help="regenerate every file made from another (lesson.toml's "
                        "[idea], starter, given and [[carried]])")
    sy.add_argument("--check", action="store_true",
                    help="change nothing; fail, naming the file, if a copy differs")
    sy.add_argument("--record", nargs=2, metavar=("LESSON", "FILE"),
                    help="save a deliberate edit of a generated FILE of LESSON (a name, or a "
                    "path in solutions/ or lessons/) as its patch")
    sy.set_defaults(func=cmd_sync)

    sub.add_parser("status", help="progress per exercise from your last runs").set_defaults(
        func=cmd_status)

    sub.add_parser("charts", help="redraw the book's charts from their JSON in book/src/charts/ "
                   "(after editing the chart code)").set_defaults(func=cmd_charts)

    bk = sub.add_parser("book", help="build the guide and serve it on 127.0.0.1")
    bk.add_argument("--build-only", action="store_true", help="build it and exit")
    bk.add_argument("--port", type=int, default=3000)
    bk.set_defaults(func=cmd_book)
    return p


def main(argv: list[str]) -> int:
    p = parser()
    args = p.parse_args(argv)
    if not getattr(args, "func", None):
        p.print_help()
        return 2
    try:
        return args.func(args)
    except UsageError as e:
        print(f"workshop: {e}", file=sys.stderr)
        return 2
    except b.BuildError as e:
        print(f"workshop: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
