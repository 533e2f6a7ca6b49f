"""Consistency checks of the break-it manifests (tools/break_it.py runs the real thing in
`./workshop check`, which takes minutes): every patch applies to its solution, names a test
that exists, and an ungated patch says how often it was caught; and one run of the gate on a
patch that its test cannot catch, which must fail the gate."""
import contextlib
import difflib
import io
import re
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import break_it  # noqa: E402


class BreakItManifestTest(unittest.TestCase):
    def setUp(self):
        self.patches = break_it.load_patches(ROOT)

    def test_there_are_patches(self):
        self.assertTrue(self.patches, "no solutions/NN_topic/break-it/manifest.toml found")

    def test_every_patch_applies_to_the_solution(self):
        for p in self.patches:
            r = subprocess.run(["patch", "-p1", "--dry-run", "--batch", "-i", str(p.file)],
                               cwd=ROOT, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, f"{p.name} no longer applies:\n{r.stdout}")

    def test_every_named_test_exists_in_the_lessons_tests(self):
        for p in self.patches:
            suite, name = p.test.split(".")
            sources = "\n".join(f.read_text() for f in
                                (ROOT / "tests" / p.folder.name).glob("*.cpp"))
            self.assertRegex(sources, rf"TEST\({re.escape(suite)},\s*{re.escape(name)}\)",
                             f"{p.name} names {p.test}, which is not a test of {p.folder.name}")

    def test_every_named_explorer_test_exists(self):
        for p in self.patches:
            if not p.explorer:
                continue
            suite, name = p.explorer.split(".")
            sources = "\n".join(f.read_text() for f in
                                (ROOT / "tests" / p.folder.name / "model").glob("*.cpp"))
            self.assertRegex(sources, rf"\b{re.escape(name)}\b",
                             f"{p.name} names the explorer test {p.explorer}, which is not in "
                             f"tests/{p.folder.name}/model")

    def test_presets_are_known(self):
        for p in self.patches:
            self.assertIn(p.preset, ("default", "tsan", "asan"), p.name)

    def test_every_entry_reports_its_measured_catch_rate(self):
        for manifest in ROOT.glob("solutions/*/break-it/manifest.toml"):
            import tomllib
            for entry in tomllib.loads(manifest.read_text())["patch"]:
                for key in ("bug", "caught", "runs"):
                    self.assertIn(key, entry, f"{entry['file']} has no '{key}'")
                self.assertLessEqual(entry["caught"], entry["runs"], entry["file"])


class BreakItCommandTest(unittest.TestCase):
    def workshop(self, *args):
        return subprocess.run([sys.executable, str(ROOT / "workshop"), *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)

    def test_the_command_lists_a_lessons_patches_with_their_bug_and_test(self):
        r = self.workshop("break-it", "4")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("01-take-before-cas", r.stdout)
        self.assertIn("caught by: Lesson04Ex2.", r.stdout)

    def test_an_unknown_patch_is_a_one_line_error_naming_the_known_ones(self):
        r = self.workshop("break-it", "4", "99")
        self.assertEqual(r.returncode, 2)
        self.assertIn("01-take-before-cas", r.stderr)
        self.assertNotIn("Traceback", r.stderr)

    def test_the_gate_loads_the_machine_while_a_test_runs(self):
        with break_it.BusyLoad(True) as load:
            self.assertEqual(len(load.procs), __import__("os").cpu_count() or 2)
            self.assertTrue(all(p.poll() is None for p in load.procs))
        self.assertEqual(load.procs, [])


class TwoSandboxesTest(unittest.TestCase):
    """The gate builds in two sandboxes at once, but runs one test at a time, the other
    sandbox's builds stopped meanwhile: each test sees the machine a single sandbox gave it."""

    @staticmethod
    def state(pid):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]

    def test_a_lessons_checks_stay_in_one_group_and_the_largest_lesson_comes_first(self):
        def check(lesson, n, preset="default", explorer=False):
            return (break_it.Patch(lesson, ROOT, Path(f"{n}.patch"), "A.B", preset, True, 1),
                    explorer)
        checks = [check("03", 0), check("01", 0, explorer=True), check("01", 1, "tsan"),
                  check("02", 0), check("01", 2), check("03", 1, "asan"), check("01", 3)]
        groups = break_it.by_lesson(checks)
        self.assertEqual([[c[0].lesson for c in g] for g in groups],
                         [["01"] * 4, ["03"] * 2, ["02"]])
        self.assertEqual([(c[0].file.stem, c[0].preset, c[1]) for c in groups[0]],
                         [("2", "default", False), ("3", "default", False),
                          ("1", "tsan", False), ("0", "default", True)])
        self.assertEqual(sum(len(g) for g in groups), len(checks))

    def test_a_build_is_stopped_while_a_test_runs_and_none_starts(self):
        pauser = break_it.Pauser()
        results = {}
        slow = threading.Thread(target=lambda: results.setdefault(
            "slow", pauser.run(["sh", "-c", "sleep 1; echo slow"], ROOT)))
        slow.start()
        deadline = time.monotonic() + 10
        while not pauser.builds and time.monotonic() < deadline:
            time.sleep(0.01)
        (pid,) = pauser.builds
        with pauser.alone():
            self.assertEqual(self.state(pid), "T")
            late = threading.Thread(target=lambda: results.setdefault(
                "late", pauser.run(["echo", "late"], ROOT)))
            late.start()
            time.sleep(0.3)
            self.assertNotIn("late", results)  # it waits for the test to end
        self.assertNotEqual(self.state(pid), "T")
        slow.join(10)
        late.join(10)
        self.assertEqual(results["slow"].stdout, "slow\n")
        self.assertEqual(results["late"].stdout, "late\n")



