"""Generated code: every file that repeats code of another has one source (`./workshop sync`).

Lessons are self-contained on purpose (lesson N's starter holds the earlier lessons' solved
code), so the same lines stand in many files. Only one of them is edited by hand; sync writes
the others from it. A lesson's lesson.toml says which of its files are generated, and how:

    [idea]                        # the solution's files that grow out of an earlier lesson's
    from = 2
    files = ["thread_pool.hpp", "thread_pool.cpp"]

  solutions/03_steal_half/FILE is solutions/02_local_queues/FILE with the patch
  solutions/03_steal_half/idea/FILE.patch applied, byte for byte: that patch is the lesson's
  idea (`diff -u` of the two files is the patch).

    starter = ["thread_pool.cpp", "worker_queue.hpp"]

  lessons/03_steal_half/FILE is solutions/03_steal_half/FILE with the patch
  solutions/03_steal_half/starter/FILE.patch applied: the answers taken out, the TODOs and the
  NotImplemented stubs put in. The starter is plain code; the patch lives with the solution, so
  the student edition (no solutions/) does not hold the answers.

    given = ["thread_pool.hpp"]

  lessons/NN_topic/FILE is solutions/NN_topic/FILE as it is (code no exercise touches).

    [[carried]]
    file = "chase_lev_deque.hpp"
    from = 4                                      # the lesson whose solution is the source
    patch = "carried/chase_lev_deque.hpp.patch"   # optional, under solutions/NN_topic/
    change = "push publishes bottom with seq_cst; is_empty() for the parking recheck"

  Both solutions/NN_topic/FILE and lessons/NN_topic/FILE are the source lesson's solution with
  ws::lessonMM renamed ws::lessonNN, the patch (if any) applied and a header line naming the
  source.

Lessons are generated in order, so a chain resolves: an edit of lesson 02's solution reaches
lesson 03's solution, then lesson 04's, ..., and every starter made from them. Patches apply
strictly: every line of a hunk must match (a hunk may only have moved); a patch that no longer
applies is named with what to do, and nothing is generated from its file until it is fixed.
"""
from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .lessons import ROOT, UsageError, all_lessons

HEADER_PREFIX = "// Given code, carried from lesson "
PREVIOUS_DIR = Path(".workshop") / "sync-previous"
WAITS = "waits for"
CONTEXT = 3  # lines of context around each change in a recorded patch


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


@dataclass(frozen=True)
class Step:
    """One generated file (two, for a carried one): `base` with `patch` applied."""
    kind: str                 # "idea", "carried", "given" or "starter"
    lesson: int
    folder: str
    file: str
    base: Path                # absolute
    targets: tuple[Path, ...]  # absolute; the first is the one --record reads
    patch: Path | None        # absolute
    carried: Carried | None = None

    def how(self, root: Path) -> str:
        """Where the file comes from, for messages."""
        base = self.base.relative_to(root)
        if self.patch is None:
            return f"a copy of {base}"
        return f"{base} + {self.patch.relative_to(root)}"


def _meta(root: Path, folder: str) -> tuple[dict, Path]:
    meta_path = root / "lessons" / folder / "lesson.toml"
    if not meta_path.exists():
        return {}, meta_path
    try:
        return tomllib.loads(meta_path.read_text()), meta_path
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{meta_path.relative_to(root)}: {e}") from None


def _file_list(meta: dict, key: str, where: str) -> list[str]:
    value = meta.get(key, [])
    if not isinstance(value, list) or not all(isinstance(f, str) for f in value):
        raise UsageError(f"{where}: '{key}' must be a list of file names")
    return value


def carried_files(root: Path = ROOT) -> list[Carried]:
    """Every carried file of every lesson, in lesson order (a source before its copies)."""
    folders = {l.number: l.folder for l in all_lessons(root)}
    out = []
    for number, folder in sorted(folders.items()):
        meta, meta_path = _meta(root, folder)
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
    return [(s.folder, s.file) for s in plan(root) if s.kind == "given"]


