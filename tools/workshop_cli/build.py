"""Configuring and building with the CMake presets (running the tests: ctest.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .environment import require_preset
from .lessons import ROOT, UsageError


# WS_BUILD_ROOT moves every build directory elsewhere (the presets' default is build/): two
# people, or two scripts, working in one checkout then do not rebuild each other's trees.
BUILD_ROOT = Path(os.environ.get("WS_BUILD_ROOT") or ROOT / "build").resolve()


def build_dir(preset: str) -> Path:
    return BUILD_ROOT / preset


def shown(path: Path) -> Path:
    """A path as the tool prints it: relative to the repository when it is inside it (a build
    directory under WS_BUILD_ROOT may not be)."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def run(cmd: list[str], *, quiet: bool = False, env: dict | None = None,
        cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """Runs a command; with quiet=True its output is captured and returned, not shown."""
    if not quiet:
        print("$ " + " ".join(cmd), flush=True)
    full_env = None if env is None else {**os.environ, **env}
    return subprocess.run(cmd, cwd=cwd, env=full_env, text=True,
                          capture_output=quiet, check=False)


class BuildError(Exception):
    """The build failed; the message holds the compiler's output."""


def refuse_another_checkouts_tree(tree: Path, source: Path) -> None:
    """A build tree configured for another checkout (one WS_BUILD_ROOT set for two copies)
    would build that checkout's code, or make CMake refuse: say so in one line instead.
    `source`: the checkout this tree must build."""
    cache = tree / "CMakeCache.txt"
    text = cache.read_text(errors="replace") if cache.is_file() else ""
    configured_for = next((line.split("=", 1)[1] for line in text.splitlines()
                           if line.startswith("CMAKE_HOME_DIRECTORY:")), None)
    if configured_for is None or Path(configured_for).resolve() == source.resolve():
        return
    if os.environ.get("WS_BUILD_ROOT"):
        raise UsageError(f"WS_BUILD_ROOT={os.environ['WS_BUILD_ROOT']} holds the builds of "
                         f"{configured_for}, not of this checkout ({source}): give each "
                         f"checkout a WS_BUILD_ROOT of its own (or unset it here)")
    raise UsageError(f"{tree} was configured for {configured_for}, not for this checkout "
                     f"({source}): delete {tree} and run the command again")


def configure(preset: str, quiet: bool = True) -> None:
    require_preset(preset)
    refuse_another_checkouts_tree(build_dir(preset), ROOT)
    if (build_dir(preset) / "build.ninja").exists():
        return  # the build re-runs CMake itself when a CMakeLists.txt changes
    result = run(["cmake", "--preset", preset, "-B", str(build_dir(preset))], quiet=quiet)
    if result.returncode != 0:
        raise BuildError(f"configuring the '{preset}' build failed:\n"
                         f"{(result.stdout or '') + (result.stderr or '')}")


def build(preset: str, targets: list[str] | None = None, quiet: bool = True) -> None:
    configure(preset, quiet)
    cmd = ["cmake", "--build", str(build_dir(preset))]
    for target in targets or []:
        cmd += ["--target", target]
    result = run(cmd, quiet=quiet)
    if result.returncode != 0:
        output = (result.stdout or "") + (result.stderr or "")
        raise BuildError(f"the '{preset}' build failed:\n{_compiler_errors(output)}")


def _compiler_errors(output: str) -> str:
    """The useful part of a failed ninja build: from the first FAILED: line on."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("FAILED:"):
            return "\n".join(lines[i:i + 60])
    return "\n".join(lines[-60:])


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
