"""`./workshop trace N`: one lesson's pool on one standard workload with every worker's events
recorded (the `trace` preset builds bench/trace_run.cpp against the lesson, with the hooks of
<ws/trace.hpp> compiled in), then a summary per worker and a timeline picture.

The trace is a Chrome Trace Event file (Chromium's DevTools Performance panel and Perfetto open it;
book/tools/trace-viewer.js checks that the panel does); summarize() and
problems() read it back, so what the summary says is what the picture shows."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from . import build as b
from . import export, node
from .environment import install_hint
from .lessons import ROOT, Lesson, UsageError, all_lessons

WORKLOADS = ("tree", "flat", "imbalanced", "fib", "graph", "coro")
# The lessons whose pools record (lesson 00 has no pool), as bench/CMakeLists.txt builds them.
TRACED = range(1, 10)
# The workloads that need more than a pool, and the lesson file that has it: the rule by which
# bench/CMakeLists.txt gives ws_trace_lessonNN the workload (trace_run.cpp).
NEEDS = {"fib": ("fork_join.hpp", "join"),
         "graph": ("task_graph.hpp", "task graphs"),
         "coro": ("async.hpp", "coroutines")}
DRAW = ROOT / "book" / "tools" / "lib" / "timeline.js"


@dataclass
class Lane:
    worker: int
    tasks: int = 0
    busy_us: float = 0.0
    parked_us: float = 0.0
    helping_us: float = 0.0
    steals_tried: int = 0
    steals_won: int = 0
    stolen_tasks: int = 0
    injector_takes: int = 0
    longest_idle_us: float = 0.0


def _slices(events: list[dict]) -> tuple[dict[tuple[int, str], list[tuple[float, float, int]]],
                                          list[str]]:
    """(worker, name) -> [(start, end, depth)] and the problems found pairing begins with ends."""
    out: dict[tuple[int, str], list[tuple[float, float, int]]] = {}
    open_: dict[tuple[int, str], list[float]] = {}
    problems = []
    for e in events:
        key = (e.get("tid"), e.get("name"))
        if e.get("ph") == "B":
            open_.setdefault(key, []).append(e["ts"])
        elif e.get("ph") == "E":
            stack = open_.get(key)
            if not stack:
                problems.append(f"worker {key[0]}: an end of '{key[1]}' at {e['ts']} us without "
                                "a begin")
                continue
            start = stack.pop()
            out.setdefault(key, []).append((start, e["ts"], len(stack)))
    for (worker, name), stack in open_.items():
        if stack:
            problems.append(f"worker {worker}: {len(stack)} '{name}' slice(s) never ended")
    return out, problems


def summarize(trace: dict) -> tuple[list[Lane], float, list[str]]:
    """Per worker: tasks, busy/parked/helping time, steals, the longest time without a task;
    with the run's length (first task's start to last task's end) and the problems that make the
    trace inconsistent (a begin without its end, two top-level tasks overlapping on one lane, a
    steal whose victim is not another worker, counts that differ from stats())."""
    events = [e for e in trace.get("traceEvents", []) if e.get("ph") != "M"]
    workers = sum(1 for e in trace.get("traceEvents", []) if e.get("name") == "thread_name")
    lanes = [Lane(w) for w in range(workers)]
    slices, problems = _slices(events)
    # The run: from the first task's start to the last task's end (before it, the workload may
    # calibrate its kernel; after it, the workers only look for more).
    tasks = [(s, e) for (_, name), spans in slices.items() if name == "task" for s, e, _ in spans]
    start = min((s for s, _ in tasks), default=0.0)
    end = max((e for _, e in tasks), default=0.0)
    for (worker, name), spans in slices.items():
        if not 0 <= worker < workers:
            problems.append(f"an event on worker {worker}, but the trace has {workers} workers")
            continue
        lane = lanes[worker]
        top = sorted((s, e) for s, e, depth in spans if depth == 0)
        # Time inside the run only (parked before the first task is not the run's).
        length = sum(max(0.0, min(e, end) - max(s, start)) for s, e in top)
        if name == "task":
            lane.tasks += len(spans)
            lane.busy_us = length
            helping = slices.get((worker, "helping"), [])
            for s, e, depth in spans:
                if depth > 0 and not any(hs <= s and e <= he for hs, he, _ in helping):
                    problems.append(f"worker {worker}: a task began at {s} us while another ran, "
                                    "outside a helping wait (a lane runs one task at a time)")
                    break
            gaps = [s2 - e1 for (_, e1), (s2, _) in zip([(start, start)] + top, top + [(end, end)])]
            lane.longest_idle_us = max(gaps, default=end - start)
        elif name == "parked":
            lane.parked_us = length
        elif name == "helping":
            lane.helping_us = length
    no_victim: dict[int, list] = {}  # worker -> the victims its steals named that are no worker
    for e in events:
        if e.get("ph") != "i" or not 0 <= e.get("tid", -1) < workers:
            continue
        lane = lanes[e["tid"]]
        got = e.get("args", {}).get("got", 0)
        if e["name"].startswith("steal"):
            lane.steals_tried += 1
            lane.steals_won += got > 0
            lane.stolen_tasks += got
            victim = e.get("args", {}).get("victim")
            if not (isinstance(victim, int) and 0 <= victim < workers and victim != e["tid"]):
                no_victim.setdefault(e["tid"], []).append(victim)
        elif e["name"] == "injector":
            # One take per event, whatever its "got" says: from lesson 06 on a take is a batch
            # whose size the pool does not know at the hook, recorded as 0 ("not counted"), and
            # stats().injector_takes counts takes, not tasks.
            lane.injector_takes += 1
    for worker, victims in sorted(no_victim.items()):
        problems.append(f"worker {worker}: {len(victims)} of its steals name no other worker as "
                        f"the victim (the first names {victims[0]})")
    problems += _against_stats(trace.get("otherData", {}), lanes, events)
    for lane in lanes:
        if lane.tasks == 0:
            lane.longest_idle_us = end - start
    return lanes, end - start, problems


def _against_stats(other: dict, lanes: list[Lane], events: list[dict]) -> list[str]:
    """The trace's counts against the pool's own stats(), read after the run: tasks per worker
    exactly (none runs after wait_idle), steals and injector takes within the window in which
    stats() read (the workers may still be searching then, each with at most one attempt
    counted but not yet recorded). A count that stats() leaves at 0 is
    not compared: lesson 05's pool records its takes from the shared queue as injector takes,
    but has no injector to count in stats()."""
    stats = other.get("stats")
    dropped = other.get("dropped", [])
    if any(dropped):
        return [f"events were dropped (a lane was full: {dropped}), so counts are incomplete"]
    if not stats:
        return []
    problems = []
    per_worker = stats.get("executed_per_worker", [])
    if per_worker and per_worker != [lane.tasks for lane in lanes]:
        problems.append(f"tasks per worker: the trace has {[lane.tasks for lane in lanes]}, "
                        f"stats() says {per_worker}")
    start, end = other.get("stats_window_us", [float("inf"), float("inf")])
    marks = [e for e in events if e.get("ph") == "i"]

    def is_steal(e: dict) -> bool:
        return e.get("name", "").startswith("steal")

    # A pool bumps its counter before the attempt and records the event after it, so a count
    # that stats() read may belong to an event stamped after the window: at most one a worker,
    # the first of its events after the read.
    for name, counted in (("steal_attempts", is_steal),
                          ("steals", lambda e: is_steal(e) and e.get("args", {}).get("got", 0) > 0),
                          ("injector_takes", lambda e: e.get("name") == "injector")):
        low = sum(1 for e in marks if e["ts"] <= start and counted(e))
        high = sum(1 for e in marks if e["ts"] <= end and counted(e))
        high += len({e["tid"] for e in marks if e["ts"] > end and counted(e)})
        if stats.get(name, 0) and not low <= stats[name] <= high:
            problems.append(f"{name}: stats() says {stats[name]}, the trace has {low} before it "
                            f"read and {high} after")
    return problems


def print_summary(lanes: list[Lane], end_us: float) -> None:
    print(f"run: {end_us / 1000:.2f} ms, {len(lanes)} workers")
    print(f"{'worker':>6} {'busy':>7} {'tasks':>8} {'steals won/tried':>17} {'injector':>8} "
          f"{'parked':>10} {'helping':>10} {'longest idle':>13}")
    for lane in lanes:
        busy = 100.0 * lane.busy_us / end_us if end_us else 0.0
        print(f"{lane.worker:>6} {busy:>6.1f}% {lane.tasks:>8} "
              f"{f'{lane.steals_won}/{lane.steals_tried}':>17} {lane.injector_takes:>8} "
              f"{lane.parked_us / 1000:>8.2f}ms {lane.helping_us / 1000:>8.2f}ms "
              f"{lane.longest_idle_us / 1000:>11.2f}ms")


def has(lesson: Lesson, workload: str) -> bool:
    """Whether the lesson can run the workload (its pool runs tree, flat and imbalanced)."""
    if workload not in NEEDS:
        return True
    return (ROOT / "lessons" / lesson.folder / NEEDS[workload][0]).exists()


def default_workload(lesson: Lesson) -> str:
    """The spawn tree; for lessons 08 and 09, whose pool is lesson 07's carried unchanged, the
    workload that runs the lesson's own code (the tree would run none of it)."""
    return next((w for w in ("graph", "coro") if has(lesson, w)), "tree")