def plan(root: Path = ROOT) -> list[Step]:
    """Every generated file, in the order sync makes them: lesson by lesson, and within a
    lesson the solution's files (idea, carried) before the starter's (given, starter)."""
    lessons = all_lessons(root)
    folders = {l.number: l.folder for l in lessons}
    carried = carried_files(root)
    steps: list[Step] = []
    for lesson in lessons:
        n, folder = lesson.number, lesson.folder
        meta, meta_path = _meta(root, folder)
        where = str(meta_path.relative_to(root))
        sol, les = root / "solutions" / folder, root / "lessons" / folder
        lesson_steps: list[Step] = []
        idea = meta.get("idea")
        if idea is not None:
            if not isinstance(idea, dict) or "from" not in idea or "files" not in idea:
                raise UsageError(f"{where}: [idea] needs 'from' (a lesson) and 'files' (a list)")
            source = int(idea["from"])
            if source not in folders or source >= n:
                raise UsageError(f"{where}: [idea] 'from = {source}' is not an earlier lesson")
            for file in _file_list(idea, "files", f"{where}: [idea]"):
                lesson_steps.append(Step("idea", n, folder, file,
                                         root / "solutions" / folders[source] / file,
                                         (sol / file,), sol / "idea" / f"{file}.patch"))
        for c in (c for c in carried if c.lesson == n):
            lesson_steps.append(Step("carried", n, folder, c.file, c.source_path(root),
                                     tuple(c.copies(root)), c.patch_path(root), c))
        for file in _file_list(meta, "given", where):
            lesson_steps.append(Step("given", n, folder, file, sol / file, (les / file,), None))
        for file in _file_list(meta, "starter", where):
            lesson_steps.append(Step("starter", n, folder, file, sol / file, (les / file,),
                                     sol / "starter" / f"{file}.patch"))
        seen: dict[Path, str] = {}
        for s in lesson_steps:
            for t in s.targets:
                if t in seen:
                    raise UsageError(f"{where}: {t.relative_to(root)} is generated twice "
                                     f"({seen[t]} and {s.kind}); name it once")
                seen[t] = s.kind
        steps.extend(lesson_steps)
    generated = {t for s in steps for t in s.targets}
    for s in steps:
        if s.base not in generated and not s.base.exists():
            raise UsageError(f"lessons/{s.folder}/lesson.toml: {s.kind} file {s.file} comes "
                             f"from {s.base.relative_to(root)}, which does not exist")
    return steps


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
    """Applies a unified diff (one file) to `text`, strictly: every line of every hunk must
    match (no fuzz); a hunk may have moved, as long as all its lines are found in order.
    Raises PatchError saying which hunk failed."""
    lines = text.splitlines(keepends=True)
    hunks: list[tuple[int, int, int, list[str]]] = []
    current = None
    for raw in patch.splitlines(keepends=True):
        if raw.startswith(("--- ", "+++ ")) and current is None:
            continue
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@", raw)
        if m:
            current = []
            hunks.append((int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1), current))
        elif current is not None and raw[:1] in (" ", "-", "+"):
            current.append(raw)
        elif current is not None and raw.startswith("\\"):
            raise PatchError(f"{name}: a file without a final newline is not supported")
        elif raw.strip():
            raise PatchError(f"{name}: not a unified diff line: {raw.rstrip()}")
    out, pos = [], 0
    for number, (start, old_count, new_count, body) in enumerate(hunks, 1):
        old = [l[1:] for l in body if l[0] in " -"]
        new = [l[1:] for l in body if l[0] in " +"]
        if len(old) != old_count or len(new) != new_count:
            raise PatchError(f"{name}: hunk {number} (at line {start}) is damaged: its lines do "
                             "not add up to its @@ header")
        want = max(start - 1 if old_count else start, pos)
        at = None
        for delta in range(0, len(lines) + 1):
            for cand in (want + delta, want - delta):
                if pos <= cand <= len(lines) - len(old) and lines[cand:cand + len(old)] == old:
                    at = cand
                    break
            if at is not None:
                break
        if at is None:
            first = next((l[1:].strip() for l in body if l[0] in " -" and l[1:].strip()), "")
            raise PatchError(f"{name}: hunk {number} (at line {start}, '{first}') no longer "
                             "matches")
        out.extend(lines[pos:at])
        out.extend(new)
        pos = at + len(old)
    out.extend(lines[pos:])
    return "".join(out)


def _prepare(s: Step, base_text: str) -> str:
    """The base as the patch sees it: for a carried file, renamed and without its header."""
    if s.carried is None:
        return base_text
    return _rename(_strip_generated(base_text), s.carried.source, s.lesson)


