"""`./workshop export-student DIR [--lesson N]`: the student edition.

Two kinds:

- **One assignment** (`--lesson N`): lesson N alone — its starter (lessons/NN_topic), its tests
  (tests/NN_topic and tests/common), common/, the CMake files, the tool, a README for that
  assignment, the guide's chapters 00 to N without lesson N's reference code, and the autograding
  workflow of that lesson. Nothing of a later lesson: lesson N+1's starter holds lesson N's
  solved code. The benchmarks are off (they compare a lesson with the previous one, which is not
  there): bench/ is a stub.
- **The whole course** (no --lesson): every lesson's starter and tests, the benchmarks, the
  whole guide without reference code, every lesson's autograding. Its README says plainly that
  lesson N+1's starter holds lesson N's answer.

Neither has solutions/, the instructor guide, .ci/, the tool's tests or the project's own CI
workflow. The marker file .student-edition (TOML: edition and lesson) tells CMake and the tool
which edition they are in. Instructors keep the full repository."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

from . import classroom, edition_book
from .lessons import ROOT, Lesson, UsageError, all_lessons

MARKER = ".student-edition"
# paths that stay with the instructors (or are written anew for the edition)
LEFT_OUT = {"solutions", "book", ".ci", "tools/tests", "tools/break_it.py", "build", ".workshop",
            "reports", "tests/subproject", ".github/workflows/ci.yml", "CONTRIBUTING.md",
            "ARCHITECTURE.md", "README.md", ".github/workflows/classroom.yml", MARKER}


def is_student_edition(root: Path = ROOT) -> bool:
    return (root / MARKER).exists()


def edition(root: Path = ROOT) -> dict | None:
    """None in the instructors' copy; else {"edition": "lesson" | "course", "lesson": N?}."""
    path = root / MARKER
    if not path.exists():
        return None
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    data.setdefault("edition", "lesson" if "lesson" in data else "course")
    return data


def edition_lesson(root: Path = ROOT) -> int | None:
    """The lesson of a one-lesson edition; None elsewhere."""
    info = edition(root)
    return info.get("lesson") if info else None


def _files(root: Path) -> list[Path]:
    """The files git tracks or would track (nothing built or ignored); every file without git."""
    r = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                       cwd=root, capture_output=True, text=True)
    if r.returncode == 0:
        return [Path(p) for p in r.stdout.split("\0") if p and (root / p).is_file()]
    return [p.relative_to(root) for p in root.rglob("*")
            if p.is_file() and ".git" not in p.parts and "build" not in p.parts[:1]]


def _under(rel: Path, prefixes) -> bool:
    s = rel.as_posix()
    return any(s == x or s.startswith(x + "/") for x in prefixes)


def _wanted(rel: Path, lesson: Lesson | None) -> bool:
    if _under(rel, LEFT_OUT):
        return False
    if lesson is None:
        return True
    parts = rel.parts
    if parts[0] == "lessons":
        return len(parts) > 1 and parts[1] == lesson.folder
    if parts[0] == "tests":  # the lesson's tests, and those of common/ (tests/common, ...)
        return len(parts) > 1 and (parts[1] == lesson.folder
                                   or not re.match(r"\d\d_", parts[1]))
    if parts[0] == "bench":
        return False  # a stub instead (below)
    return True


def check_destination(dest: Path) -> Path:
    """The export's folder: new or empty, a folder, outside this repository, writable. Raises
    UsageError (before anything is copied)."""
    dest = dest.expanduser().resolve()
    if dest == ROOT or ROOT in dest.parents:
        raise UsageError("export the student copy outside this repository")
    if dest.exists() and not dest.is_dir():
        raise UsageError(f"{dest} is a file, not a folder; choose a new folder")
    if dest.is_dir() and any(dest.iterdir()):
        raise UsageError(f"{dest} exists and is not empty; choose a new folder")
    parent = dest
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"cannot create {dest}: {parent} is not a folder you can write to")
    return dest


BENCH_STUB = """\
# The benchmarks are not part of a one-lesson edition: each compares a lesson with the one
# before it, which this edition does not have. (The whole-course edition has them.)
"""


