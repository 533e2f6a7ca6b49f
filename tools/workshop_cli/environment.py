"""What the machine must have, and how to say what is missing (with the Debian package).

The packages are listed once, in tools/debian-packages.txt: each with the commands and files
this tool looks for that it provides, so a missing one is named with its package."""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .lessons import ROOT, UsageError

PACKAGE_LIST = ROOT / "tools" / "debian-packages.txt"

# what each preset needs on top of cmake and ninja
PRESET_COMPILER = {"default": "g++", "bench": "g++", "trace": "g++", "tsan": "clang++", "asan": "clang++"}
SANITIZER_RUNTIME = {"tsan": "libclang_rt.tsan-x86_64.a", "asan": "libclang_rt.asan-x86_64.a"}


@dataclass(frozen=True)
class DebianPackage:
    name: str
    group: str                  # required, optional peers, check, book
    provides: tuple[str, ...]   # the commands and files ./workshop looks for
    purpose: str


def parse_packages(text: str) -> list[DebianPackage]:
    """The lines of tools/debian-packages.txt: `[group]` headings, then `package provides...
    # purpose` lines; blank lines and whole-line comments are skipped."""
    out, group = [], ""
    for number, raw in enumerate(text.splitlines(), 1):
        line, _, comment = raw.partition("#")
        line = line.strip()
        if not line:
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise ValueError(f"debian-packages.txt:{number}: a group is written [name]")
            group = line[1:-1].strip()
            continue
        if not group:
            raise ValueError(f"debian-packages.txt:{number}: '{line}' comes before any [group]")
        name, *provides = line.split()
        out.append(DebianPackage(name, group, tuple(provides), comment.strip()))
    return out


@cache
def debian_packages(path: Path = PACKAGE_LIST) -> tuple[DebianPackage, ...]:
    return tuple(parse_packages(path.read_text()))


def packages_in(*groups: str) -> list[str]:
    """The names of the packages in these groups, in the file's order."""
    unknown = set(groups) - {p.group for p in debian_packages()}
    if unknown:
        raise ValueError(f"no group {sorted(unknown)} in {PACKAGE_LIST.name}")
    return [p.name for p in debian_packages() if p.group in groups]


def package_for(thing: str) -> str:
    """The Debian package that provides a command or file (the thing's own name if none)."""
    return next((p.name for p in debian_packages() if thing in p.provides), thing)


def install_hint(*things: str) -> str:
    packages = list(dict.fromkeys(package_for(t) for t in things))
    return "sudo apt-get install " + " ".join(packages)


def missing_message(command: str) -> str:
    return f"'{command}' is not installed. Install it with:  {install_hint(command)}"


def require(*commands: str) -> None:
    missing = [c for c in commands if shutil.which(c) is None]
    if missing:
        raise UsageError("\n".join(missing_message(c) for c in missing))


def require_preset(preset: str) -> None:
    require("cmake", "ninja", PRESET_COMPILER[preset])
    runtime = SANITIZER_RUNTIME.get(preset)
    if runtime:
        out = subprocess.run(["clang++", f"-print-file-name={runtime}"], capture_output=True,
                             text=True).stdout.strip()
        if "/" not in out:
            raise UsageError(f"clang's {preset[0].upper()}San runtime ({runtime}) is missing. "
                             f"Install it with:  {install_hint(runtime)}")
