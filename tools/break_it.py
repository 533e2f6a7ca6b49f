#!/usr/bin/env python3
"""Break it yourself, checked: every classic bug a chapter claims its tests catch is a patch
file, and this script proves the claim.

For each lesson with solutions/NN_topic/break-it/manifest.toml, and for each patch there that
is marked reliable, it copies the source tree to a temporary directory (sharing nothing with
the real build directories), applies the patch to the copy with `patch -p1`, builds only that
lesson's solution tests with the patch's CMake preset, runs the named test and checks that it
FAILS. It exits non-zero if a patch does not apply, does not build, or leaves its test green.

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
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

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


def run(cmd: list[str], cwd: Path, env: dict | None = None,
        timeout: float | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": os.environ.get(
        "CMAKE_BUILD_PARALLEL_LEVEL", "2"), **(env or {})}
    return subprocess.run(cmd, cwd=cwd, env=full_env, text=True, capture_output=True,
                          timeout=timeout, check=False)


class Failure(Exception):
    pass


class Sandbox:
    """A copy of the source tree with one build directory per preset, where patches are applied
    one at a time (and taken back out) so that each build only recompiles what a patch touches."""

    def __init__(self, keep: bool) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="ws-break-it-"))
        self.keep = keep
        for name in COPY:
            src = ROOT / name
            if src.is_dir():
                shutil.copytree(src, self.dir / name, ignore=shutil.ignore_patterns(
                    "build", "node_modules", "__pycache__"))
            elif src.exists():
                shutil.copy2(src, self.dir / name)
        self.configured: set[str] = set()

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
            r = run(["cmake", "--preset", preset, "-DWS_BUILD_BENCHMARKS=OFF",
                     "-DWS_TEST_PER_FILE=ON"], self.dir)
            if r.returncode != 0:
                raise Failure(f"configuring the '{preset}' copy failed:\n{r.stdout[-3000:]}"
                              f"{r.stderr[-3000:]}")
            self.configured.add(preset)
        bdir = self.dir / "build" / preset
        narrow = self.per_file_target(patch, target)
        if narrow and run(["cmake", "--build", str(bdir), "--target", narrow],
                          self.dir).returncode == 0:
            return bdir / narrow
        r = run(["cmake", "--build", str(bdir), "--target", target], self.dir)
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


def gate(patches: list[Patch], keep: bool, load: bool = True) -> int:
    reliable = [p for p in patches if p.reliable]
    skipped = [p for p in patches if not p.reliable and not p.explorer]
    explored = [p for p in patches if p.explorer]
    problems = []
    started = time.monotonic()
    box = Sandbox(keep)
    try:
        def patched_run(patch: Patch, target: str, preset: str, test: str, repeat: int,
                        busy: bool) -> bool | None:
            """Applies the patch, builds `target`, runs `test`; True if it failed (caught),
            None if the patch could not be applied or built (recorded as a problem)."""
            try:
                box.apply(patch)
                try:
                    exe = box.build(patch, target, preset)
                    with BusyLoad(busy):
                        failed, _detail = box.run_test(patch, exe, repeat, test)
                finally:
                    box.apply(patch, reverse=True)
            except Failure as e:
                problems.append(str(e))
                say(f"ERROR {patch.name}: {str(e).splitlines()[0]}")
                return None
            return failed

        for patch in sorted(reliable, key=lambda p: p.preset):
            t0 = time.monotonic()
            failed = patched_run(patch, patch.target, patch.preset, patch.test, patch.repeat, load)
            took = f"{time.monotonic() - t0:.0f} s"
            if failed:
                say(f"ok    {patch.name}: {patch.test} fails ({patch.preset}, {took})")
            elif failed is not None:
                problems.append(f"{patch.name}: {patch.test} still passes with the bug in "
                                f"({patch.preset} build, {patch.repeat} run(s)): the chapter's "
                                "claim is no longer true")
                say(f"FAIL  {patch.name}: {patch.test} passes with the bug in ({took})")
        # The explorer's verdict does not depend on the machine: every patch that names an
        # explorer test is gated by it, reliable or not (one default build, no busy load needed).
        for patch in explored:
            t0 = time.monotonic()
            failed = patched_run(patch, patch.explorer_target, "default", patch.explorer, 1, False)
            took = f"{time.monotonic() - t0:.0f} s"
            if failed:
                say(f"ok    {patch.name}: {patch.explorer} fails (explorer, {took})")
            elif failed is not None:
                problems.append(f"{patch.name}: the explorer test {patch.explorer} passes with "
                                "the bug in")
                say(f"FAIL  {patch.name}: {patch.explorer} passes with the bug in ({took})")
    finally:
        box.close()
    for p in skipped:
        say(f"skip  {p.name}: not reliable on this hardware (see manifest.toml), not gated")
    loaded = f", each test run beside {os.cpu_count() or 2} busy processes" if load else ""
    gated = len(reliable) + len(explored)
    say(f"break-it: {gated - len(problems)} of {gated} gated checks make their test fail "
        f"({len(reliable)} tests{loaded}; {len(explored)} explorer tests) "
        f"({time.monotonic() - started:.0f} s)")
    if problems:
        say("\n".join(problems))
        return 1
    return 0


def measure(patches: list[Patch], runs: int, preset: str | None, keep: bool,
            load: bool = False) -> int:
    box = Sandbox(keep)
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
    ap.add_argument("--lesson", help="only this lesson's patches, e.g. 04")
    ap.add_argument("--measure", type=int, metavar="N",
                    help="run each patch's test N times and print how often it failed")
    ap.add_argument("--preset", choices=["default", "tsan", "asan"],
                    help="with --measure: use this preset instead of the manifest's")
    ap.add_argument("--test", help="with --measure: run this test (Suite.Test) instead")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copy")
    ap.add_argument("--loaded", action="store_true",
                    help="with --measure: run beside one busy process per core (the gate "
                         "always does)")
    ap.add_argument("--quiet-machine", action="store_true",
                    help="gate without the busy processes (not what CI does)")
    args = ap.parse_args(argv)
    patches = load_patches()
    if args.lesson:
        patches = [p for p in patches if p.lesson == f"{int(args.lesson):02d}"]
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
    return gate(patches, args.keep, load=not args.quiet_machine)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