def _install_line() -> str:
    m = re.search(r"^sudo apt-get install -y .+$", (ROOT / "README.md").read_text(), re.M)
    if m:
        return m.group(0)
    from .environment import debian_packages
    return "sudo apt-get install -y " + " ".join(p.name for p in debian_packages())


def _troubleshooting() -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(r"^## Troubleshooting\n.*?(?=^## |\Z)", text, re.M | re.S)
    return m.group(0).rstrip() + "\n" if m else ""


def readme(lessons: list[Lesson], lesson: Lesson | None) -> str:
    """The README of an edition: what it holds, the commands that work in it, and how it is
    graded."""
    if lesson is not None:
        title = f"# Lesson {lesson.nn}: {lesson.title} — an assignment of the work-stealing workshop"
        files = ", ".join(f"`{f}`" for f in lesson.learner_files)
        intro = (
            f"{lesson.summary}\n\n"
            f"This repository is one assignment: lesson {lesson.nn} of a C++20 workshop in which "
            "you build a work-stealing task scheduler. It holds the starter code you complete "
            f"(`lessons/{lesson.folder}/`), its tests (`tests/{lesson.folder}/`), the shared "
            "code (`common/`), the build, the `./workshop` tool and the guide's chapters up to "
            f"this lesson (`book/`). The starter already contains the solved code of the earlier "
            f"lessons; the reference solution of this one is not here.\n\n"
            f"You write {files} in `lessons/{lesson.folder}/` (the places marked "
            "`TODO(exercise K)`). The benchmarks are not part of a one-lesson edition.\n")
        n = lesson.number
        commands = f"""\
```sh
./workshop test {n}                 # build and test your code, one line per exercise
./workshop test {n} --exercise 2    # only exercise 2
./workshop test {n} --tsan          # the same tests under ThreadSanitizer
./workshop hint {n} 2               # a nudge for exercise 2 (--level 2, --all: more)
./workshop watch {n}                # re-run the tests whenever you save
./workshop status                  # per-exercise progress from your last runs
./workshop book                    # the guide (this lesson's chapter and the earlier ones)
```
"""
        exercises = "\n".join(f"- exercise {e.number}: {e.title}" for e in lesson.exercises)
        points = classroom.lesson_points(lesson)
        grading = (
            f"## The exercises\n\n{exercises}\n\n"
            f"## How this assignment is graded\n\n"
            f"The autograding workflow (`.github/workflows/classroom.yml`) gives "
            f"{classroom.EXERCISE_POINTS} points per exercise whose tests all pass and "
            f"{classroom.TSAN_POINTS} when all of the lesson's tests also pass under "
            f"ThreadSanitizer: {points} points in all. Your instructor may grade from their own "
            f"copy of the workshop instead, taking only {files} from your repository: changes "
            "to the tests, the tool or the workflow change nothing of that grade, and there "
            "may be tests you have not seen. Compiler warnings cost no points (your own build treats "
            "them as errors, so that you see and fix them).\n")
    else:
        title = "# Build a work-stealing scheduler — the student edition"
        rows = "\n".join(f"| {l.nn} | `{l.folder}` | {l.title} |" for l in lessons)
        intro = (
            "A C++20 workshop in which you build a work-stealing task scheduler from scratch, one "
            "idea per lesson. This is the whole course: every lesson's starter code "
            "(`lessons/`), its tests (`tests/`), the shared code (`common/`), the benchmarks "
            "(`bench/`), the `./workshop` tool and the guide (`book/`), without the reference "
            "solutions.\n\n"
            "**Each lesson's starter contains the previous lessons' answers**: lesson N+1's "
            "starter holds lesson N's solved code (for instance `lessons/02_local_queues/` "
            "builds on a finished lesson 01), so that you can start any lesson even when you "
            "are stuck on the one before. If you want to solve lesson N yourself, do not read "
            "the later lessons' folders first — or ask your instructor for the one-lesson "
            "assignments, which hold nothing of later lessons.\n\n"
            f"| # | folder | the idea |\n| --- | --- | --- |\n{rows}\n")
        commands = """\
```sh
./workshop list                    # the lessons and how far you got
./workshop test 1                  # build and test YOUR code in lessons/01_shared_queue
./workshop test 1 --exercise 2     # only exercise 2
./workshop test 1 --tsan           # the same tests under ThreadSanitizer
./workshop hint 1 2                # a nudge for exercise 2 (--level 2, --all: more)
./workshop watch 1                 # re-run the tests whenever you save
./workshop bench 1                 # your lesson 01 against lesson 00, oneTBB and OpenMP
./workshop status                  # per-exercise progress from your last runs
./workshop check                   # grade your code in every lesson
./workshop book                    # the guide, served on http://127.0.0.1:3000
```
"""
        total = sum(classroom.lesson_points(l) for l in lessons)
        grading = (
            "## How it is graded\n\n"
            f"The autograding workflow (`.github/workflows/classroom.yml`) gives "
            f"{classroom.EXERCISE_POINTS} points per exercise whose tests all pass and "
            f"{classroom.TSAN_POINTS} per lesson whose tests all pass under ThreadSanitizer "
            f"({total} points for the whole course). Your instructor may grade from their own "
            "copy instead, taking only the files you write from your repository; changes to "
            "the tests, the tool or the workflow change nothing of that grade.\n")
    return f"""{title}

{intro}
## Quick start

On Debian 12 (or Ubuntu 24.04), install the tools once:

```sh
{_install_line()}
```

Then:

{commands}
`./workshop test` prints one line per exercise and, under each failing one, why: an unfinished
exercise says `not implemented yet: ...`; a hang is cut short by a watchdog that names the
exercise and its likely cause. The guide (`./workshop book`, or the Markdown in `book/src/`)
explains each lesson; where it mentions `solutions/` or `--solution`, those are in the
instructors' copy only.

{grading}
{_troubleshooting()}"""


