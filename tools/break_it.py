#!/usr/bin/env python3
"""Break it yourself, checked: every classic bug a chapter claims its tests catch is a patch
file, and this script proves the claim.

For each lesson with solutions/NN_topic/break-it/manifest.toml, and for each patch there that
is marked reliable, it copies the source tree to a temporary directory (sharing nothing with
the real build directories), applies the patch to the copy with `patch -p1`, builds only that
lesson's solution tests with the patch's CMake preset, runs the named test and checks that it
FAILS. It exits non-zero if a patch does not apply, does not build, or leaves its test green.
The gate works in two copies at once (`--jobs`), each lesson's patches in one: a patch's
rebuild is mostly one compiler process, which leaves the second core idle. The tests still run
one at a time, each beside the busy processes, with the other copy's build stopped meanwhile.

Patches marked `reliable = false` (a bug that this hardware or ThreadSanitizer cannot show
every time) are not gated; `--measure N` runs any patch's test N times, one process each, and
prints how often it was caught: the numbers the manifest and the chapter quote.

Python 3.11+ standard library only.

    tools/break_it.py                      # the CI gate: every reliable patch must fail its test
    tools/break_it.py --measure 20         # catch rates of every patch, 20 runs each
    tools/break_it.py --only 05 --measure 50 --preset tsan
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

# The first words of WS_SKIP_NOT_AVAILABLE_HERE's skip (<ws/testing/harness.hpp>): this machine
# lacks what the test needs (e.g. perf events in a container), so the test checked nothing.
from workshop_cli.gtest_run import NOT_AVAILABLE  # tools/, this script's folder, is on the path

ROOT = Path(__file__).resolve().parents[1]
# What the copy needs to configure and build a lesson's tests.
COPY = ["CMakeLists.txt", "CMakePresets.json", "cmake", "common", "lessons", "solutions", "tests",
        "bench"]
SANITIZER_ENV = {
    "tsan": {"TSAN_OPTIONS": "halt_on_error=1 second_deadlock_stack=1"},
    "asan": {"ASAN_OPTIONS": "detect_leaks=1", "UBSAN_OPTIONS": "print_stacktrace=1 halt_on_error=1"},
}


@dataclass
class Patch:
    lesson: str      # e.g. "04"
    folder: Path     # solutions/04_chase_lev
    file: Path       # .../break-it/01-take-before-cas.patch
    test: str        # GoogleTest name, Suite.Test
    preset: str      # default, tsan or asan
    reliable: bool
    repeat: int      # --gtest_repeat for the gate: the test must fail in at least one of them
    explorer: str | None = None  # an interleaving-explorer test (tests/NN/model) that catches it

    @property
    def explorer_target(self) -> str:
        return f"ws_lesson{self.lesson}_solution_model_tests"

    @property
    def name(self) -> str:
        return self.file.stem

    @property
    def target(self) -> str:
        return f"ws_lesson{self.lesson}_solution_tests"


def load_patches(root: Path = ROOT) -> list[Patch]:
    patches = []
    for manifest in sorted(root.glob("solutions/[0-9][0-9]_*/break-it/manifest.toml")):
        folder = manifest.parent.parent
        data = tomllib.loads(manifest.read_text())
        for entry in data.get("patch", []):
            file = manifest.parent / entry["file"]
            if not file.exists():
                raise SystemExit(f"break-it: {manifest.relative_to(root)} names {entry['file']}, "
                                 "which does not exist")
            patches.append(Patch(folder.name[:2], folder, file, entry["test"],
                                 entry.get("preset", "default"), bool(entry["reliable"]),
                                 int(entry.get("repeat", 1)), entry.get("explorer")))
    return patches


def say(message: str) -> None:
    print(message, flush=True)


def build_env(env: dict | None = None) -> dict:
    return {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": os.environ.get(
        "CMAKE_BUILD_PARALLEL_LEVEL", "2"), **(env or {})}


def run(cmd: list[str], cwd: Path, env: dict | None = None,
        timeout: float | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=build_env(env), text=True, capture_output=True,
                          timeout=timeout, check=False)


class Failure(Exception):
    pass


class NotCheckable(Failure):
    """The patch's test skipped itself as not available on this machine: no verdict here."""


