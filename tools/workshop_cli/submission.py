"""Grading builds, and grading a student's checkout from a trusted copy.

A student controls everything in their repository: the tests, the tool, the CMake files, the
workflow. So `./workshop grade --submission PATH` builds in a scratch copy of the INSTRUCTORS'
tree and takes from the student only the files the instructors' lesson.toml lists as the
learner's (`learner_files`): a header dropped next to them (say a gtest/gtest.h that shadows
GoogleTest's), an edited lesson.toml or test never arrives.

The scratch copy is built once with the instructors' code (the reference solution's tests give
the list of tests every submission must pass), then snapshotted; each student gets a fresh copy
of the snapshot at the same path (so the build is incremental: only what the student's files
touch is compiled again). solutions/ is removed before any student code is compiled, so a
submission cannot #include the reference."""
from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from . import build as b
from .environment import require_preset
from .lessons import Lesson

# Cache variables every grading build sets on top of its preset's: warnings are reported,
# never fatal; no benchmarks; tests on; each test file compiled on its own (an instructor's
# hidden test file may reuse a name that a unity group with the public tests would refuse:
# cmake/WsTesting.cmake).
OVERRIDES = {"WS_WARNINGS_AS_ERRORS": "OFF", "WS_BUILD_BENCHMARKS": "OFF",
             "WS_BUILD_TESTS": "ON", "WS_UNITY_TESTS": "OFF"}
# What of the instructors' tree a grading copy needs.
TRUSTED = ["CMakeLists.txt", "CMakePresets.json", "cmake", "common", "lessons", "solutions",
           "tests", ".student-edition"]
UNTRUSTED_MAX_BYTES = 2_000_000
WARNING = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:\d+:)? warning: (?P<what>.*)$")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# What a learner's file has no business doing; flagged for a human to look at, not scored.
REVIEW = [
    (re.compile(r"\b(?:_exit|_Exit|quick_exit|exit|abort)\s*\("), "ends the process itself"),
    (re.compile(r"#\s*(?:define|undef)\s+(?:TEST|EXPECT_|ASSERT_|GTEST|FAIL|SUCCEED|ADD_FAIL)"),
     "redefines a GoogleTest macro"),
    (re.compile(r"gtest|\btesting::|RUN_ALL_TESTS"), "refers to GoogleTest"),
    (re.compile(r"/proc/self|program_invocation|getenv\s*\("),
     "reads its own command line or environment"),
    (re.compile(r"__attribute__\s*\(\s*\(\s*constructor|\.init_array"),
     "runs code before main"),
    (re.compile(r"#\s*include\s*[<\"](?:/|[^>\"]*\.\./)"),
     "includes a file by an absolute or parent path"),
    (re.compile(r"\basm\b|__asm__|\.incbin"), "uses inline assembly"),
]


def preset_cache_variables(root: Path, preset: str) -> dict[str, str]:
    """The cache variables of a configure preset of root/CMakePresets.json, inherited ones
    included, with the grading overrides."""
    presets = {p["name"]: p for p in
               json.loads((root / "CMakePresets.json").read_text())["configurePresets"]}

    def resolve(name: str) -> dict:
        p = presets[name]
        merged: dict = {}
        inherits = p.get("inherits", [])
        for parent in [inherits] if isinstance(inherits, str) else inherits:
            merged.update(resolve(parent))
        merged.update(p.get("cacheVariables", {}))
        return merged

    values = {k: (v["value"] if isinstance(v, dict) else v) for k, v in resolve(preset).items()}
    values.update(OVERRIDES)
    return {k: str(v) for k, v in values.items()}


def warnings_in(output: str, tree: Path) -> list[str]:
    """The compiler's warnings in a build's output, as 'file:line: warning: what', with paths
    relative to the tree, each once."""
    found: list[str] = []
    for raw in ANSI.sub("", output).splitlines():
        m = WARNING.match(raw.strip())
        if not m:
            continue
        file = m.group("file")
        try:
            file = str(Path(file).resolve().relative_to(tree.resolve()))
        except ValueError:
            pass
        line = f"{file}:{m.group('line')}: warning: {m.group('what')}"
        if line not in found:
            found.append(line)
    return found


