"""The book's transcripts of failing tests still point at the assertion that failed.

A chapter shows GoogleTest output from a real run, e.g. `test_ex2_out_of_memory.cpp:35: Failure`.
When a test file changes, its assertions move and such a line goes stale. For every
`FILE.cpp:N: Failure` line in book/src/*.md this finds FILE in the chapter's lesson's tests
(lesson-NN-*.md and solution-NN-*.md: tests/NN_*/, searched recursively) and checks that line N,
or one of the 3 lines before it (of a macro call over several lines, gtest reports the line
the compiler gives: its last with some compilers, its first with g++ 12), holds an
EXPECT_/ASSERT_ macro, FAIL() or ADD_FAILURE(). Where the transcript shows more, it checks that too:

- the expressions gtest prints (`Value of: EXPR`, the two of `Expected equality of these
  values:`) occur, spaces aside, in the code around line N;
- the assertion's message (the first line after gtest's own lines): one of its runs of four or
  more words without a digit (a run's figures are not in the source, and a helper may write a
  part of the message) is in the string literals around line N, or in a `kName` constant that
  those lines use.

Text only: nothing is built or run."""
import re
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book" / "src"

# The book holds about twenty such lines; fewer than this means the scan has stopped seeing them.
AT_LEAST = 10

FAILURE = re.compile(r"^(?P<indent>\s*)(?P<file>[\w./-]+\.cpp):(?P<line>\d+): Failure\s*$")
CHAPTER = re.compile(r"^(?:lesson|solution)-(?P<nn>\d\d)-")
MACRO = re.compile(r"\b(?:EXPECT|ASSERT)_[A-Z0-9_]+\s*\(|\bFAIL\s*\(\s*\)|\bADD_FAILURE(?:_AT)?\s*\(")
# The lines gtest writes itself, at the transcript's own indentation (a message never starts so).
GTEST_OWN = ("Value of:", "Expected:", "Expected equality of these values:", "Actual:",
             "Which is:", "Failed", "...")
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
CONSTANT = re.compile(r"\bk[A-Z]\w*")
CODE_BEFORE, CODE_AFTER = 3, 3          # where the assertion's expressions are, around line N
MESSAGE_BEFORE, MESSAGE_AFTER = 3, 8    # where its message's text is


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def spaced(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def literal_text(code: str) -> str:
    """The contents of the string literals in `code`, joined as adjacent literals are."""
    return spaced("".join(m.group(1).replace('\\"', '"').replace("\\n", " ")
                          for m in STRING.finditer(code)))


def window(lines: list[str], n: int, before: int, after: int) -> str:
    return "\n".join(lines[max(0, n - 1 - before):n + after])


def tests_folder(chapter: Path) -> Path:
    m = CHAPTER.match(chapter.name)
    if not m:
        raise AssertionError(f"{chapter.name} shows a test failure, but it is no lesson's or "
                             "solution's chapter: which lesson's tests would that be?")
    folders = sorted((ROOT / "tests").glob(f"{m.group('nn')}_*/"))
    if len(folders) != 1:
        raise AssertionError(f"{chapter.name}: expected one tests/{m.group('nn')}_*/ folder, "
                             f"found {[str(f.relative_to(ROOT)) for f in folders]}")
    return folders[0]


def find_source(chapter: Path, name: str) -> Path:
    folder = tests_folder(chapter)
    found = sorted(p for p in folder.rglob(Path(name).name) if p.is_file())
    rel = folder.relative_to(ROOT)
    if not found:
        raise AssertionError(f"no {Path(name).name} in {rel}/ (renamed or moved?)")
    if len(found) > 1:
        raise AssertionError(f"{Path(name).name} is ambiguous in {rel}/: "
                             f"{[str(p.relative_to(ROOT)) for p in found]}")
    return found[0]


def transcript_after(md_lines: list[str], i: int, indent: str) -> list[str]:
    """The lines of the failure block that starts at md_lines[i], without its indentation."""
    block = []
    for line in md_lines[i + 1:]:
        if not line.strip() or line.startswith("```") or FAILURE.match(line):
            break
        if not line.startswith(indent):
            break
        body = line[len(indent):]
        if body.startswith(("[", "x ", "v ")):
            break
        block.append(body)
    return block


def shown_expressions(block: list[str]) -> list[str]:
    """The source expressions gtest printed: `Value of: E`, and the two of `Expected equality`."""
    found = []
    for j, line in enumerate(block):
        if line.startswith("Value of: "):
            found.append(line.removeprefix("Value of: "))
        elif line == "Expected equality of these values:":
            for follow in block[j + 1:]:
                if not follow.startswith("  "):
                    break
                if not follow.startswith("    "):  # "    Which is: ..." is a value, not code
                    found.append(follow.strip())
    return found


def message_pieces(block: list[str]) -> list[str]:
    """The runs of 4+ words without a digit in the message's first line, longest first."""
    message = next((l for l in block if not l.startswith(" ") and not l.startswith(GTEST_OWN)),
                   None)
    if message is None:
        return []
    runs, run = [], []
    for word in message.split():
        if re.search(r"\d", word):
            runs.append(run)
            run = []
        else:
            run.append(word)
    runs.append(run)
    return sorted((" ".join(r) for r in runs if len(r) >= 4), key=len, reverse=True)


def problems_of(chapter: Path, md_lines: list[str], i: int) -> list[str]:
    m = FAILURE.match(md_lines[i])
    name, n = m.group("file"), int(m.group("line"))
    try:
        source = find_source(chapter, name)
    except AssertionError as e:
        return [str(e)]
    src = source.read_text().splitlines()
    rel = source.relative_to(ROOT)
    if n > len(src):
        return [f"{rel} has only {len(src)} lines: the test file changed since this run; run "
                "it again and paste today's output"]
    if not MACRO.search(window(src, n, 3, 0)):
        return [f"no EXPECT_/ASSERT_/FAIL()/ADD_FAILURE() on {rel}:{n} or the 3 lines before it "
                f"(line {n}: {src[n - 1].strip()!r}): the test file changed since this run; "
                "run it again and paste today's output"]
    problems = []
    block = transcript_after(md_lines, i, m.group("indent"))
    code = squash(window(src, n, CODE_BEFORE, CODE_AFTER))
    for expression in shown_expressions(block):
        if squash(expression) not in code:
            problems.append(f"the transcript shows the expression {expression!r}, which is not "
                            f"in {rel} around line {n}")
    pieces = message_pieces(block)
    if pieces:
        near = window(src, n, MESSAGE_BEFORE, MESSAGE_AFTER)
        texts = [literal_text(near)]
        for constant in set(CONSTANT.findall(near)):  # a message kept in a named constant
            d = re.search(rf"\b{constant}\s*=([^;]*);", "\n".join(src))
            if d:
                texts.append(literal_text(d.group(1)))
        if not any(piece in t for piece in pieces for t in texts):
            problems.append(f"the transcript's message ({pieces[0]!r}) is not in the string "
                            f"literals of {rel} around line {n}")
    return problems


class BookFailureLinesTest(unittest.TestCase):
    def test_every_failure_line_points_at_an_assertion(self):
        seen, problems = 0, []
        for chapter in sorted(BOOK.glob("*.md")):
            md_lines = chapter.read_text().splitlines()
            for i, line in enumerate(md_lines):
                if not FAILURE.match(line):
                    continue
                seen += 1
                for problem in problems_of(chapter, md_lines, i):
                    problems.append(f"book/src/{chapter.name}:{i + 1}: {line.strip()}: {problem}")
        self.assertGreaterEqual(
            seen, AT_LEAST, f"found only {seen} 'FILE.cpp:N: Failure' lines in book/src/*.md, "
            f"fewer than {AT_LEAST}: has the transcripts' form changed, so that this test no "
            "longer sees them?")
        stale = len({p.split(": Failure: ")[0] for p in problems})
        if problems:
            self.fail(f"{stale} of the {seen} failure lines in the book are stale:\n"
                      + "\n".join(problems))

    def test_a_stale_line_is_seen(self):
        # The checks themselves: line 1 of a test file holds no assertion, and an expression or
        # a message that is not in the source is reported.
        chapter = BOOK / "lesson-01-shared-queue.md"
        source = find_source(chapter, "test_ex1_worker_loop.cpp")
        n = next(i for i, l in enumerate(source.read_text().splitlines(), 1) if MACRO.search(l))
        self.assertEqual(len(problems_of(chapter, ["test_ex1_worker_loop.cpp:1: Failure"], 0)), 1)
        self.assertEqual(problems_of(chapter, [f"test_ex1_worker_loop.cpp:{n}: Failure"], 0), [])
        made_up = [f"test_ex1_worker_loop.cpp:{n}: Failure", "Value of: no_such_expression()",
                   "  Actual: false", "Expected: true", "a message that this test never gives"]
        self.assertEqual(len(problems_of(chapter, made_up, 0)), 2)
        with self.assertRaisesRegex(AssertionError, "no no_such_file.cpp in tests/01_"):
            find_source(chapter, "no_such_file.cpp")


if __name__ == "__main__":
    unittest.main()
