"""The guide as the student edition carries it (`./workshop export-student`).

The instructors' book pulls code into its pages with mdBook's `{{#include path:anchor}}`: the
chapters show given code from lessons/, the solution walk-through pages (solution-NN-*.md, the
block between `<!-- solutions -->` and `<!-- /solutions -->` in SUMMARY.md) the reference
from solutions/. The edition gets:

- no solution pages and no instructor guide;
- a one-lesson edition (`--lesson N`): the chapters of lessons 00 to N and the general ones
  (introduction, how to use, troubleshooting, further reading); the whole-course edition: every
  chapter;
- every include already expanded (the Python twin of book/tools/lib/include.js), since the
  lessons it names need not be in the edition; an include of solutions/ (or of a later lesson)
  becomes a one-line note instead;
- the book's own tooling (book.toml, package.json, the build and serve scripts, the theme), so
  `./workshop book` builds and serves it as it does here."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

# Same shape as include.js's DIRECTIVE: `\{{#...}}` is an escaped directive, kept literally.
DIRECTIVE = re.compile(r"\\\{\{#.*?\}\}|\{\{\s*#([a-zA-Z0-9_]+)\s+([^}]+)\}\}")
ANCHOR_START = re.compile(r"ANCHOR:\s*([\w-]+)")
ANCHOR_END = re.compile(r"ANCHOR_END:\s*([\w-]+)")
MARKER = re.compile(r"ANCHOR:|ANCHOR_END:")
MAX_DEPTH = 10
LESSON_CHAPTER = re.compile(r"^lesson-(\d\d)-.*\.md$")
SOLUTION_PAGE = re.compile(r"^solution-.*\.md$")
SOLUTIONS_BLOCK = re.compile(r"<!-- solutions -->.*?<!-- /solutions -->\n?", re.S)
SUMMARY_LINK = re.compile(r"\[[^\]]*\]\(([^)]+\.md)\)")
# Only in the instructors' book.
INSTRUCTOR_ONLY = {"instructor-guide.md"}
# Chapters that compare every lesson: the whole-course edition only.
COURSE_ONLY = {"what-each-idea-bought.md"}
# The book's tooling the edition needs to build and serve it (not its tests or the checker).
TOOLING = ["book.toml", "package.json", "package-lock.json", ".npmrc", ".gitignore",
           "theme", "tools/build.js", "tools/preprocess.js", "tools/serve.js", "tools/lib"]


class IncludeError(Exception):
    pass


def _select(text: str, spec: str | None, fail) -> list[str]:
    lines = text.splitlines()
    if not spec:
        return [l for l in lines if not MARKER.search(l)]
    parts = spec.split(":")
    if len(parts) == 1 and not parts[0].isdigit():
        kept, inside = [], False
        for line in lines:
            if not inside:
                m = ANCHOR_START.search(line)
                inside = bool(m and m.group(1) == parts[0] and not ANCHOR_END.search(line))
                continue
            m = ANCHOR_END.search(line)
            if m and m.group(1) == parts[0]:
                return kept
            if not MARKER.search(line):
                kept.append(line)
        fail(f"anchor '{parts[0]}' not found or not closed")
    if len(parts) == 1:
        start = end = int(parts[0])
    elif len(parts) == 2 and all(p == "" or p.isdigit() for p in parts):
        start = int(parts[0]) if parts[0] else 1
        end = int(parts[1]) if parts[1] else len(lines)
    else:
        fail("unrecognised include target")
    if start < 1 or end < start or start > len(lines):
        fail("bad line range")
    return [l for l in lines[start - 1:end] if not MARKER.search(l)]


def expand(text: str, source: Path, root: Path, hidden, depth: int = 0) -> str:
    """Expands the includes of `text` (read from `source`). `hidden(path)` returns a note to
    put in place of an included file the edition must not show, or None to include it."""
    def replace(m: re.Match) -> str:
        whole = m.group(0)
        if whole.startswith("\\"):
            return whole  # still escaped: the edition's book is built from this text again

        def fail(why: str):
            raise IncludeError(f"{source.relative_to(root)}: {whole.strip()}: {why}")

        if m.group(1) != "include":
            fail(f"unsupported directive '#{m.group(1)}'")
        if depth >= MAX_DEPTH:
            fail("includes nested too deep")
        target = m.group(2).strip()
        file, _, spec = target.partition(":")
        resolved = (source.parent / file).resolve()
        if root not in resolved.parents:
            fail("includes a file outside the repository")
        note = hidden(resolved)
        if note is not None:
            return note
        try:
            content = resolved.read_text()
        except OSError as e:
            fail(f"cannot read it: {e.strerror}")
        selected = "\n".join(_select(content, spec or None, fail))
        return expand(selected, resolved, root, hidden, depth + 1)

    return DIRECTIVE.sub(replace, text)


def _lesson_of(path: Path, root: Path, top: str) -> int | None:
    """The lesson number of a file under root/top/NN_topic/, else None."""
    try:
        rel = path.relative_to(root / top)
    except ValueError:
        return None
    m = re.match(r"(\d\d)_", rel.parts[0]) if rel.parts else None
    return int(m.group(1)) if m else None


def chapter_allowed(name: str, lesson: int | None) -> bool:
    if name in INSTRUCTOR_ONLY or SOLUTION_PAGE.match(name):
        return False
    if name in COURSE_ONLY:
        return lesson is None
    m = LESSON_CHAPTER.match(name)
    return not m or lesson is None or int(m.group(1)) <= lesson


def _banner(lesson: int | None) -> str:
    what = ("the chapters of lessons 00 to " f"{lesson:02d}" if lesson is not None
            else "every lesson's chapter")
    return (f"> **Student edition:** {what}, without the solution walk-throughs. Where a page "
            "mentions `solutions/`, `--solution` or a solution walk-through, those are in the "
            "instructors' copy only.\n")


def write_book(root: Path, dest: Path, lesson: int | None) -> list[str]:
    """Writes the edition's book into dest/book; returns the chapters it holds."""
    src, out = root / "book" / "src", dest / "book"

    def hidden(path: Path) -> str | None:
        number = _lesson_of(path, root, "solutions")
        if number is not None:
            return (f"// (the reference solution of lesson {number:02d} is not part of the "
                    "student edition)")
        number = _lesson_of(path, root, "lessons")
        if number is not None and lesson is not None and number > lesson:
            return f"// (lesson {number:02d} is not part of this edition)"
        return None

    for item in TOOLING:
        source = root / "book" / item
        if source.is_dir():
            shutil.copytree(source, out / item, dirs_exist_ok=True)
        elif source.is_file():
            (out / item).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, out / item)

    summary = []
    for line in SOLUTIONS_BLOCK.sub("", (src / "SUMMARY.md").read_text()).splitlines():
        m = SUMMARY_LINK.search(line)
        if m and not chapter_allowed(m.group(1), lesson):
            continue
        summary.append(line)
    (out / "src").mkdir(parents=True, exist_ok=True)
    (out / "src" / "SUMMARY.md").write_text("\n".join(summary) + "\n")

    chapters, text_of_all = [], ""
    for page in sorted(src.glob("*.md")):
        if page.name == "SUMMARY.md" or not chapter_allowed(page.name, lesson):
            continue
        text = expand(page.read_text(), page, root, hidden)
        first, _, rest = text.partition("\n")
        if first.startswith("# "):
            text = f"{first}\n\n{_banner(lesson)}{rest}"
        (out / "src" / page.name).write_text(text)
        chapters.append(page.name)
        text_of_all += text
    # The pictures and examples the kept chapters name (a chart of a later lesson is left out).
    for asset in sorted(p for p in src.rglob("*") if p.is_file() and p.suffix != ".md"):
        rel = asset.relative_to(src).as_posix()
        if rel in text_of_all or rel.startswith("examples/"):
            (out / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(asset, out / "src" / rel)
    return chapters