def _make(s: Step, base_text: str, root: Path) -> str:
    text = _prepare(s, base_text)
    if s.patch is not None:
        if not s.patch.exists():
            if s.carried is not None:
                raise UsageError(f"lessons/{s.folder}/lesson.toml names the patch "
                                 f"{s.patch.relative_to(root)}, which does not exist")
            raise UsageError(f"{s.targets[0].relative_to(root)}: its patch "
                             f"{s.patch.relative_to(root)} does not exist yet: write the file "
                             f"and run ./workshop sync --record {s.lesson} {s.file}")
        try:
            text = apply_patch(text, s.patch.read_text(), str(s.patch.relative_to(root)))
        except PatchError as e:
            target = s.targets[0].relative_to(root)
            if s.kind == "starter":
                fix = (f"If lesson {s.lesson:02d}'s solution changed in code the starter takes "
                       f"out, the starter is right as it is; otherwise make the change in "
                       f"{target} by hand. Then run ./workshop sync --record {s.lesson} {target}")
            else:
                fix = (f"Make lesson {s.base.parent.name[:2]}'s change there by hand (or leave "
                       f"the file as it is, if this lesson replaces that code), then run "
                       f"./workshop sync --record {s.lesson} {target}")
            raise PatchError(f"lesson {s.lesson:02d}, {target}: {e} in "
                             f"{s.base.relative_to(root)}. {fix}") from None
    return _header(s.carried) + text if s.carried is not None else text


@dataclass
class Generation:
    texts: dict[Path, str]      # every target that could be made
    failures: dict[Path, str]   # every target that could not, with why


def generate(root: Path = ROOT) -> Generation:
    """Every generated file's text, in lesson order; a chain reads the new text of its source,
    not the old one on disk. A step that fails (its patch no longer applies) is reported, and
    every file made from it waits for it."""
    gen = Generation({}, {})
    for s in plan(root):
        if s.base in gen.failures:
            why = f"{WAITS} {s.base.relative_to(root)} (fix that first)"
            for t in s.targets:
                gen.failures[t] = why
            continue
        base_text = gen.texts[s.base] if s.base in gen.texts else s.base.read_text()
        try:
            text = _make(s, base_text, root)
        except UsageError as e:
            for t in s.targets:
                gen.failures[t] = str(e)
            continue
        for t in s.targets:
            gen.texts[t] = text
    return gen


def generate_all(root: Path = ROOT) -> dict[Path, str]:
    """Every generated file's expected text; raises if any cannot be made."""
    gen = generate(root)
    if gen.failures:
        raise UsageError(_failure_report(gen, root))
    return gen.texts


def _failure_report(gen: Generation, root: Path) -> str:
    first = [why if str(t.relative_to(root)) in why else f"{t.relative_to(root)}: {why}"
             for t, why in gen.failures.items() if not why.startswith(WAITS)]
    waiting = [t for t, why in gen.failures.items() if why.startswith(WAITS)]
    lines = sorted(set(first))
    if waiting:
        lines.append(f"({len(waiting)} more generated files wait for these: "
                     + ", ".join(str(t.relative_to(root)) for t in waiting[:6])
                     + (", ..." if len(waiting) > 6 else "") + ")")
    return "\n".join(lines)


def first_difference(actual: str, wanted: str) -> tuple[int, str, str]:
    a, w = actual.splitlines(), wanted.splitlines()
    for i, (x, y) in enumerate(zip(a, w), 1):
        if x != y:
            return i, x, y
    n = min(len(a), len(w)) + 1
    return n, (a[n - 1] if len(a) >= n else "<end of file>"), (w[n - 1] if len(w) >= n else
                                                                 "<end of file>")


def drift(root: Path = ROOT) -> list[str]:
    """One entry per generated file that differs from what sync would write, or that sync
    cannot make (its patch no longer applies)."""
    gen = generate(root)
    problems = []
    if gen.failures:
        problems.append(_failure_report(gen, root))
    for s in plan(root):
        for path in s.targets:
            if path not in gen.texts:
                continue
            rel = path.relative_to(root)
            if not path.exists():
                problems.append(f"{rel}: missing (run ./workshop sync)")
                continue
            actual = path.read_text()
            if actual != gen.texts[path]:
                line, got, want = first_difference(actual, gen.texts[path])
                if s.kind in ("idea", "starter"):
                    fix = (f"it is {s.how(root)}: to keep this edit run ./workshop sync "
                           f"--record {s.lesson} {rel}; to drop it, ./workshop sync")
                else:
                    fix = f"it is {s.how(root)}: edit the source and run ./workshop sync"
                problems.append(f"{rel}:{line}: differs from what sync generates ({fix})\n"
                                f"    here:      {got.strip()}\n"
                                f"    generated: {want.strip()}")
    return problems