class Workspace:
    """A source tree and its grading builds (build dirs named grade-<preset>)."""

    def __init__(self, tree: Path, build_root: Path):
        self.tree, self.build_root = tree, build_root

    def build_dir(self, preset: str) -> Path:
        return self.build_root / f"grade-{preset}"

    def binary(self, preset: str, target: str) -> Path:
        return self.build_dir(preset) / target

    def configure(self, preset: str) -> None:
        require_preset(preset)
        out = self.build_dir(preset)
        b.refuse_another_checkouts_tree(out, self.tree)  # it would grade the other's code
        if (out / "build.ninja").exists():
            return
        cmd = ["cmake", "-S", str(self.tree), "-B", str(out), "-G", "Ninja"]
        cmd += [f"-D{k}={v}" for k, v in preset_cache_variables(self.tree, preset).items()]
        r = b.run(cmd, quiet=True, cwd=self.tree)
        if r.returncode != 0:
            raise b.BuildError(f"configuring the grading build ({preset}) failed:\n"
                               + ((r.stdout or "") + (r.stderr or ""))[-3000:])

    def build(self, preset: str, targets: list[str]) -> str:
        """Builds; returns the output (for its warnings). Raises BuildError with the errors."""
        self.configure(preset)
        cmd = ["cmake", "--build", str(self.build_dir(preset))]
        for t in targets:
            cmd += ["--target", t]
        r = b.run(cmd, quiet=True, cwd=self.tree)
        output = (r.stdout or "") + (r.stderr or "")
        if r.returncode != 0:
            errors = b._compiler_errors(output)
            raise b.BuildError(errors.replace(str(self.tree) + "/", ""))
        return output


@dataclass
class Placed:
    """What grading took from a submission for one lesson."""
    copied: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)   # with the reason
    review: list[str] = field(default_factory=list)    # file:line: why

    @property
    def nothing(self) -> bool:
        return not self.copied


def review_flags(name: str, text: str) -> list[str]:
    flags = []
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("//")[0]
        for pattern, why in REVIEW:
            if pattern.search(code):
                flags.append(f"{name}:{number}: {why}: {line.strip()[:120]}")
    return flags


def place_learner_files(submission: Path, lesson: Lesson, tree: Path) -> Placed:
    """Copies the lesson's learner files (and nothing else) from the submission into the
    tree's lessons/NN_topic, each with a fresh modification time so that the build sees it."""
    placed = Placed()
    src_dir = submission / "lessons" / lesson.folder
    for name in lesson.learner_files:
        src, dst = src_dir / name, tree / "lessons" / lesson.folder / name
        rel = f"lessons/{lesson.folder}/{name}"
        if src.is_symlink():
            placed.refused.append(f"{rel} is a symbolic link: not taken")
            continue
        if not src.is_file():
            placed.missing.append(rel)
            continue
        data = src.read_bytes()
        if len(data) > UNTRUSTED_MAX_BYTES:
            placed.refused.append(f"{rel} is larger than {UNTRUSTED_MAX_BYTES} bytes")
            continue
        dst.write_bytes(data)
        os.utime(dst)
        placed.copied.append(rel)
        placed.review += review_flags(rel, data.decode("utf-8", "replace"))
    return placed


def copy_trusted_tree(root: Path, dest: Path, files: list[Path]) -> None:
    """The instructors' files a grading build needs (`files`: relative paths of root)."""
    for rel in files:
        s = rel.as_posix()
        if not any(s == t or s.startswith(t + "/") for t in TRUSTED):
            continue
        if s.startswith("tests/subproject/"):
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, dest / rel)


def add_hidden_tests(hidden: Path, tree: Path, lessons: list[Lesson]) -> list[str]:
    """Copies hidden/NN_topic/*.{cpp,hpp} into tree/tests/NN_topic (every .cpp there is built
    into the lesson's test program), and hidden/NN_topic/model/* into tree/tests/NN_topic/model
    (the explorer's program, built with the model's atomics). Returns what it added; refuses
    to overwrite a public test."""
    from .lessons import UsageError
    added = []
    for lesson in lessons:
        for sub in ("", "model"):
            folder = hidden / lesson.folder / sub
            if not folder.is_dir():
                continue
            where = Path("tests") / lesson.folder / sub
            for f in sorted(folder.iterdir()):
                if f.suffix not in (".cpp", ".hpp", ".h") or not f.is_file():
                    continue
                dst = tree / where / f.name
                if dst.exists():
                    raise UsageError(f"hidden test {f} has the name of a public test file "
                                     f"({(where / f.name).as_posix()}); rename it, e.g. "
                                     f"hidden_{f.name}")
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, dst)
                added.append((where / f.name).as_posix())
    return added


def snapshot(src: Path, dst: Path) -> None:
    """A copy that keeps modification times (so the build in it stays up to date)."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=True)