def export_student(dest: Path, lesson_number: int | None = None) -> int:
    dest = check_destination(dest)
    try:
        dest.mkdir(parents=True, exist_ok=True)
        (dest / MARKER).write_text("")  # proves the folder writable before anything is copied
    except OSError as e:
        raise UsageError(f"cannot create {dest}: {e.strerror or e}") from None
    try:
        return _export(dest, lesson_number)
    except OSError as e:
        raise UsageError(f"the export to {dest} failed: {e}") from None


def _export(dest: Path, lesson_number: int | None) -> int:
    lessons = all_lessons()
    lesson = None
    if lesson_number is not None:
        lesson = next((l for l in lessons if l.number == lesson_number), None)
        if lesson is None:
            raise UsageError(f"there is no lesson {lesson_number}")
    kept = [l for l in lessons if lesson is None or l is lesson]
    copied = 0
    for rel in _files(ROOT):
        if not _wanted(rel, lesson):
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)
        copied += 1
    if lesson is not None:
        (dest / "bench").mkdir(parents=True, exist_ok=True)
        (dest / "bench" / "CMakeLists.txt").write_text(BENCH_STUB)
    chapters = edition_book.write_book(ROOT, dest, lesson.number if lesson else None)
    (dest / "README.md").write_text(readme(kept, lesson))
    workflow = dest / ".github" / "workflows" / "classroom.yml"
    workflow.parent.mkdir(parents=True, exist_ok=True)
    workflow.write_text(classroom.workflow(kept, single_lesson=lesson is not None))
    what = (f'edition = "lesson"\nlesson = {lesson.number}\n' if lesson
            else 'edition = "course"\n')
    (dest / MARKER).write_text(
        "# This is a student edition of the work-stealing workshop: the reference solutions are\n"
        "# not included. ./workshop test N tests your code; ./workshop check grades it.\n"
        + what)
    if lesson is not None:
        print(f"exported lesson {lesson.nn} to {dest}: {copied} files, {len(chapters)} chapters "
              f"of the guide (one-lesson edition: nothing of later lessons, no solutions)")
    else:
        print(f"exported the whole course to {dest}: {copied} files, {len(chapters)} chapters "
              "of the guide (student edition, without solutions/; each lesson's starter holds "
              "the previous lesson's answer)")
    print(f"next: cd {dest} && git init && ./workshop test {lesson.number if lesson else 0}")
    return 0
