"""The form of a starter's TODO (CONTRIBUTING.md, ARCHITECTURE.md "How a lesson is made"):

    // TODO(exercise K): <goal>. Rule: <constraint>. Checked by LessonNNExK.

Every TODO(exercise K) comment in lessons/NN_topic/ states a goal, then the rule the learner must
keep ("Rule:" or "Rules:"), then the suite that checks it: LessonNNExK, with NN the lesson's and
K the TODO's own exercise, a suite that tests/NN_topic/ defines. Text only: nothing is built."""
import fnmatch
import re
import sys
import tomllib
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A TODO starts where a comment's text starts with "TODO(" (a mention inside a sentence, such as
# "the parts marked TODO(exercise 5)", is no TODO) and goes on over the comment lines after it.
START = re.compile(r"//\s*(TODO\(.*)$")
CONTINUATION = re.compile(r"^\s*//\s?(.*)$")
# "TODO(exercise K)" with a letter is how prose names the form; a TODO has a number.
NUMBERED = re.compile(r"TODO\(exercise \d")
FORM = re.compile(r"TODO\(exercise (?P<k>\d+)\): (?P<goal>.+?) Rules?: (?P<rule>.+?) "
                  r"Checked by (?P<checked>.+)$")
SUITE = re.compile(r"\bLesson(?P<nn>\d\d)Ex(?P<k>\d+)(?:\.(?P<test>[A-Za-z0-9_*]+))?")
TEST_MACRO = re.compile(r"^\s*(?:TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P)\(\s*(\w+)\s*,\s*(\w+)",
                        re.MULTILINE)


def todo_comments(text: str) -> list[tuple[int, str]]:
    """(line number, the TODO's text joined on one line) for each TODO(exercise K) in a file."""
    lines = text.splitlines()
    found = []
    i = 0
    while i < len(lines):
        m = START.search(lines[i])
        if not m or not NUMBERED.match(m.group(1)):
            i += 1
            continue
        start, parts = i + 1, [m.group(1).strip()]
        i += 1
        while i < len(lines):
            c = CONTINUATION.match(lines[i])
            if not c or not c.group(1).strip() or c.group(1).lstrip().startswith("TODO("):
                break
            parts.append(c.group(1).strip())
            i += 1
        found.append((start, " ".join(parts)))
    return found


def suites_of(tests_folder: Path) -> dict[str, set[str]]:
    """Suite -> test names, from every test source of a lesson's test folder."""
    suites: dict[str, set[str]] = {}
    for source in sorted(tests_folder.rglob("*.cpp")):
        for suite, test in TEST_MACRO.findall(source.read_text()):
            suites.setdefault(suite, set()).add(test)
    return suites


def problems_of_todo(todo: str, lesson_nn: str, exercises: set[int],
                     suites: dict[str, set[str]]) -> list[str]:
    """What is wrong with one TODO's text; [] if it has the documented form."""
    m = FORM.match(todo)
    if not m:
        missing = [part for part, pattern in (("a goal", r"TODO\(exercise \d+\): \S"),
                                              ("'Rule:'", r" Rules?: \S"),
                                              ("'Checked by'", r" Checked by Lesson"))
                   if not re.search(pattern, todo)]
        return ["not in the form 'TODO(exercise K): <goal>. Rule: <constraint>. Checked by "
                f"LessonNNExK.' (missing or out of order: {', '.join(missing) or 'the order'})"]
    k = int(m.group("k"))
    problems = []
    if exercises and k not in exercises:
        problems.append(f"exercise {k} is not one of the lesson's exercises {sorted(exercises)}")
    first = SUITE.match(m.group("checked"))
    if not first:
        problems.append("'Checked by' must name the suite first: Checked by "
                        f"Lesson{lesson_nn}Ex{k}")
    elif (first.group("nn"), int(first.group("k"))) != (lesson_nn, k):
        problems.append(f"TODO(exercise {k}) of lesson {lesson_nn} is 'Checked by "
                        f"{first.group(0)}': expected Lesson{lesson_nn}Ex{k}")
    for named in SUITE.finditer(m.group("checked")):
        suite = f"Lesson{named.group('nn')}Ex{named.group('k')}"
        if suite not in suites:
            problems.append(f"{suite} is no suite of the lesson's tests")
        elif named.group("test") and not fnmatch.filter(suites[suite], named.group("test")):
            problems.append(f"{named.group(0)} names no test of {suite}")
    return problems


def lesson_exercises(folder: Path) -> set[int]:
    toml = folder / "lesson.toml"
    if not toml.exists():
        return set()
    return {int(e["number"]) for e in tomllib.loads(toml.read_text()).get("exercise", [])}