def sync(root: Path = ROOT) -> tuple[list[Path], str]:
    """Writes every generated file that differs, keeping the text it replaces under
    .workshop/sync-previous/ (nothing is lost if it held an edit). Returns the files written
    and the report of those it could not make ("" if none)."""
    gen = generate(root)
    written = []
    for path, text in gen.texts.items():
        if path.exists() and path.read_text() == text:
            continue
        if path.exists():
            keep = root / PREVIOUS_DIR / path.relative_to(root)
            keep.parent.mkdir(parents=True, exist_ok=True)
            keep.write_text(path.read_text())
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written, _failure_report(gen, root) if gen.failures else ""


def _diff(old: str, new: str, old_name: str, new_name: str) -> str:
    for name, text in ((old_name, old), (new_name, new)):
        if text and not text.endswith("\n"):
            raise UsageError(f"{name} does not end with a newline; add one first")
    return "".join(difflib.unified_diff(old.splitlines(keepends=True),
                                        new.splitlines(keepends=True), old_name, new_name,
                                        n=CONTEXT))


def _record_targets(lesson: int, file: str, root: Path) -> list[tuple[Step, Path]]:
    """The generated files --record LESSON FILE may mean: FILE as lesson.toml names it (every
    copy of it in the lesson that differs from what sync writes), or a path."""
    steps = [s for s in plan(root) if s.lesson == lesson]
    as_path = (root / file).resolve() if "/" in file else None
    found = [(s, s.targets[0]) for s in steps
             if (s.targets[0].resolve() == as_path if as_path else s.file == file)]
    if not found and as_path:
        found = [(s, t) for s in steps for t in s.targets if t.resolve() == as_path]
    if not found:
        raise UsageError(f"lesson {lesson:02d} generates no file named {file} (see its "
                         "lesson.toml: [idea], starter, given, [[carried]])")
    return found


def record(lesson: int, file: str, root: Path = ROOT) -> list[Path]:
    """Saves a generated file as it stands (edited by hand, on purpose) as its patch against
    its base, so that sync reproduces the edit from now on. FILE as lesson.toml names it means
    each copy in the lesson that holds an edit (the solution's first: the starter is made from
    it); a path (solutions/... or lessons/...) means that one."""
    found = _record_targets(lesson, file, root)
    named = "/" in file
    before = generate(root)
    chosen = []
    for s, target in found:
        if s.kind == "given" and not named:
            continue  # the starter's copy of a given file is the solution's: nothing to record
        if s.kind == "given":
            raise UsageError(f"{target.relative_to(root)} is given: the starter holds the "
                             "solution's file as it is, so there is no patch to record; edit "
                             f"solutions/{s.folder}/{s.file} instead, or move {s.file} from "
                             "'given' to 'starter' in lesson.toml")
        if s.patch is None:
            raise UsageError(f"lessons/{s.folder}/lesson.toml: give [[carried]] {s.file} a "
                             f"'patch = \"carried/{s.file}.patch\"' and a 'change = \"...\"' "
                             "first")
        if not target.exists():
            raise UsageError(f"{target.relative_to(root)} does not exist: write it first")
        if named:
            chosen.append((s, target))
        elif target in before.texts:
            if target.read_text() != before.texts[target]:
                chosen.append((s, target))  # edited by hand
        elif not before.failures[target].startswith(WAITS):
            chosen.append((s, target))  # its patch failed: fixed by hand, we trust
    if not chosen:
        raise UsageError(f"nothing to record: every copy of {file} in lesson {lesson:02d} is "
                         "what sync writes")
    written = []
    for s, target in chosen:
        gen = generate(root)  # again: the starter is made from the solution just recorded
        if s.base in gen.failures:
            raise UsageError(f"{target.relative_to(root)} is made from "
                             f"{s.base.relative_to(root)}, which sync cannot make yet: record "
                             "that one first")
        base = _prepare(s, gen.texts[s.base] if s.base in gen.texts else s.base.read_text())
        now = target.read_text()
        if s.carried is not None:
            now = _strip_generated(now)
            names = (f"a/{s.file}", f"b/{s.file}")
        else:
            names = (str(s.base.relative_to(root)), str(target.relative_to(root)))
        assert s.patch is not None
        s.patch.parent.mkdir(parents=True, exist_ok=True)
        s.patch.write_text(_diff(base, now, *names))
        written.append(s.patch)
    return written
