"""Carried code: files a lesson takes, solved, from an earlier lesson (`./workshop sync`).

A lesson's lesson.toml lists what it carries:

    [[carried]]
    file = "chase_lev_deque.hpp"
    from = 4                                  # the lesson whose solution is the source
    patch = "carried/chase_lev_deque.hpp.patch"   # optional, under solutions/NN_topic/
    change = "push publishes bottom with seq_cst; is_empty() for the parking recheck"

The copy in solutions/NN_topic/ and the one in lessons/NN_topic/ are the same file, generated
from the source lesson's solution: the namespace ws::lessonMM becomes ws::lessonNN, the named
patch (if any) is applied, and one header line says where the file comes from. The source of
a carried file may itself be carried (lesson 06 carries lesson 05's deque, which carries lesson
04's): the chain ends at the one file a contributor edits.

A lesson's own file that no exercise touches (`given = ["thread_pool.hpp"]` in lesson.toml) is
written to the starter exactly as the solution holds it, anchors included.
"""
from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .lessons import ROOT, UsageError, all_lessons

HEADER_PREFIX = "// Given code, carried from lesson "


@dataclass(frozen=True)
class Carried:
    lesson: int       # the lesson that carries the file
    folder: str       # its folder, e.g. "06_injector"
    file: str         # e.g. "parker.hpp"
    source: int       # the lesson it comes from
    source_folder: str
    patch: str | None  # relative to solutions/<folder>/
    change: str | None

    def copies(self, root: Path) -> list[Path]:
        return [root / "solutions" / self.folder / self.file,
                root / "lessons" / self.folder / self.file]

    def source_path(self, root: Path) -> Path:
        return root / "solutions" / self.source_folder / self.file

    def patch_path(self, root: Path) -> Path | None:
        return root / "solutions" / self.folder / self.patch if self.patch else None


def carried_files(root: Path = ROOT) -> list[Carried]:
    """Every carried file of every lesson, in lesson order (a source before its copies)."""
    folders = {l.number: l.folder for l in all_lessons(root)}
    out = []
    for number, folder in sorted(folders.items()):
        meta_path = root / "lessons" / folder / "lesson.toml"
        if not meta_path.exists():
            continue
        try:
            meta = tomllib.loads(meta_path.read_text())
        except tomllib.TOMLDecodeError as e:
            raise UsageError(f"{meta_path.relative_to(root)}: {e}") from None
        for entry in meta.get("carried", []):
            where = f"{meta_path.relative_to(root)}: [[carried]] {entry.get('file', '?')}"
            if "file" not in entry or "from" not in entry:
                raise UsageError(f"{where} needs both 'file' and 'from'")
            source = int(entry["from"])
            if source not in folders or source >= number:
                raise UsageError(f"{where}: 'from = {source}' is not an earlier lesson")
            out.append(Carried(number, folder, entry["file"], source, folders[source],
                               entry.get("patch"), entry.get("change")))
    return out


def given_files(root: Path = ROOT) -> list[tuple[str, str]]:
    """(folder, file) for every file a lesson's starter holds exactly as its solution does
    (lesson.toml's `given = [...]`): code of the lesson that no exercise asks for."""
    out = []
    for lesson in all_lessons(root):
        meta_path = root / "lessons" / lesson.folder / "lesson.toml"
        if not meta_path.exists():
            continue
        try:
            meta = tomllib.loads(meta_path.read_text())
        except tomllib.TOMLDecodeError as e:
            raise UsageError(f"{meta_path.relative_to(root)}: {e}") from None
        for file in meta.get("given", []):
            if not (root / "solutions" / lesson.folder / file).exists():
                raise UsageError(f"{meta_path.relative_to(root)}: given file {file} is not in "
                                 f"solutions/{lesson.folder}/")
            out.append((lesson.folder, file))
    return out


def _rename(text: str, source: int, lesson: int) -> str:
    return re.sub(rf"\bws::lesson{source:02d}\b", f"ws::lesson{lesson:02d}", text)


def _header(c: Carried) -> str:
    what = f"{HEADER_PREFIX}{c.source:02d}'s solution"
    if c.change:
        what += f", with lesson {c.lesson:02d}'s change:"
        lines = [what]
        # wrap the change under the header at 100 columns, as clang-format would
        words, line = c.change.split(), "//  "
        for word in words:
            if len(line) + 1 + len(word) > 100:
                lines.append(line)
                line = "//  "
            line += " " + word
        lines.append(line + ".")
    else:
        lines = [what + ", unchanged."]
    lines.append("// (./workshop sync writes this copy; edit the source lesson's file instead.)")
    return "\n".join(lines) + "\n"


def _strip_generated(text: str) -> str:
    """The text of a carried copy without its generated header lines."""
    lines = text.splitlines(keepends=True)
    if not lines or not lines[0].startswith(HEADER_PREFIX):
        return text
    i = 1
    while i < len(lines) and lines[i].startswith("//  ") and not lines[i].startswith("// ("):
        i += 1
    if i < len(lines) and lines[i].startswith("// (./workshop sync"):
        i += 1
    return "".join(lines[i:])


class PatchError(UsageError):
    pass