def check_request(lesson: Lesson, workload: str, solution: bool) -> None:
    """Refuses what cannot run, before anything is built."""
    if lesson.number not in TRACED:
        raise UsageError(f"lesson {lesson.nn} has no pool to trace: lessons "
                         f"{TRACED[0]:02d} to {TRACED[-1]:02d} have")
    if not has(lesson, workload):
        file, what = NEEDS[workload]
        others = [x.nn for x in all_lessons() if x.number in TRACED and has(x, workload)]
        where = (f"lesson {others[0]} has it" if len(others) == 1 else
                 f"lessons {' and '.join(others)} have it" if others else "no lesson here has it")
        choices = [w for w in WORKLOADS if has(lesson, w)]
        raise UsageError(f"the {workload} workload needs {what} ({file}), which lesson "
                         f"{lesson.nn} does not have ({where}): choose "
                         f"{', '.join(choices[:-1])} or {choices[-1]} for this lesson")
    if solution and export.is_student_edition():
        raise UsageError("this is the student edition: it has no solutions/ to trace")


def run(lesson: Lesson, workload: str | None, workers: int, solution: bool, out_dir: Path,
        save_to_book: bool = False) -> int:
    solution = solution or save_to_book  # the book's timelines are the reference's
    workload = workload or default_workload(lesson)
    check_request(lesson, workload, solution)
    target = f"ws_trace_lesson{lesson.nn}" + ("" if solution else "_mine")
    whose = "the reference solution" if solution else f"YOUR code in lessons/{lesson.folder}"
    b.progress(f"tracing {whose} on '{workload}' with {workers} workers (--solution traces the "
               "reference)" if not solution else f"tracing {whose} on '{workload}' with "
               f"{workers} workers")
    b.build("trace", [target])
    out_dir.mkdir(parents=True, exist_ok=True)
    trace_json = out_dir / "trace.json"
    exe = b.build_dir("trace") / "bench" / target
    try:
        r = subprocess.run([str(exe), "--workload", workload, "--workers", str(workers),
                            "--out", str(trace_json)], capture_output=True, text=True,
                           timeout=600)
    except subprocess.TimeoutExpired:
        where = ("" if solution else f" (./workshop test {lesson.number} finds where, with the "
                 "exercise's likely cause)")
        raise UsageError(f"the traced run did not end within 10 minutes: {whose} hangs on "
                         f"'{workload}'{where}") from None
    if r.returncode != 0:
        said = (r.stdout + r.stderr).strip()
        if not solution and ("not implemented" in said.lower() or "terminate" in said):
            raise UsageError(f"your lesson {lesson.nn} code is not finished yet (it threw): "
                             f"./workshop test {lesson.number} says what is left; --solution "
                             "traces the reference")
        raise UsageError(f"the traced run failed:\n{said}")
    trace = json.loads(trace_json.read_text())
    # What the picture's caption says about the run: where, and how busy the machine was.
    trace.setdefault("otherData", {})["machine"] = _machine()
    trace_json.write_text(json.dumps(trace))
    lanes, end, problems = summarize(trace)
    print_summary(lanes, end)
    if not solution:
        problems, notes = learner_steal_notes(lesson, problems)
        for note in notes:
            print(f"note: {note}")
    for p in problems:
        print(f"inconsistent: {p}")
    print(f"\ntrace: {b.shown(trace_json)}  (open it in Chromium's DevTools, Performance panel, "
          "'Load profile'; or in ui.perfetto.dev)")
    svg = out_dir / "timeline.svg"
    if DRAW.exists():
        _draw(trace_json, svg)
        print(f"timeline: {b.shown(svg)}")
    else:
        print("timeline: not drawn (this edition has no book/tools to draw it with)")
    if save_to_book and not problems:
        name = f"lesson{lesson.nn}-{workload}"
        r = subprocess.run(["node", str(DRAW), "--book", str(trace_json), name],
                           capture_output=True, text=True, cwd=ROOT)
        if r.returncode != 0:
            raise UsageError(f"saving the timeline failed:\n{(r.stdout + r.stderr).strip()}")
        print(f"saved to the book: book/src/timelines/{name}.json and .svg")
    return 1 if problems else 0


