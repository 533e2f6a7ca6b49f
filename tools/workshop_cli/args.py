"""argparse `type=` functions: each checks one option's value when the command line is read,
before anything runs, and turns a bad value into one line (argparse prints it with the usage
and exits with 2) instead of a traceback or a failure at the end of a long run."""
from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from . import export
from .lessons import ROOT, all_lessons

Bad = argparse.ArgumentTypeError


def _int(text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise Bad(f"'{text}' is not a whole number") from None


def positive_int(text: str) -> int:
    """A count of 1 or more (--jobs, --repeat, --repetitions, --level)."""
    value = _int(text)
    if value < 1:
        raise Bad(f"must be 1 or more, not {value}")
    return value


def positive_float(text: str) -> float:
    """A duration above zero (--min-time)."""
    try:
        value = float(text)
    except ValueError:
        raise Bad(f"'{text}' is not a number") from None
    if not value > 0 or value == float("inf"):
        raise Bad(f"must be a number of seconds above 0, not {text}")
    return value


def percent(text: str) -> float:
    """A score from 0 to 100 (--threshold)."""
    try:
        value = float(text)
    except ValueError:
        raise Bad(f"'{text}' is not a number") from None
    if not 0 <= value <= 100:
        raise Bad(f"must be from 0 to 100, not {text}")
    return value


def regex(text: str) -> str:
    """A regular expression that compiles (--filter)."""
    try:
        re.compile(text)
    except re.error as e:
        raise Bad(f"'{text}' is not a valid regular expression: {e}") from None
    if not text:
        raise Bad("is empty")
    return text


def _known() -> list[int]:
    return sorted(l.number for l in all_lessons())


def _known_text() -> str:
    return ", ".join(str(n) for n in _known()) or "none"


def lesson_number(text: str) -> int:
    """One lesson of this copy, as 4 or 04 (--lesson)."""
    m = re.fullmatch(r"\s*0*(\d+)(_\w+)?\s*", text)
    if not m:
        raise Bad(f"'{text}' is not a lesson number (the lessons are {_known_text()})")
    number = int(m.group(1))
    if number not in _known():
        raise Bad(f"there is no lesson {number} here (the lessons are {_known_text()})")
    return number


def parse_lesson_spec(spec: str) -> list[int]:
    """'1-4', '2', '0,3,5' -> the lesson numbers, each a lesson of this copy; ValueError with
    the reason otherwise."""
    wanted: list[int] = []
    for part in spec.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m:
            raise ValueError(f"'{spec}' is not a list of lessons: write them like 1-4, 2 or 0,3,5")
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        if last < first:
            raise ValueError(f"'{part.strip()}' is a reversed range: write {last}-{first}")
        wanted += [n for n in range(first, last + 1) if n not in wanted]
    known = _known()
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise ValueError(f"there is no lesson {unknown[0]} here (the lessons are "
                         f"{_known_text()})")
    return sorted(wanted)


def lesson_spec(text: str) -> str:
    """--lessons: checked now, kept as written."""
    try:
        parse_lesson_spec(text)
    except ValueError as e:
        raise Bad(str(e)) from None
    return text


def _writable_folder(path: Path, what: str) -> Path:
    path = path.expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise Bad(f"{path} is a file, not a folder for {what}")
    parent = path
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise Bad(f"cannot create {path}: {parent} is a file")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise Bad(f"cannot write {what} to {path}: {parent} is not writable")
    return path


def output_dir(text: str) -> Path:
    """A folder the reports can be written to (created later; checked now)."""
    return _writable_folder(Path(text), "the reports")


def export_dir(text: str) -> Path:
    """A new or empty folder outside this repository (export-student)."""
    try:
        return export.check_destination(Path(text))
    except Exception as e:  # UsageError, with the reason
        raise Bad(str(e)) from None


def existing_dir(text: str) -> Path:
    path = Path(text).expanduser().resolve()
    if not path.exists():
        raise Bad(f"{path} does not exist")
    if not path.is_dir():
        raise Bad(f"{path} is not a folder")
    return path


def submission_dir(text: str) -> Path:
    """A student's checkout: a folder with lessons/ in it."""
    path = existing_dir(text)
    if not (path / "lessons").is_dir():
        raise Bad(f"{path} has no lessons/ folder: is it a checkout of a student's repository?")
    if path == ROOT:
        raise Bad("that is this copy itself: grade it with ./workshop grade (no --submission)")
    return path


def class_dir(text: str) -> Path:
    """A folder with one student's checkout per subfolder."""
    path = existing_dir(text)
    if not any(p.is_dir() and not p.name.startswith(".") for p in path.iterdir()):
        raise Bad(f"{path} has no subfolders: put one student's checkout in each")
    return path


def hidden_dir(text: str) -> Path:
    """Hidden tests: NN_topic/*.cpp folders named like tests/NN_topic (or a tests/ folder of
    them), and NN_topic/model/*.cpp for the explorer's program."""
    path = existing_dir(text)
    if (path / "tests").is_dir():
        path = path / "tests"
    folders = {l.folder for l in all_lessons()}
    found = [p for p in path.iterdir() if p.is_dir() and p.name in folders]
    stray = [p.name for p in path.iterdir() if p.is_dir() and p.name not in folders
             and not p.name.startswith(".")]
    if stray:
        raise Bad(f"{path}/{stray[0]} is not a lesson's test folder (they are named like "
                  f"{sorted(folders)[0]})")
    if not any(f.suffix == ".cpp" for p in found for f in (*p.glob("*"), *p.glob("model/*"))):
        raise Bad(f"{path} has no NN_topic/*.cpp or NN_topic/model/*.cpp test files")
    return path


def bench_lesson(text: str) -> str:
    """`bench`'s lesson: refused in a one-lesson edition, which has no benchmarks."""
    only = export.edition_lesson()
    if only is not None:
        raise Bad(f"the benchmarks are not part of a one-lesson edition (they compare a lesson "
                  f"with the one before it); ./workshop test {only} tests your code")
    return text
