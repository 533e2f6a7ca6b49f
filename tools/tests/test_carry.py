"""Carried code (./workshop sync): one source for every file a lesson takes from an earlier one."""
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from workshop_cli import carry  # noqa: E402
from workshop_cli.lessons import UsageError  # noqa: E402


class CarriedTree(unittest.TestCase):
    """Each test works on a scratch copy of lessons/ and solutions/."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        for d in ("lessons", "solutions"):
            shutil.copytree(ROOT / d, self.root / d)

    def tearDown(self):
        self.tmp.cleanup()

    def deque(self, lesson_folder, kind="solutions"):
        return self.root / kind / lesson_folder / "chase_lev_deque.hpp"


class SyncTest(CarriedTree):
    def test_the_repository_has_no_drift(self):
        self.assertEqual(carry.drift(ROOT), [])

    def test_every_carried_copy_is_in_both_the_starter_and_the_solution(self):
        for c in carry.carried_files(ROOT):
            starter, solution = c.copies(ROOT)[1], c.copies(ROOT)[0]
            self.assertEqual(starter.read_text(), solution.read_text(), starter)
            self.assertNotIn("TODO(exercise", starter.read_text(), starter)

    def test_a_one_line_change_to_lesson_04s_deque_reaches_every_copy(self):
        source = self.deque("04_chase_lev")
        line = "// relaxed: the deque is not shared yet; whoever gets it later synchronises with us."
        marker = line + " (a one-line change made in lesson 04)"
        text = source.read_text()
        self.assertEqual(text.count(line), 1)
        source.write_text(text.replace(line, marker))
        written, failures = carry.sync(self.root)
        self.assertEqual(failures, "")
        copies = [p for c in carry.carried_files(self.root) if c.file == "chase_lev_deque.hpp"
                  for p in c.copies(self.root)]
        self.assertGreaterEqual(len(copies), 6)  # lessons 05-07 (and later), starter and solution
        # every carried copy, and lesson 04's own starter, which is made from its solution
        # and, once lesson 04's starter is made from its solution, that starter too
        self.assertLessEqual(set(copies), set(written))
        self.assertLessEqual(set(written), set(copies) | {self.deque("04_chase_lev", "lessons")})
        for p in written:
            self.assertIn(marker, p.read_text(), p)
        self.assertEqual(carry.drift(self.root), [])

    def test_a_hand_edit_of_a_carried_copy_is_named_with_its_line(self):
        copy = self.root / "lessons" / "06_injector" / "parker.hpp"
        lines = copy.read_text().splitlines(keepends=True)
        lines[10] = "// edited by hand\n"
        copy.write_text("".join(lines))
        problems = carry.drift(self.root)
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith("lessons/06_injector/parker.hpp:11:"), problems)
        self.assertIn("edited by hand", problems[0])
        self.assertIn("edit the source and run ./workshop sync", problems[0])

    def test_the_namespace_follows_the_carrying_lesson(self):
        text = self.deque("07_fork_join").read_text()
        self.assertIn("namespace ws::lesson07 {", text)
        self.assertNotIn("ws::lesson04", text)
        self.assertNotIn("ws::lesson05", text)
        self.assertNotIn("ws::lesson06", text)

    def test_lesson_05s_change_is_its_patch_and_reaches_lessons_06_and_07(self):
        for folder in ("05_parking", "06_injector", "07_fork_join"):
            self.assertIn("bottom_.store(b + 1, std::memory_order_seq_cst);",
                          self.deque(folder).read_text(), folder)
        self.assertIn("bottom_.store(b + 1, std::memory_order_release);",
                      self.deque("04_chase_lev").read_text())

    def test_a_patch_that_no_longer_applies_says_which_and_how_to_fix_it(self):
        source = self.deque("04_chase_lev")
        source.write_text(source.read_text().replace(
            "bottom_.store(b + 1, std::memory_order_release);", "bottom_.store(b + 1);"))
        before = self.deque("05_parking").read_text()
        written, failures = carry.sync(self.root)
        self.assertIn("lesson 05, solutions/05_parking/chase_lev_deque.hpp", failures)
        self.assertIn("solutions/05_parking/carried/chase_lev_deque.hpp.patch", failures)
        self.assertIn("--record 5", failures)
        self.assertNotIn(self.deque("05_parking"), written)  # nothing is made from a stale patch
        self.assertEqual(self.deque("05_parking").read_text(), before)
        self.assertNotIn(self.deque("06_injector"), written)  # its copies wait for it
        self.assertTrue(any("solutions/05_parking/chase_lev_deque.hpp" in p
                            for p in carry.drift(self.root)))

    def test_record_turns_a_deliberate_edit_into_the_patch(self):
        copy = self.deque("05_parking")
        copy.write_text(copy.read_text().replace("bool is_empty() const noexcept {",
                                                 "[[nodiscard]] bool is_empty() const noexcept {"))
        problems = carry.drift(self.root)  # only the edited copy: the others follow its source
        self.assertEqual(len(problems), 1, problems)
        self.assertTrue(problems[0].startswith("solutions/05_parking/chase_lev_deque.hpp:"))
        carry.record(5, "chase_lev_deque.hpp", self.root)
        carry.sync(self.root)
        self.assertEqual(carry.drift(self.root), [])
        self.assertIn("[[nodiscard]] bool is_empty()", self.deque("07_fork_join", "lessons")
                      .read_text())

    def test_a_given_file_is_the_solutions_file_in_the_starter(self):
        given = carry.given_files(ROOT)
        self.assertIn(("05_parking", "thread_pool.cpp"), given)
        for folder, file in given:
            self.assertEqual((ROOT / "lessons" / folder / file).read_text(),
                             (ROOT / "solutions" / folder / file).read_text(), file)

    def test_a_hand_edit_of_a_given_starter_file_is_named(self):
        copy = self.root / "lessons" / "05_parking" / "thread_pool.cpp"
        copy.write_text(copy.read_text().replace("namespace ws::lesson05 {",
                                                 "namespace ws::lesson05 {  // edited"))
        problems = carry.drift(self.root)
        self.assertEqual(len(problems), 1, problems)
        self.assertTrue(problems[0].startswith("lessons/05_parking/thread_pool.cpp:"))
        carry.sync(self.root)
        self.assertEqual(carry.drift(self.root), [])

    def test_a_carry_from_a_later_lesson_is_refused(self):
        meta = self.root / "lessons" / "04_chase_lev" / "lesson.toml"
        meta.write_text(meta.read_text() + '\n[[carried]]\nfile = "parker.hpp"\nfrom = 5\n')
        with self.assertRaises(UsageError) as ctx:
            carry.carried_files(self.root)
        self.assertIn("not an earlier lesson", str(ctx.exception))


class GeneratedPoolTest(CarriedTree):
    """Each lesson's pool grows out of the previous lesson's ([idea]), and each starter is its
    solution with the answers taken out (starter patches)."""

    POOLS = ["02_local_queues", "03_steal_half", "04_chase_lev", "05_parking", "06_injector",
             "07_fork_join"]

    def pool(self, folder, kind="solutions", file="thread_pool.cpp"):
        return self.root / kind / folder / file

    def test_a_one_line_change_to_lesson_02s_pool_reaches_lessons_03_to_07_and_their_starters(self):
        # lesson 02's header is itself made from lesson 01's: the change is recorded first
        header = self.pool("02_local_queues", file="thread_pool.hpp")
        line = "    // pool's workers it would wait for itself, so it throws std::logic_error instead."
        changed = line.replace("instead.", "instead (a one-line change).")
        text = header.read_text()
        self.assertEqual(text.count(line), 1)
        header.write_text(text.replace(line, changed))
        self.assertEqual(carry.record(2, "thread_pool.hpp", self.root),
                         [self.root / "solutions/02_local_queues/idea/thread_pool.hpp.patch"])
        written, failures = carry.sync(self.root)
        self.assertEqual(failures, "")
        for folder in self.POOLS:
            for kind in ("solutions", "lessons"):
                copy = self.pool(folder, kind, "thread_pool.hpp").read_text()
                self.assertIn(changed, copy, (kind, folder))
                self.assertNotIn(line + "\n", copy, (kind, folder))
                if (kind, folder) != ("solutions", "02_local_queues"):
                    self.assertIn(self.pool(folder, kind, "thread_pool.hpp"), written)
        self.assertEqual(carry.drift(self.root), [])

    def test_a_conflicting_change_names_the_stale_patch_and_the_fix(self):
        patch = self.root / "solutions/03_steal_half/idea/thread_pool.cpp.patch"
        # a line lesson 03's idea replaces: change it in lesson 02, and the patch cannot apply
        removed = next(l[1:] for l in patch.read_text().splitlines()
                       if l.startswith("-") and not l.startswith("---") and len(l) > 30)
        source = self.pool("02_local_queues")
        source.write_text(source.read_text().replace(removed, removed + "  // changed", 1))
        old_03 = self.pool("03_steal_half").read_text()
        written, failures = carry.sync(self.root)
        self.assertIn("lesson 03, solutions/03_steal_half/thread_pool.cpp", failures)
        self.assertIn("solutions/03_steal_half/idea/thread_pool.cpp.patch", failures)
        self.assertIn("no longer matches", failures)
        self.assertIn("Make lesson 02's change there by hand", failures)
        self.assertIn("./workshop sync --record 3 solutions/03_steal_half/thread_pool.cpp",
                      failures)
        self.assertIn("wait for these", failures)  # lessons 04-07, made from lesson 03's
        self.assertEqual(self.pool("03_steal_half").read_text(), old_03)
        for folder in self.POOLS[1:]:
            self.assertNotIn(self.pool(folder), written)
        self.assertTrue(carry.drift(self.root))
        # lesson 02's own starter takes that line out (it is an answer): the starter is right
        self.assertIn("--record 2 lessons/02_local_queues/thread_pool.cpp", failures)
        # the fix: lesson 03 replaces that line anyway, and lesson 02's starter takes it out,
        # so both files stay as they are; record them
        starter_02 = self.pool("02_local_queues", "lessons").read_text()
        self.assertEqual(carry.record(3, "solutions/03_steal_half/thread_pool.cpp", self.root),
                         [patch])
        carry.record(2, "lessons/02_local_queues/thread_pool.cpp", self.root)
        written, failures = carry.sync(self.root)
        self.assertEqual(self.pool("02_local_queues", "lessons").read_text(), starter_02)
        self.assertEqual(failures, "")
        self.assertEqual(carry.drift(self.root), [])

    def test_record_of_a_starter_keeps_the_edit_and_leaves_the_solution_alone(self):
        starter = self.pool("03_steal_half", "lessons")
        solution = self.pool("03_steal_half").read_text()
        text = starter.read_text()
        self.assertIn("// TODO(exercise 3): ", text)
        starter.write_text(text.replace("// TODO(exercise 3): ", "// TODO(exercise 3): (edited) ",
                                        1))
        problems = carry.drift(self.root)
        self.assertEqual(len(problems), 1, problems)
        self.assertTrue(problems[0].startswith("lessons/03_steal_half/thread_pool.cpp:"))
        self.assertIn("--record 3 lessons/03_steal_half/thread_pool.cpp", problems[0])
        # the name alone records the copy that holds an edit: here, the starter only
        self.assertEqual(carry.record(3, "thread_pool.cpp", self.root),
                         [self.root / "solutions/03_steal_half/starter/thread_pool.cpp.patch"])
        written, failures = carry.sync(self.root)
        self.assertEqual((written, failures), ([], ""))
        self.assertEqual(carry.drift(self.root), [])
        self.assertIn("(edited)", starter.read_text())
        self.assertEqual(self.pool("03_steal_half").read_text(), solution)

    def test_an_edit_of_a_generated_solution_is_named_and_sync_keeps_the_text_it_replaces(self):
        target = self.pool("05_parking")
        edited = target.read_text().replace("#include", "// edited\n#include", 1)
        target.write_text(edited)
        problems = carry.drift(self.root)
        self.assertTrue(problems[0].startswith("solutions/05_parking/thread_pool.cpp:"), problems)
        self.assertIn("solutions/04_chase_lev/thread_pool.cpp + "
                      "solutions/05_parking/idea/thread_pool.cpp.patch", problems[0])
        written, failures = carry.sync(self.root)
        self.assertIn(target, written)
        self.assertEqual((self.root / carry.PREVIOUS_DIR / "solutions/05_parking/thread_pool.cpp")
                         .read_text(), edited)

    def test_every_starter_is_plain_code(self):
        # no patch or merge-conflict lines, no template directives: what a learner opens is
        # C++ (a C++ line may well hold "}}", so only directives count)
        generator = re.compile(r"^(@@ |\+\+\+ |--- |<<<<<<<|>>>>>>>|=======$)|\{\{[#/]|\{%")
        for s in carry.plan(ROOT):
            for target in s.targets:
                if target.parts[-3] != "lessons":
                    continue
                for number, line in enumerate(target.read_text().splitlines(), 1):
                    self.assertIsNone(generator.search(line), f"{target}:{number}: {line}")

    def test_every_lessons_code_file_is_generated(self):
        """Code in lessons/ is made from the solutions: hand-kept lines live there only."""
        generated = {t for s in carry.plan(ROOT) for t in s.targets}
        for lesson in ("00_warmup", "01_shared_queue", "02_local_queues", "03_steal_half",
                       "04_chase_lev", "05_parking", "06_injector", "07_fork_join"):
            for path in (ROOT / "lessons" / lesson).iterdir():
                if path.suffix in (".hpp", ".cpp"):
                    self.assertIn(path, generated, path)

    def test_the_patches_apply_with_patch_fuzz_0_too(self):
        if shutil.which("patch") is None:
            self.skipTest("no patch command")
        for s in carry.plan(ROOT):
            if s.patch is None or s.carried is not None:
                continue
            r = subprocess.run(["patch", "--fuzz=0", "--quiet", "-o", "-", str(s.base),
                                str(s.patch)], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, s.targets[0].read_text(), s.targets[0])

    def test_a_damaged_patch_is_refused(self):
        with self.assertRaises(carry.PatchError) as ctx:
            carry.apply_patch("a\nb\n", "@@ -1,2 +1,2 @@\n a\n-b\n+c\n+d\n", "x.patch")
        self.assertIn("damaged", str(ctx.exception))


class SyncCommandTest(unittest.TestCase):
    def test_sync_check_passes_on_the_repository(self):
        r = subprocess.run([sys.executable, str(ROOT / "workshop"), "sync", "--check"], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("starter and idea copies) match their source", r.stdout)

    def test_a_stale_patch_fails_sync_with_its_fix_and_no_traceback(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for d in ("lessons", "solutions", "tools"):
                shutil.copytree(ROOT / d, root / d, ignore=shutil.ignore_patterns("__pycache__"))
            shutil.copy2(ROOT / "workshop", root / "workshop")
            patch = root / "solutions/03_steal_half/idea/thread_pool.cpp.patch"
            removed = next(l[1:] for l in patch.read_text().splitlines()
                           if l.startswith("-") and not l.startswith("---") and len(l) > 30)
            source = root / "solutions/02_local_queues/thread_pool.cpp"
            source.write_text(source.read_text().replace(removed, removed + "  // changed", 1))
            r = subprocess.run([sys.executable, str(root / "workshop"), "sync"], cwd=root,
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("./workshop sync --record 3 solutions/03_steal_half/thread_pool.cpp",
                          r.stderr)
            self.assertNotIn("Traceback", r.stderr)
            r = subprocess.run([sys.executable, str(root / "workshop"), "sync", "--check"],
                               cwd=root, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("solutions/03_steal_half/idea/thread_pool.cpp.patch", r.stdout)

    def test_record_of_a_file_that_is_not_carried_is_a_one_line_error(self):
        r = subprocess.run([sys.executable, str(ROOT / "workshop"), "sync", "--record", "4",
                            "nothing.hpp"], cwd=ROOT, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("generates no file named nothing.hpp", r.stderr)
        self.assertNotIn("Traceback", r.stderr)


if __name__ == "__main__":
    unittest.main()
