"""Build and tool hygiene: `watch` and `test` calling one function."""
import sys
import unittest
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from workshop_cli import main, testing  # noqa: E402
from workshop_cli.lessons import find_lesson  # noqa: E402


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


if __name__ == "__main__":
    unittest.main()
