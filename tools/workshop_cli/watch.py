"""`./workshop watch N`: re-run a lesson's tests whenever one of its files changes.

Uses inotifywait (Debian package inotify-tools) when it is installed, and polls the files'
modification times once a second otherwise."""
from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Callable

from .lessons import ROOT, Lesson

Snapshot = dict[Path, float]


def watched_dirs(lesson: Lesson) -> list[Path]:
    return [ROOT / "lessons" / lesson.folder, ROOT / "tests" / lesson.folder]


def snapshot(dirs: list[Path]) -> Snapshot:
    return {p: p.stat().st_mtime for d in dirs if d.exists() for p in d.rglob("*") if p.is_file()}


def changed(before: Snapshot, after: Snapshot) -> list[Path]:
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def wait_for_change(dirs: list[Path], poll_seconds: float = 1.0) -> list[Path]:
    if shutil.which("inotifywait"):
        r = subprocess.run(["inotifywait", "-q", "-r", "-e", "close_write,moved_to,create,delete",
                            "--format", "%w%f", *map(str, dirs)], capture_output=True, text=True)
        return [Path(line) for line in r.stdout.splitlines() if line]
    before = snapshot(dirs)
    while True:
        time.sleep(poll_seconds)
        diff = changed(before, snapshot(dirs))
        if diff:
            return diff


def watch(lesson: Lesson, run_tests: Callable[[], int]) -> int:
    dirs = watched_dirs(lesson)
    how = "inotify" if shutil.which("inotifywait") else "polling once a second"
    while True:
        run_tests()
        print(f"\nwatching lessons/{lesson.folder} and tests/{lesson.folder} ({how}); "
              "Ctrl-C stops", flush=True)
        files = wait_for_change(dirs)
        time.sleep(0.3)  # let an editor finish writing
        names = ", ".join(p.name for p in files[:3])
        print(f"\nchanged: {names}; re-running ...", flush=True)
