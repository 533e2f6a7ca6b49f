"""The workshop as a subproject: tests/subproject pulls it in with add_subdirectory() and must
configure, build and run on a machine without GoogleTest, Google Benchmark and oneTBB."""
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "tests" / "subproject"
DEMO = "ws_subproject_demo"
# What a machine without the test and benchmark libraries looks like to find_package().
WITHOUT = ["-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON", "-DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON",
           "-DCMAKE_DISABLE_FIND_PACKAGE_TBB=ON"]
TOOLS = ("cmake", "ninja", "g++")


@unittest.skipUnless(all(shutil.which(t) for t in TOOLS), "needs " + ", ".join(TOOLS))
class SubprojectTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ws-subproject-")
        self.build = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def run_step(self, cmd, timeout):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        self.assertEqual(r.returncode, 0, f"{' '.join(map(str, cmd))}\n{r.stdout}\n{r.stderr}")
        return r

    def cache(self):
        entries = {}
        for line in (self.build / "CMakeCache.txt").read_text().splitlines():
            if ":" in line and "=" in line and not line.startswith(("#", "//")):
                name_type, value = line.split("=", 1)
                entries[name_type.split(":", 1)[0]] = value
        return entries

    def test_configures_builds_and_runs_without_gtest_benchmark_or_tbb(self):
        self.run_step(["cmake", "-S", PROJECT, "-B", self.build, "-G", "Ninja",
                       "-DCMAKE_CXX_COMPILER=g++", *WITHOUT], timeout=120)
        cache = self.cache()
        # As a subproject the workshop's tests and benchmarks default to off.
        self.assertEqual(cache.get("WS_BUILD_TESTS"), "OFF")
        self.assertEqual(cache.get("WS_BUILD_BENCHMARKS"), "OFF")
        self.assertNotIn("ws_common_tests", (self.build / "build.ninja").read_text())

        self.run_step(["cmake", "--build", self.build, "--target", DEMO, "-j", "2"], timeout=300)
        r = self.run_step([self.build / DEMO], timeout=60)
        self.assertIn("deque ok, pool ok", r.stdout)


if __name__ == "__main__":
    unittest.main()