def apply_patch(text: str, patch: str, name: str) -> str:
    """Applies a unified diff (one file) to `text`; every hunk must match exactly (a hunk may
    have moved, as long as its lines are found). Raises PatchError saying which hunk failed."""
    lines = text.splitlines(keepends=True)
    hunks, current = [], None
    for raw in patch.splitlines(keepends=True):
        if raw.startswith(("--- ", "+++ ")) and current is None:
            continue
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", raw)
        if m:
            current = (int(m.group(1)), [])
            hunks.append(current)
        elif current is not None and raw[:1] in (" ", "-", "+"):
            current[1].append(raw)
        elif current is not None and raw.startswith("\\"):
            continue  # "\ No newline at end of file"
        elif raw.strip():
            raise PatchError(f"{name}: not a unified diff line: {raw.rstrip()}")
    out, pos = [], 0
    for number, (start, body) in enumerate(hunks, 1):
        old = [l[1:] for l in body if l[0] in " -"]
        new = [l[1:] for l in body if l[0] in " +"]
        want = max(start - 1, pos)
        at = None
        for delta in range(0, len(lines) + 1):
            for cand in (want + delta, want - delta):
                if pos <= cand <= len(lines) - len(old) and lines[cand:cand + len(old)] == old:
                    at = cand
                    break
            if at is not None:
                break
        if at is None:
            first = old[0].rstrip() if old else ""
            raise PatchError(f"{name}: hunk {number} (at line {start}, '{first}') no longer "
                             "matches its source; make the change again and record it with "
                             "./workshop sync --record")
        out.extend(lines[pos:at])
        out.extend(new)
        pos = at + len(old)
    out.extend(lines[pos:])
    return "".join(out)


def _base_text(c: Carried, root: Path) -> str:
    """The source, renamed into the carrying lesson's namespace, before the patch."""
    src = c.source_path(root)
    if not src.exists():
        raise UsageError(f"lesson {c.lesson:02d} carries {c.file} from lesson {c.source:02d}, "
                         f"but {src.relative_to(root)} does not exist")
    return _rename(_strip_generated(src.read_text()), c.source, c.lesson)


def expected(c: Carried, root: Path = ROOT, sources: dict[Path, str] | None = None) -> str:
    """What a carried copy must hold. `sources` maps paths to text already generated in this
    run, so a chain (05 from 04, 06 from 05) is generated from the new text, not the old."""
    src = c.source_path(root)
    if sources and src in sources:
        base = _rename(_strip_generated(sources[src]), c.source, c.lesson)
    else:
        base = _base_text(c, root)
    patch = c.patch_path(root)
    if patch is not None:
        if not patch.exists():
            raise UsageError(f"lessons/{c.folder}/lesson.toml names the patch "
                             f"{patch.relative_to(root)}, which does not exist")
        base = apply_patch(base, patch.read_text(), str(patch.relative_to(root)))
    return _header(c) + base


def generate_all(root: Path = ROOT) -> dict[Path, str]:
    """Every carried copy's expected text, generated in lesson order, and every given file's
    starter copy (the solution's file as it is)."""
    out: dict[Path, str] = {}
    for c in carried_files(root):
        text = expected(c, root, out)
        for path in c.copies(root):
            out[path] = text
    for folder, file in given_files(root):
        out[root / "lessons" / folder / file] = (root / "solutions" / folder / file).read_text()
    return out


def first_difference(actual: str, wanted: str) -> tuple[int, str, str]:
    a, w = actual.splitlines(), wanted.splitlines()
    for i, (x, y) in enumerate(zip(a, w), 1):
        if x != y:
            return i, x, y
    n = min(len(a), len(w)) + 1
    return n, (a[n - 1] if len(a) >= n else "<end of file>"), (w[n - 1] if len(w) >= n else
                                                                 "<end of file>")


def drift(root: Path = ROOT) -> list[str]:
    """One line per carried copy that differs from what sync would write."""
    problems = []
    for path, text in generate_all(root).items():
        rel = path.relative_to(root)
        if not path.exists():
            problems.append(f"{rel}: missing (run ./workshop sync)")
            continue
        actual = path.read_text()
        if actual != text:
            line, got, want = first_difference(actual, text)
            problems.append(f"{rel}:{line}: differs from its source (edit the source and run "
                            f"./workshop sync)\n    here:   {got.strip()}\n    source: "
                            f"{want.strip()}")
    return problems


def sync(root: Path = ROOT) -> list[Path]:
    """Writes every carried copy that differs; returns the ones written."""
    written = []
    for path, text in generate_all(root).items():
        if not path.exists() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            written.append(path)
    return written


def record(lesson: int, file: str, root: Path = ROOT) -> Path:
    """Saves the difference between a carried copy as it stands (edited by hand, on purpose)
    and its source as the lesson's patch, so that sync reproduces the edit from now on."""
    matches = [c for c in carried_files(root) if c.lesson == lesson and c.file == file]
    if not matches:
        raise UsageError(f"lesson {lesson:02d} carries no file named {file} (see its lesson.toml)")
    c = matches[0]
    if not c.patch:
        raise UsageError(f"lessons/{c.folder}/lesson.toml: give [[carried]] {file} a "
                         f"'patch = \"carried/{file}.patch\"' and a 'change = \"...\"' first")
    copy = c.copies(root)[0]
    base = _base_text(c, root).splitlines(keepends=True)
    now = _strip_generated(copy.read_text()).splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(base, now, f"a/{file}", f"b/{file}", n=3))
    patch = c.patch_path(root)
    assert patch is not None
    patch.parent.mkdir(parents=True, exist_ok=True)
    patch.write_text(diff)
    return patch