def without_debug_info(root: Path, preset: str) -> list[str]:
    """The cmake options that build `preset` as it is but without -g, if it is a g++ preset
    with -g; else none. g++ makes the same code with and without -g (GCC's -fcompare-debug
    checks exactly that; the disassembly of lesson 07's test_ex2_join.cpp and lesson 09's
    thread_pool.cpp and test_ex5_out_of_memory.cpp compared equal, 2026-11-27), and -g was a
    quarter of a test file's compile time (4.7 s of user time against 3.5 s). clang's is not
    always the same code (with ASan it moved lesson 09's branches), so its presets keep -g."""
    presets = {p["name"]: p for p in
               json.loads((root / "CMakePresets.json").read_text())["configurePresets"]}
    cache: dict = {}
    name: str | None = preset
    while name:  # the preset's cache variables over those it inherits
        cache = {**presets[name].get("cacheVariables", {}), **cache}
        inherits = presets[name].get("inherits")
        name = inherits[0] if isinstance(inherits, list) else inherits
    if cache.get("CMAKE_CXX_COMPILER") != "g++":
        return []
    options = []
    for variable in ("CMAKE_CXX_FLAGS_RELWITHDEBINFO", "CMAKE_CXX_FLAGS"):
        flags = str(cache.get(variable, "")).split()
        if "-g" in flags:
            options.append(f"-D{variable}={' '.join(f for f in flags if f != '-g')}")
    return options


class Sandbox:
    """A copy of the source tree with one build directory per preset, where patches are applied
    one at a time (and taken back out) so that each build only recompiles what a patch touches.
    With debug_info=False (the gate and --measure, which only ask whether a test fails) its
    g++ builds leave out -g (without_debug_info); `./workshop break-it`, which shows a learner
    the failure, keeps it."""

    def __init__(self, keep: bool, pauser: "Pauser | None" = None,
                 debug_info: bool = True) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="ws-break-it-"))
        self.keep = keep
        self.pauser = pauser
        self.debug_info = debug_info
        for name in COPY:
            src = ROOT / name
            if src.is_dir():
                shutil.copytree(src, self.dir / name, ignore=shutil.ignore_patterns(
                    "build", "node_modules", "__pycache__"))
            elif src.exists():
                shutil.copy2(src, self.dir / name)
        self.configured: set[str] = set()

    def run_build(self, cmd: list[str]) -> subprocess.CompletedProcess:
        return self.pauser.run(cmd, self.dir) if self.pauser else run(cmd, self.dir)

    def close(self) -> None:
        if self.keep:
            say(f"(kept {self.dir})")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def apply(self, patch: Patch, reverse: bool = False) -> None:
        cmd = ["patch", "-p1", "--batch", "--no-backup-if-mismatch", "-i", str(patch.file)]
        cmd.insert(1, "-R" if reverse else "--forward")
        r = run(cmd, self.dir)
        if r.returncode != 0:
            raise Failure(f"{patch.name} does not apply to the solution "
                          f"({'reverse' if reverse else 'forward'}):\n{r.stdout}{r.stderr}")

    def build(self, patch: Patch, target: str | None = None, preset: str | None = None) -> Path:
        preset = preset or patch.preset
        target = target or patch.target
        if preset not in self.configured:
            # Only the lessons' tests: no benchmarks, whatever the preset says.
            # One test program per test file too (WS_TEST_PER_FILE): a patch then rebuilds only
            # the file that holds its test, not every test of the lesson.
            r = self.run_build(["cmake", "--preset", preset, "-DWS_BUILD_BENCHMARKS=OFF",
                                "-DWS_TEST_PER_FILE=ON",
                                *([] if self.debug_info else without_debug_info(self.dir, preset))])
            if r.returncode != 0:
                raise Failure(f"configuring the '{preset}' copy failed:\n{r.stdout[-3000:]}"
                              f"{r.stderr[-3000:]}")
            self.configured.add(preset)
        bdir = self.dir / "build" / preset
        narrow = self.per_file_target(patch, target)
        if narrow and self.run_build(["cmake", "--build", str(bdir), "--target",
                                      narrow]).returncode == 0:
            return bdir / narrow
        r = self.run_build(["cmake", "--build", str(bdir), "--target", target])
        if r.returncode != 0:
            raise Failure(f"{patch.name} does not build with the '{preset}' preset:\n"
                          f"{(r.stdout + r.stderr)[-4000:]}")
        return bdir / target

    def per_file_target(self, patch: Patch, target: str) -> str | None:
        """The one-file test program (WS_TEST_PER_FILE) that holds the test `target` is built
        for: the patch's explorer test for the model tests, its test otherwise."""
        model = target.endswith("_model_tests")
        test = patch.explorer if model else patch.test
        if not test or "." not in test:
            return None
        suite, name = test.split(".", 1)
        pattern = re.compile(rf"\bTEST(?:_F)?\(\s*{re.escape(suite)}\s*,\s*{re.escape(name)}\s*\)")
        folder = next(iter((self.dir / "tests").glob(f"{patch.lesson}_*")), None)
        if folder is None:
            return None
        for source in sorted((folder / "model" if model else folder).glob("*.cpp")):
            if pattern.search(source.read_text()):
                return f"{target}__{source.stem}"
        return None

    def run_test(self, patch: Patch, exe: Path, repeat: int,
                 test: str | None = None) -> tuple[bool, str]:
        """Runs the named test; returns (failed, the output's last lines)."""
        test = test or patch.test
        listed = run([str(exe), f"--gtest_filter={test}", "--gtest_list_tests"], self.dir)
        if test.split(".")[-1] not in listed.stdout:
            raise Failure(f"{patch.name}: the test {test} does not exist in {exe.name}")
        cmd = [str(exe), f"--gtest_filter={test}", f"--gtest_repeat={repeat}",
               "--gtest_break_on_failure=0"]
        try:
            r = run(cmd, self.dir, env=SANITIZER_ENV.get(patch.preset), timeout=900)
        except subprocess.TimeoutExpired:
            return True, "timed out (a hang counts as a failure)"
        out = (r.stdout + r.stderr).strip().splitlines()
        missing = next((l.strip() for l in out if l.strip().startswith(NOT_AVAILABLE)), None)
        if r.returncode == 0 and missing:
            raise NotCheckable(f"{patch.name}: {test} cannot run on this machine ({missing})")
        interesting = [l for l in out if "Failure" in l or "ERROR" in l or "[watchdog]" in l
                       or "[terminate]" in l or "SUMMARY" in l or "FAILED" in l]
        return r.returncode != 0, "\n".join((interesting or out)[-6:])


