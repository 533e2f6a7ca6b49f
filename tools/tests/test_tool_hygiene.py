"""Build and tool hygiene: one list of Debian packages (tools/debian-packages.txt) that README,
.ci/run, the classroom workflow and the tool's messages follow; one npm bootstrap; the Python
lint step; the tool-test step's two processes (every test file in one, both failures
reported); `watch` and `test` calling one function; the GitHub workflows valid YAML that the
workflow schema accepts (@action-validator/cli, a devDependency of book/)."""
import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
import threading
import unittest
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from workshop_cli import check, classroom, environment, main, node, testing  # noqa: E402
from workshop_cli.lessons import UsageError, all_lessons, find_lesson  # noqa: E402

WORKFLOWS = ROOT / ".github" / "workflows"
VALIDATOR = ROOT / "book" / "node_modules" / ".bin" / "action-validator"


def listed() -> list[str]:
    return [p.name for p in environment.debian_packages()]


class PackageListTest(unittest.TestCase):
    def test_the_list_has_its_groups_and_says_what_each_package_is_for(self):
        packages = environment.debian_packages()
        self.assertEqual(list(dict.fromkeys(p.group for p in packages)),
                         ["required", "optional peers", "check", "book"])
        for p in packages:
            self.assertTrue(p.purpose, f"{p.name}: say what it is for after a '#'")
        self.assertEqual(len(listed()), len(set(listed())), "a package is listed twice")
        self.assertIn("pyflakes3", listed())

    def test_readme_apt_get_line_installs_exactly_the_list(self):
        for doc in ("README.md", "book/src/how-to-use.md"):
            text = (ROOT / doc).read_text()
            lines = re.findall(r"^sudo apt-get install -y (.+)$", text, re.M)
            self.assertEqual(len(lines), 1, f"{doc} should have one 'sudo apt-get install -y' line")
            in_doc = lines[0].split()
            missing = [p for p in listed() if p not in in_doc]
            extra = [p for p in in_doc if p not in listed()]
            self.assertEqual((missing, extra), ([], []),
                             f"{doc}'s apt-get line lacks {missing} and has {extra} beyond "
                             "tools/debian-packages.txt")
            self.assertEqual(in_doc, listed(),
                             f"{doc}'s apt-get line: keep tools/debian-packages.txt's order")

    def _ci_run_packages(self, path: str) -> list[str]:
        """The package list .ci/run builds, by running its own lines with this PATH."""
        script = (ROOT / ".ci" / "run").read_text()
        start = script.index('node_elsewhere=""')
        end = script.index("done < tools/debian-packages.txt")
        block = script[start:end] + "done < tools/debian-packages.txt\n"
        r = subprocess.run(["/bin/bash", "-c", f'set -euo pipefail\n{block}echo "$PACKAGES"'],
                           cwd=ROOT, env={"PATH": path}, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.split()

    def test_ci_run_reads_the_list_and_asks_for_node_only_when_it_is_missing(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(self._ci_run_packages(tmp), listed())
            for tool in ("node", "npm"):
                fake = Path(tmp) / tool
                fake.write_text("#!/bin/sh\n")
                fake.chmod(0o755)
            self.assertEqual(self._ci_run_packages(tmp),
                             [p for p in listed() if p not in ("nodejs", "npm")])

    def test_ci_run_names_no_package_itself(self):
        script = (ROOT / ".ci" / "run").read_text()
        for package in ("libgtest-dev", "clang-format", "chromium", "gnuplot-nox"):
            self.assertNotIn(package, script, "packages belong in tools/debian-packages.txt")
        self.assertTrue(script.rstrip().endswith("exec ./workshop check"))

    def test_every_command_and_file_the_tool_looks_for_has_its_package(self):
        wanted = {"cmake", "ctest", "ninja", "node", "npm", "chromium", "clang-format",
                  "pyflakes3", "dot", *environment.PRESET_COMPILER.values(),
                  *environment.SANITIZER_RUNTIME.values()}
        provided = {t for p in environment.debian_packages() for t in p.provides}
        self.assertEqual(sorted(wanted - provided), [],
                         "name them after their package in tools/debian-packages.txt")
        self.assertIn("sudo apt-get install ninja-build", environment.missing_message("ninja"))
        self.assertEqual(environment.install_hint("node", "npm"), "sudo apt-get install nodejs npm")

    def test_a_package_line_before_any_group_is_an_error(self):
        with self.assertRaises(ValueError):
            environment.parse_packages("cmake cmake  # no group yet\n")
        parsed = environment.parse_packages("# x\n[g]\nfoo bar baz  # what\n\nqux\n")
        self.assertEqual([(p.name, p.group, p.provides, p.purpose) for p in parsed],
                         [("foo", "g", ("bar", "baz"), "what"), ("qux", "g", (), "")])


class NodeTest(unittest.TestCase):
    def test_npm_ci_is_run_in_one_place(self):
        places = [str(f.relative_to(ROOT)) for f in sorted((ROOT / "tools").rglob("*.py"))
                  if '"npm", "ci"' in f.read_text() and f.name != "test_tool_hygiene.py"]
        self.assertEqual(places, ["tools/workshop_cli/node.py"])
        commands = [l for l in (ROOT / ".ci" / "run").read_text().splitlines()
                    if "npm ci" in l and not l.lstrip().startswith("#")]
        self.assertEqual(commands, [], ".ci/run: ./workshop check installs book/node_modules")

    def test_missing_node_names_the_debian_packages(self):
        with mock.patch.object(node.shutil, "which", return_value=None):
            with self.assertRaises(UsageError) as ctx:
                node.ensure_book_dependencies()
        self.assertIn("sudo apt-get install nodejs npm", str(ctx.exception))

    def test_npm_ci_runs_when_node_modules_is_missing_or_older_than_the_lock(self):
        with tempfile.TemporaryDirectory() as tmp:
            book = Path(tmp)
            (book / "package.json").write_text("{}")
            lock = book / "package-lock.json"
            lock.write_text("{}")
            calls = []

            def fake_npm(cmd, **kwargs):
                calls.append(cmd)
                (book / "node_modules").mkdir(exist_ok=True)
                return subprocess.CompletedProcess(cmd, 0, "", "")

            with mock.patch.object(node, "BOOK", book), \
                    mock.patch.object(node.shutil, "which", return_value="/usr/bin/x"), \
                    mock.patch.object(node.subprocess, "run", side_effect=fake_npm):
                self.assertTrue(node.ensure_book_dependencies(quiet=True))   # missing
                self.assertFalse(node.ensure_book_dependencies(quiet=True))  # up to date
                then = lock.stat().st_mtime - 10  # the lock changed since the install
                os.utime(book / "node_modules", (then, then))
                self.assertTrue(node.ensure_book_dependencies(quiet=True))   # older than lock
                self.assertFalse(node.ensure_book_dependencies(quiet=True))
            self.assertEqual(len(calls), 2)
            self.assertEqual(calls[0][:2], ["npm", "ci"])


class LintStepTest(unittest.TestCase):
    def test_check_has_the_lint_step(self):
        names = [name for name, _ in check.steps(quick=True)]
        self.assertIn("python lint (pyflakes)", names)

    def test_without_pyflakes_the_step_says_what_to_install(self):
        with mock.patch.object(check.shutil, "which", return_value=None), \
                mock.patch.object(check.importlib.util, "find_spec", return_value=None):
            with self.assertRaises(check.StepFailed) as ctx:
                check._python_lint()
        self.assertIn("sudo apt-get install pyflakes3", str(ctx.exception))


class ToolTestStepTest(unittest.TestCase):
    def test_every_test_file_runs_in_exactly_one_process(self):
        tests = ROOT / "tools" / "tests"
        files = sorted(f"tools.tests.{p.stem}" for p in tests.glob("test_*.py"))
        groups = check.tool_test_groups()
        self.assertEqual(len(groups), 2, groups)
        self.assertEqual(sorted(m for _, modules in groups for m in modules), files)

    def test_the_failures_of_both_processes_are_reported_and_the_passes_counted(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, body in (("fails_a", "self.assertEqual(1, 2)"),
                               ("fails_b", "raise KeyError(7)"), ("passes", "pass")):
                (Path(tmp) / f"one_{name}.py").write_text(
                    "import unittest\n\n\nclass T(unittest.TestCase):\n"
                    f"    def test_{name}(self):\n        {body}\n")
            failing = [("group a", ["one_fails_a", "one_passes"]), ("group b", ["one_fails_b"])]
            passing = [("group a", ["one_passes"]), ("group b", ["one_passes"])]
            with mock.patch.dict(os.environ, {"PYTHONPATH": tmp}):
                with mock.patch.object(check, "tool_test_groups", return_value=failing):
                    with self.assertRaises(check.StepFailed) as failed:
                        check._tool_tests()
                with mock.patch.object(check, "tool_test_groups", return_value=passing):
                    passed = check._tool_tests()
        for what in ("--- group a (exit 1)", "test_fails_a", "AssertionError: 1 != 2",
                     "--- group b (exit 1)", "test_fails_b", "KeyError: 7"):
            self.assertIn(what, str(failed.exception))
        self.assertRegex(passed, r"^Ran 2 tests in 2 processes at once: "
                                 r"1 in group a \(\d+ s\); 1 in group b \(\d+ s\)$")



class StepsBesideTest(unittest.TestCase):
    """A step in check.RUNS_BESIDE_THE_NEXT (the book's) runs at the same time as the step after
    it; its line comes first all the same, and its failure counts."""

    def run_check(self, beside_fails: bool) -> tuple[int, list[str]]:
        started, finished = threading.Event(), threading.Event()

        def beside() -> str:
            started.set()
            if not finished.wait(10):
                raise check.StepFailed("the next step did not run meanwhile")
            if beside_fails:
                raise check.StepFailed("broken")
            return "done"

        def next_step() -> str:
            if not started.wait(10):
                raise check.StepFailed("the step before did not start first")
            finished.set()
            return "done"

        fake = [("first", lambda: "done"), ("beside", beside), ("next", next_step),
                ("last", lambda: "done")]
        out = io.StringIO()
        with mock.patch.object(check, "steps", return_value=fake), \
                mock.patch.object(check, "RUNS_BESIDE_THE_NEXT", {beside}), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = check.run_check()
        return code, out.getvalue().splitlines()

    def test_both_run_at_once_and_report_in_order(self):
        code, lines = self.run_check(beside_fails=False)
        self.assertEqual(code, 0, lines)
        steps = [l.split(":")[0] for l in lines if l.startswith(("PASS", "FAIL"))]
        self.assertEqual(steps, ["PASS  first", "PASS  beside", "PASS  next", "PASS  last"])
        self.assertEqual(lines[-1], "check: 4 passed, 0 failed")

    def test_a_failure_beside_is_counted(self):
        code, lines = self.run_check(beside_fails=True)
        self.assertEqual(code, 1, lines)
        self.assertIn("broken", lines)
        self.assertTrue(any(l.startswith("FAIL  beside") for l in lines), lines)
        self.assertEqual(lines[-1], "check: 3 passed, 1 failed")

class CtestJobsTest(unittest.TestCase):
    """The starters' tests, which mostly wait for a stub to time out, run 8 at a time
    (check.STARTER_TEST_JOBS); the solutions' tests keep ctest.py's 2."""

    def jobs_of(self, step) -> list[int]:
        seen = []

        def fake_ctest(preset, regex, junit, jobs=2, **_):
            seen.append(jobs)
            return []

        with mock.patch.object(check, "run_ctest", fake_ctest), \
                mock.patch.object(check.b, "build"):
            with contextlib.suppress(check.StepFailed):
                step()
        return seen

    def test_the_starters_run_eight_at_a_time_and_the_solutions_two(self):
        self.assertEqual(check.STARTER_TEST_JOBS, 8)
        self.assertEqual(self.jobs_of(check._starters_fail_each_exercise(all_lessons())), [8])
        for preset in ("default", "tsan", "asan"):
            self.assertEqual(self.jobs_of(check._tests_must_pass(preset)), [2], preset)


class TestAndWatchTest(unittest.TestCase):
    def test_test_passes_its_options_to_run_test(self):
        with mock.patch.object(testing, "run_test", return_value=0) as run_test:
            self.assertEqual(main.main(["test", "1", "-e", "2", "--tsan", "-v", "-j", "3"]), 0)
        run_test.assert_called_once_with(find_lesson("1"), exercise=2, solution=False,
                                         preset="tsan", verbose=True, jobs=3)

    def test_watch_runs_the_same_function(self):
        with mock.patch.object(testing, "run_test", return_value=1) as run_test, \
                mock.patch.object(main.watch, "watch", side_effect=lambda lesson, f: f()):
            self.assertEqual(main.main(["watch", "2", "--exercise", "1"]), 1)
        run_test.assert_called_once_with(find_lesson("2"), exercise=1)


class WorkflowsTest(unittest.TestCase):
    """Both workflows parse as YAML and the GitHub workflow schema accepts them."""

    def validate(self, path: Path) -> subprocess.CompletedProcess:
        if not (ROOT / "book" / "node_modules").is_dir():
            self.skipTest("book/node_modules is absent (./workshop book --build-only installs it)")
        self.assertTrue(VALIDATOR.exists(), "book/node_modules lacks @action-validator/cli: "
                        "run npm ci in book/ (./workshop check does)")
        return subprocess.run([str(VALIDATOR), str(path)], cwd=ROOT / "book",
                              capture_output=True, text=True, timeout=120)

    def test_the_workflows_are_valid(self):
        for name in ("ci.yml", "classroom.yml"):
            with self.subTest(name):
                r = self.validate(WORKFLOWS / name)
                self.assertEqual(r.returncode, 0, f"{name}:\n{r.stdout}{r.stderr}")

    def test_the_validator_rejects_an_unquoted_colon(self):
        """The validator really parses: a step name with an unquoted ': ' (what the classroom
        generator once wrote) fails."""
        with tempfile.TemporaryDirectory() as tmp:
            bad = Path(tmp) / "bad.yml"
            bad.write_text("name: x\non: [push]\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
                           "    steps:\n      - name: Lesson 04 (the ring buffer: push)\n"
                           "        run: true\n")
            r = self.validate(bad)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("mapping values are not allowed", r.stdout + r.stderr)

    def test_ci_runs_ci_run_in_debian_12(self):
        text = (WORKFLOWS / "ci.yml").read_text()
        self.assertIn("image: debian:12", text)
        self.assertIn("run: bash .ci/run", text)

    def test_the_classroom_step_names_read_back_as_written(self):
        try:
            import yaml
        except ImportError:
            self.skipTest("PyYAML is absent (Debian package python3-yaml)")
        data = yaml.safe_load((WORKFLOWS / "classroom.yml").read_text())
        steps = data["jobs"]["autograding"]["steps"]
        names = {s.get("with", {}).get("test-name") for s in steps}
        for lesson in all_lessons():
            for ex in lesson.exercises:
                self.assertIn(f"Lesson {lesson.nn} exercise {ex.number} ({ex.title})", names)
        install = steps[0]["run"]
        for package in environment.packages_in(*classroom.PACKAGE_GROUPS):
            self.assertIn(f" {package}", install)


if __name__ == "__main__":
    unittest.main()