class DebugInfoTest(unittest.TestCase):
    """The gate and --measure build the g++ preset without -g (the same code, a quarter less
    compile time); the sanitizer presets, and ./workshop break-it, which shows a learner the
    failure, keep their flags."""

    def test_only_the_g_plus_plus_presets_lose_minus_g(self):
        self.assertEqual(break_it.without_debug_info(ROOT, "default"),
                         ["-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2"])
        for preset in ("tsan", "asan", "bench"):
            self.assertEqual(break_it.without_debug_info(ROOT, preset), [], preset)

    def test_the_gate_and_measure_leave_it_out_and_the_learners_command_keeps_it(self):
        seen = []

        class Box:
            def __init__(self, keep, pauser=None, debug_info=True):
                seen.append(debug_info)
                raise break_it.Failure("stop here")

        patch = break_it.load_patches()[0]
        with mock.patch.object(break_it, "Sandbox", Box), \
                contextlib.redirect_stdout(io.StringIO()):
            break_it.gate([patch], keep=False, load=False)
            with self.assertRaises(break_it.Failure):
                break_it.measure([patch], 1, None, keep=False)
        self.assertEqual(seen, [False, False])
        learners = (ROOT / "tools" / "workshop_cli" / "breakit.py").read_text()
        self.assertIn("bi.Sandbox(keep=False)", learners)

class GateTest(unittest.TestCase):
    """The gate itself (slow: it builds one test file of lesson 01 in a sandbox)."""

    def test_a_patch_that_escapes_its_test_fails_the_gate_and_is_named(self):
        rel = "solutions/01_shared_queue/thread_pool.cpp"
        old = (ROOT / rel).read_text().splitlines(keepends=True)
        new = ["// a harmless change: no test can catch it\n"] + old
        with tempfile.TemporaryDirectory() as tmp:
            file = Path(tmp) / "99-harmless.patch"
            file.write_text("".join(difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}")))
            patch = break_it.Patch(lesson="01", folder=ROOT / "solutions" / "01_shared_queue",
                                   file=file, test="Lesson01Ex1.ZeroWorkersIsAnError",
                                   preset="default", reliable=True, repeat=1)
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                status = break_it.gate([patch], keep=False, load=False)
        self.assertEqual(status, 1, out.getvalue())
        self.assertIn("99-harmless: Lesson01Ex1.ZeroWorkersIsAnError still passes with the bug in",
                      out.getvalue())
        self.assertIn("0 of 1 gated checks make their test fail", out.getvalue())


class NotAvailableHereTest(unittest.TestCase):
    """A gated test that skips as not available on this machine (WS_SKIP_NOT_AVAILABLE_HERE)
    gives no verdict: not "caught", not "escaped"; the summary says so."""

    def fake_program(self, folder: Path, skip_line: str) -> Path:
        exe = folder / "fake_tests"
        exe.write_text(f"""#!{sys.executable}
import sys
if "--gtest_list_tests" in sys.argv:
    print("Lesson04Ex5.\\n  Watched")
    sys.exit(0)
print("x.cpp:9: Skipped")
print({skip_line!r})
print("[  SKIPPED ] Lesson04Ex5.Watched (0 ms)")
""")
        exe.chmod(0o755)
        return exe

    def patch(self) -> "break_it.Patch":
        return break_it.Patch(lesson="04", folder=ROOT / "solutions" / "04_chase_lev",
                              file=Path("/dev/null"), test="Lesson04Ex5.Watched",
                              preset="default", reliable=True, repeat=1)

    def test_the_sandbox_says_the_test_cannot_run_here(self):
        with tempfile.TemporaryDirectory() as tmp:
            box = break_it.Sandbox.__new__(break_it.Sandbox)
            box.dir = Path(tmp)
            exe = self.fake_program(Path(tmp), "not available here: perf_event_open: EPERM")
            with self.assertRaisesRegex(break_it.NotCheckable, "cannot run on this machine "
                                        r"\(not available here: perf_event_open: EPERM\)"):
                box.run_test(self.patch(), exe, 1)
            other = self.fake_program(Path(tmp), "needs Linux (/proc)")
            self.assertEqual(box.run_test(self.patch(), other, 1)[0], False)  # escaped

    def test_the_gate_counts_it_apart(self):
        def run_test(self, patch, exe, repeat, test=None):
            raise break_it.NotCheckable(f"{patch.name}: cannot run on this machine (x)")
        out = io.StringIO()
        with mock.patch.object(break_it.Sandbox, "apply"), \
                mock.patch.object(break_it.Sandbox, "build", return_value=Path("/bin/true")), \
                mock.patch.object(break_it.Sandbox, "run_test", run_test), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            status = break_it.gate([self.patch()], keep=False, load=False)
        self.assertEqual(status, 0, out.getvalue())
        self.assertIn("not checked: 1 gated test(s) cannot run on this machine", out.getvalue())
        self.assertIn("0 of 0 gated checks make their test fail", out.getvalue())


if __name__ == "__main__":
    unittest.main()
