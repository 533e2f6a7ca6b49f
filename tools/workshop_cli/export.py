"""`./workshop export-student DIR`: a clean copy for students.

It leaves out the reference solutions (and the guide and CI, which include or test them) and
marks the copy as the student edition (.student-edition), where CMake builds no solution
targets and the benchmarks measure the student's own code. Instructors keep the full
repository."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .lessons import ROOT, UsageError

MARKER = ".student-edition"
# top-level paths that stay with the instructors
LEFT_OUT = {"solutions", "book", ".ci", "tools/tests", "tools/break_it.py", "build", ".workshop",
            "reports"}


def is_student_edition(root: Path = ROOT) -> bool:
    return (root / MARKER).exists()


def _files(root: Path) -> list[Path]:
    """The files git tracks or would track (nothing built or ignored); every file without git."""
    r = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root, capture_output=True, text=True)
    if r.returncode == 0:
        return [Path(p) for p in r.stdout.split("\0") if p and (root / p).is_file()]
    return [p.relative_to(root) for p in root.rglob("*")
            if p.is_file() and ".git" not in p.parts and "build" not in p.parts[:1]]


def _left_out(rel: Path) -> bool:
    s = rel.as_posix()
    return any(s == x or s.startswith(x + "/") for x in LEFT_OUT)


def export_student(dest: Path) -> int:
    dest = dest.resolve()
    if dest == ROOT or ROOT in dest.parents:
        raise UsageError("export the student copy outside this repository")
    if dest.exists() and any(dest.iterdir()):
        raise UsageError(f"{dest} exists and is not empty; choose a new folder")
    copied = 0
    for rel in _files(ROOT):
        if _left_out(rel):
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)
        copied += 1
    (dest / MARKER).write_text(
        "This is the student edition of the work-stealing workshop: the reference solutions\n"
        "are not included. ./workshop test N tests your code; ./workshop grade grades it.\n")
    print(f"exported {copied} files to {dest} (student edition, without solutions/)")
    print(f"next: cd {dest} && git init && ./workshop test 0")
    return 0