class BusyLoad:
    """As many busy-looping processes as cores while a test runs: a patch counts as caught only
    if its test catches it on a loaded machine too (CI machines are shared)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> "BusyLoad":
        if self.enabled:
            for _ in range(os.cpu_count() or 2):
                self.procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        return self

    def __exit__(self, *exc) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()
        self.procs.clear()


class Pauser:
    """Two sandboxes build at once (a patch's rebuild is mostly one compiler process, so it
    leaves the second core idle), but a gated test must run beside the busy processes alone:
    while one runs, every build of the other sandbox is stopped (SIGSTOP to its process group)
    and none starts, so each test sees the same machine as with one sandbox."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.testing = False
        self.builds: set[int] = set()  # process groups of the builds running now

    def run(self, cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
        """run() for a build step, in a process group of its own that a test can stop."""
        with self.cond:  # started only while no test runs, and known before one can start
            self.cond.wait_for(lambda: not self.testing)
            proc = subprocess.Popen(cmd, cwd=cwd, env=build_env(), text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True)
            self.builds.add(proc.pid)
        try:
            out, err = proc.communicate()
        finally:
            with self.cond:
                self.builds.discard(proc.pid)
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)

    def kill_all(self) -> None:
        """On an interrupt: no build of ours outlives the gate, stopped or not."""
        with self.cond:
            for pgid in self.builds:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pgid, signal.SIGKILL)
                    os.killpg(pgid, signal.SIGCONT)

    @contextlib.contextmanager
    def alone(self):
        with self.cond:
            self.cond.wait_for(lambda: not self.testing)
            self.testing = True
            for pgid in self.builds:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pgid, signal.SIGSTOP)
            wait_stopped(self.builds)
        try:
            yield
        finally:
            with self.cond:
                for pgid in self.builds:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(pgid, signal.SIGCONT)
                self.testing = False
                self.cond.notify_all()


def wait_stopped(groups: set[int], timeout: float = 30.0) -> None:
    """Until every process of these process groups has stopped (a signal is delivered
    asynchronously: a compiler may still run for a moment after SIGSTOP, and one in an
    uninterruptible sleep, reading a file on a busy disk, stops only when the read is done:
    2 s were once not enough at a load average of 13). The bound only keeps a process the
    kernel cannot stop from hanging the gate."""
    deadline = time.monotonic() + timeout
    while groups and time.monotonic() < deadline:
        running = False
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # it has exited
            if int(fields[2]) in groups and fields[0] not in "TtZX":
                running = True
                break
        if not running:
            return
        time.sleep(0.002)


