"""What the machine must have, and how to say what is missing (with the Debian package)."""
from __future__ import annotations

import shutil
import subprocess

from .lessons import UsageError

# command -> Debian package that provides it
PACKAGES = {
    "cmake": "cmake",
    "ninja": "ninja-build",
    "g++": "g++",
    "clang++": "clang",
    "ctest": "cmake",
    "node": "nodejs",
    "npm": "npm",
    "chromium": "chromium",
    "clang-format": "clang-format",
}

# what each preset needs on top of cmake and ninja
PRESET_COMPILER = {"default": "g++", "bench": "g++", "tsan": "clang++", "asan": "clang++"}
SANITIZER_RUNTIME = {"tsan": "libclang_rt.tsan-x86_64.a", "asan": "libclang_rt.asan-x86_64.a"}


def missing_message(command: str) -> str:
    package = PACKAGES.get(command, command)
    return f"'{command}' is not installed. Install it with:  sudo apt-get install {package}"


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
                             "Install it with:  sudo apt-get install libclang-rt-14-dev")