def lesson_folders(root: Path = ROOT) -> list[Path]:
    return sorted(p for p in (root / "lessons").iterdir() if re.match(r"\d\d_", p.name))


def tree_problems(root: Path = ROOT) -> tuple[list[str], int]:
    """Every problem of every TODO in lessons/, and how many TODOs there are."""
    problems, count = [], 0
    for folder in lesson_folders(root):
        nn = folder.name[:2]
        exercises = lesson_exercises(folder)
        suites = suites_of(root / "tests" / folder.name)
        marked: set[int] = set()
        for source in sorted(folder.iterdir()):
            if source.suffix not in (".hpp", ".cpp"):
                continue
            for line, todo in todo_comments(source.read_text()):
                count += 1
                k = re.match(r"TODO\(exercise (\d+)", todo)
                if k:
                    marked.add(int(k.group(1)))
                where = f"{source.relative_to(root)}:{line}"
                problems += [f"{where}: {p}" for p in
                             problems_of_todo(todo, nn, exercises, suites)]
        for k in sorted(exercises - marked):
            problems.append(f"lessons/{folder.name}: exercise {k} has no TODO(exercise {k})")
    return problems, count


class TodoFormTest(unittest.TestCase):
    def test_every_todo_in_the_starters_has_a_goal_a_rule_and_its_suite(self):
        problems, count = tree_problems()
        self.assertGreater(count, 50, "the scan found (almost) no TODO: is the pattern broken?")
        self.assertEqual(problems, [], "\n" + "\n".join(problems))


class CheckerTest(unittest.TestCase):
    """The checker itself: each kind of defect is reported."""

    SUITES = {"Lesson03Ex1": {"StealsHalf", "StealsHalfOfOne"}, "Lesson03Ex2": {"Moves"}}

    def problems(self, comment: str) -> list[str]:
        todos = todo_comments(comment)
        self.assertEqual(len(todos), 1, todos)
        return problems_of_todo(todos[0][1], "03", {1, 2}, self.SUITES)

    def test_the_documented_form_passes(self):
        self.assertEqual(self.problems(
            "    // TODO(exercise 1): the goal, over\n"
            "    // two lines. Rules: a rule. Checked by Lesson03Ex1.StealsHalf*.\n"
            "    throw NotImplemented{\"x\"};\n"), [])

    def test_a_missing_part_is_reported(self):
        for comment in ("// TODO(exercise 1): a goal. Checked by Lesson03Ex1.\n",
                        "// TODO(exercise 1): a goal. Rule: a rule.\n",
                        "// TODO(exercise 1): Rule: a rule. Checked by Lesson03Ex1.\n",
                        "// TODO(exercise 1): a goal. Checked by Lesson03Ex1. Rule: a rule.\n",
                        "// TODO(exercise 1) a goal. Rule: a rule. Checked by Lesson03Ex1.\n"):
            with self.subTest(comment=comment):
                self.assertIn("not in the form", " ".join(self.problems(comment)))

    def test_a_wrong_exercise_lesson_or_suite_is_reported(self):
        cases = {"Lesson03Ex2.": "expected Lesson03Ex1",
                 "Lesson04Ex1.": "expected Lesson03Ex1",
                 "the tests.": "must name the suite first",
                 "Lesson03Ex1.NoSuchTest.": "names no test",
                 "Lesson03Ex1 and Lesson03Ex9.": "Lesson03Ex9 is no suite"}
        for checked, why in cases.items():
            with self.subTest(checked=checked):
                text = self.problems(f"// TODO(exercise 1): a goal. Rule: r. Checked by {checked}\n")
                self.assertIn(why, " ".join(text))
        text = self.problems("// TODO(exercise 7): a goal. Rule: r. Checked by Lesson03Ex7.\n")
        self.assertIn("not one of the lesson's exercises", " ".join(text))

    def test_a_mention_is_no_todo_and_a_todo_ends_where_its_comment_does(self):
        text = ("// Starter code: the parts marked TODO(exercise 5) are yours.\n"
                "// TODO(exercise K) below the given code.\n"
                "x();  // TODO(exercise 2): goal. Rule: r.\n"
                "// Checked by Lesson03Ex2.\n"
                "//\n"
                "// TODO(exercise 1): next.\n")
        self.assertEqual(todo_comments(text),
                         [(3, "TODO(exercise 2): goal. Rule: r. Checked by Lesson03Ex2."),
                          (6, "TODO(exercise 1): next.")])


if __name__ == "__main__":
    sys.exit(unittest.main())
