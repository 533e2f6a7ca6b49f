"""Hints, from one source for the tool and the book: lessons/NN_topic/hints.md.

Each exercise's hints sit between `<!-- ANCHOR: exerciseK -->` and
`<!-- ANCHOR_END: exerciseK -->` (the book includes that region), one `<details>` block per
hint, from a nudge to nearly the answer:

    <details>
    <summary>Hint 1: a short title</summary>

    Markdown text.

    </details>
"""
from __future__ import annotations

import re
from pathlib import Path

from .lessons import ROOT, Lesson, UsageError

_REGION = re.compile(r"<!-- ANCHOR: exercise(\d+) -->(.*?)<!-- ANCHOR_END: exercise\1 -->", re.S)
_HINT = re.compile(r"<details>\s*<summary>(.*?)</summary>(.*?)</details>", re.S)


def hints_path(lesson: Lesson) -> Path:
    return ROOT / "lessons" / lesson.folder / "hints.md"


def load_hints(lesson: Lesson) -> dict[int, list[tuple[str, str]]]:
    """exercise number -> [(summary, body)], in order."""
    path = hints_path(lesson)
    if not path.exists():
        return {}
    text = path.read_text()
    return {int(m.group(1)): [(s.strip(), b.strip()) for s, b in _HINT.findall(m.group(2))]
            for m in _REGION.finditer(text)}


def hint_text(lesson: Lesson, exercise: int | None, level: int | None) -> str:
    hints = load_hints(lesson)
    numbers = [exercise] if exercise is not None else [e.number for e in lesson.exercises]
    if exercise is not None:
        lesson.exercise(exercise)  # raises with the list of exercises if unknown
    out = []
    for n in numbers:
        ex = lesson.exercise(n)
        items = hints.get(n, [])
        if not items:
            raise UsageError(f"lesson {lesson.nn}, exercise {n} has no hints yet "
                             f"({hints_path(lesson).relative_to(ROOT)})")
        out.append(f"lesson {lesson.nn}, exercise {n}: {ex.title}")
        shown = items if level is None else items[:level]
        for summary, body in shown:
            out.append(f"\n  {summary}\n")
            out.extend("    " + line if line else "" for line in body.splitlines())
        if level is not None and level < len(items):
            out.append(f"\n  (more: ./workshop hint {lesson.number} {n} --level {level + 1})")
        out.append("")
    return "\n".join(out)