def by_lesson(checks: list[tuple[Patch, bool]]) -> list[list[tuple[Patch, bool]]]:
    """Each lesson's checks in one group (a sandbox builds a lesson's library once, then only
    what each patch changes), in the order a sandbox runs them (by preset, the explorer's
    last), the groups with the most checks first. The sandboxes take the next group whenever
    they are free: a lesson's checks cost 3 to 9 s each (its test files differ in size), so a
    split fixed in advance by the number of checks left one sandbox idle for 200 s of a
    700 s gate (2026-11-27)."""
    groups: dict[str, list[tuple[Patch, bool]]] = {}
    for check in checks:
        groups.setdefault(check[0].lesson, []).append(check)
    ordered = [sorted(g, key=lambda c: (c[1], c[0].preset)) for g in groups.values()]
    return sorted(ordered, key=lambda g: (-len(g), g[0][0].lesson))


def gate(patches: list[Patch], keep: bool, load: bool = True, jobs: int = 1) -> int:
    reliable = [p for p in patches if p.reliable]
    skipped = [p for p in patches if not p.reliable and not p.explorer]
    explored = [p for p in patches if p.explorer]
    problems: list[str] = []
    unchecked: list[str] = []  # tests this machine cannot run (NotCheckable): no verdict
    started = time.monotonic()
    spent = {"build": 0.0, "test": 0.0}  # summed over the sandboxes (the summary says)
    pauser = Pauser()
    lock = threading.Lock()

    def patched_run(box: Sandbox, patch: Patch, explorer: bool) -> bool | None:
        """Applies the patch, builds its test, runs it; True if it failed (caught), None if
        the patch could not be applied or built (recorded as a problem)."""
        if explorer:
            target, preset, test, repeat = patch.explorer_target, "default", patch.explorer, 1
        else:
            target, preset, test, repeat = patch.target, patch.preset, patch.test, patch.repeat
        try:
            box.apply(patch)
            try:
                t0 = time.monotonic()
                exe = box.build(patch, target, preset)
                t1 = time.monotonic()
                # The explorer's verdict does not depend on the machine: no busy load. It is
                # alone all the same, so that no loaded test runs beside it.
                with pauser.alone(), BusyLoad(load and not explorer):
                    failed, _detail = box.run_test(patch, exe, repeat, test)
                with lock:
                    spent["build"] += t1 - t0
                    spent["test"] += time.monotonic() - t1
            finally:
                box.apply(patch, reverse=True)
        except NotCheckable as e:
            unchecked.append(str(e))
            say(f"n/a   {e}")
            return None
        except Failure as e:
            problems.append(str(e))
            say(f"ERROR {patch.name}: {str(e).splitlines()[0]}")
            return None
        return failed

    stop = threading.Event()

    def work() -> None:
        try:
            check_all()
        except Exception as e:  # a thread's exception would otherwise pass the gate unseen
            problems.append(f"break-it itself failed: {e!r}")
            say(f"ERROR {e!r}")

    def check_all() -> None:
        box = Sandbox(keep, pauser if jobs > 1 else None, debug_info=False)
        try:
            for patch, explorer in next_checks():
                if stop.is_set():
                    break
                t0 = time.monotonic()
                failed = patched_run(box, patch, explorer)
                took = f"{time.monotonic() - t0:.0f} s"
                test = patch.explorer if explorer else patch.test
                kind = "explorer" if explorer else patch.preset
                if failed:
                    say(f"ok    {patch.name}: {test} fails ({kind}, {took})")
                elif failed is not None and explorer:
                    problems.append(f"{patch.name}: the explorer test {test} passes with the "
                                    "bug in")
                    say(f"FAIL  {patch.name}: {test} passes with the bug in ({took})")
                elif failed is not None:
                    problems.append(f"{patch.name}: {test} still passes with the bug in "
                                    f"({patch.preset} build, {patch.repeat} run(s)): the "
                                    "chapter's claim is no longer true")
                    say(f"FAIL  {patch.name}: {test} passes with the bug in ({took})")
        finally:
            box.close()

    # Every patch that names an explorer test is gated by it, reliable or not.
    checks = [(p, False) for p in reliable] + [(p, True) for p in explored]
    groups = by_lesson(checks)
    sandboxes = min(max(1, jobs), len(groups))

    def next_checks():
        """The checks of the next lesson nobody has taken yet, one after another."""
        while True:
            with lock:
                if not groups:
                    return
                group = groups.pop(0)
            yield from group

    threads = [threading.Thread(target=work, daemon=True) for _ in range(sandboxes - 1)]
    for t in threads:
        t.start()
    try:
        if sandboxes:
            work()
    except BaseException:  # Ctrl-C: stop the other sandboxes too
        stop.set()
        pauser.kill_all()
        raise
    finally:
        for t in threads:
            t.join()
    for p in skipped:
        say(f"skip  {p.name}: not reliable on this hardware (see manifest.toml), not gated")
    loaded = f", each test run beside {os.cpu_count() or 2} busy processes" if load else ""
    gated = len(reliable) + len(explored) - len(unchecked)
    if unchecked:
        say(f"not checked: {len(unchecked)} gated test(s) cannot run on this machine, so this "
            "run says nothing about their patches:\n  " + "\n  ".join(unchecked))
    say(f"break-it: {gated - len(problems)} of {gated} gated checks make their test fail "
        f"({len(reliable)} tests{loaded}; {len(explored)} explorer tests; {sandboxes} "
        f"sandbox(es), building {spent['build']:.0f} s, testing {spent['test']:.0f} s) "
        f"({time.monotonic() - started:.0f} s)")
    if problems:
        say("\n".join(problems))
        return 1
    return 0