def records_steals(lesson: Lesson) -> bool:
    """Whether the learner's own files of the lesson record steals (from lesson 04 on, the given
    steal() around the exercise's steal_batch does; in lessons 02 and 03 the steal code is the
    exercise, and only the reference's has the hook)."""
    return _learners_files_record(lesson, "steal")


def _learners_files_record(lesson: Lesson, event: str) -> bool:
    folder = ROOT / "lessons" / lesson.folder
    return any(f"WS_TRACE_EVENT({event}" in f.read_text() for f in sorted(folder.glob("*.[ch]pp")))


def learner_steal_notes(lesson: Lesson, problems: list[str]) -> tuple[list[str], list[str]]:
    """A learner's run whose steal counts disagree with stats(): the problems still to show, and
    notes that say why in the learner's terms."""
    if not any(p.startswith("steal") for p in problems):
        return problems, []
    if not records_steals(lesson):
        return ([p for p in problems if not p.startswith("steal")],
                ["your steals are not on the timeline (your steal code is the exercise, and "
                 "only the reference's records them; stats() counted them)"])
    return problems, ["the given steal() records each visit, with the tasks it got read off "
                      "stolen_tasks before and after your steal_batch: a steal_batch that moves "
                      "tasks without counting them shows as 'got 0' (./workshop test "
                      f"{lesson.number} checks the counts too)"]


def _machine() -> dict:
    from .charts import _cpu_model
    try:
        load = round(os.getloadavg()[0], 1)
    except OSError:
        load = None
    return {"cpu_model": _cpu_model(), "cpus": os.cpu_count(), "load_average": load,
            "command": "./workshop " + " ".join(shlex.quote(a) for a in _without_out(sys.argv[1:]))}


def _without_out(argv: list[str]) -> list[str]:
    """The command as anyone can repeat it: without --out, a folder of this machine's."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--out":
            skip = True
        elif not a.startswith("--out="):
            out.append(a)
    return out




def _draw(trace_json: Path, svg: Path) -> None:
    try:
        node.ensure_book_dependencies(quiet=True)
    except UsageError as e:
        if "not installed" in str(e):
            raise UsageError("the timeline is drawn with Node.js, which is not installed "
                             f"({install_hint('node', 'npm')}); trace.json is written") from None
        raise
    r = subprocess.run(["node", str(DRAW), str(trace_json), str(svg)], capture_output=True,
                       text=True, cwd=ROOT)
    if r.returncode != 0:
        raise UsageError(f"drawing the timeline failed:\n{(r.stdout + r.stderr).strip()}")