def measure(patches: list[Patch], runs: int, preset: str | None, keep: bool,
            load: bool = False) -> int:
    box = Sandbox(keep, debug_info=False)  # built as the gate builds
    try:
        for patch in patches:
            if preset:
                patch.preset = preset
            box.apply(patch)
            try:
                exe = box.build(patch)
                caught, t0 = 0, time.monotonic()
                with BusyLoad(load):
                    for _ in range(runs):
                        failed, _detail = box.run_test(patch, exe, 1)
                        caught += failed
            finally:
                box.apply(patch, reverse=True)
            how = ", loaded" if load else ", quiet"
            say(f"{patch.name}: {patch.test} ({patch.preset}{how}) caught it in {caught} of "
                f"{runs} runs ({(time.monotonic() - t0) / runs:.1f} s a run)")
    except Failure as e:
        say(f"ERROR {e}")
        return 1
    finally:
        box.close()
    return 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="only patches whose file name starts with this, e.g. 05")
    ap.add_argument("--lesson", help="only these lessons' patches, e.g. 04 or 03,07")
    ap.add_argument("--measure", type=int, metavar="N",
                    help="run each patch's test N times and print how often it failed")
    ap.add_argument("--preset", choices=["default", "tsan", "asan"],
                    help="with --measure: use this preset instead of the manifest's")
    ap.add_argument("--test", help="with --measure: run this test (Suite.Test) instead")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copy")
    ap.add_argument("--loaded", action="store_true",
                    help="with --measure: run beside one busy process per core (the gate "
                         "always does)")
    ap.add_argument("--jobs", type=int, default=2, metavar="N",
                    help="the gate: N sandboxes building at once (default 2; the tests still "
                         "run one at a time, the other sandboxes' builds stopped meanwhile)")
    ap.add_argument("--quiet-machine", action="store_true",
                    help="gate without the busy processes (not what CI does)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error(f"--jobs must be at least 1, not {args.jobs}")
    patches = load_patches()
    if args.lesson:
        try:
            lessons = {f"{int(n):02d}" for n in args.lesson.split(",")}
        except ValueError:
            ap.error(f"--lesson takes lesson numbers separated by commas, not {args.lesson!r}")
        patches = [p for p in patches if p.lesson in lessons]
    if args.only:
        patches = [p for p in patches if p.name.startswith(args.only)]
    if not patches:
        say("break-it: no patches matched")
        return 2
    if args.test:
        if not args.measure:
            ap.error("--test needs --measure")
        for p in patches:
            p.test = args.test
    if args.measure:
        return measure(patches, args.measure, args.preset, args.keep, args.loaded)
    return gate(patches, args.keep, load=not args.quiet_machine, jobs=args.jobs)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
