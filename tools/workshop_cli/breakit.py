"""`./workshop break-it N [PATCH]`: see a classic bug caught. Each patch of a lesson's
break-it/manifest.toml is a plausible mistake; this applies one to a scratch copy of the
reference solution (never to your files), builds it, runs the test that should catch it, and
says what happened."""
from __future__ import annotations

import dataclasses
import subprocess
import sys

from .ctest import failure_reason
from .export import is_student_edition
from .lessons import ROOT, Lesson, UsageError


def _break_it_module():
    if is_student_edition() or not (ROOT / "tools" / "break_it.py").exists():
        raise UsageError("break-it applies patches to the reference solutions, which this "
                         "edition does not have: ask your instructor, or use the full "
                         "repository")
    sys.path.insert(0, str(ROOT / "tools"))
    import break_it  # noqa: E402  (tools/break_it.py: the CI gate, shared)
    return break_it


def patches_of(lesson: Lesson) -> list:
    bi = _break_it_module()
    return [p for p in bi.load_patches() if p.lesson == lesson.nn]


def list_patches(lesson: Lesson) -> int:
    patches = patches_of(lesson)
    if not patches:
        print(f"lesson {lesson.nn} has no break-it patches yet")
        return 0
    import tomllib
    print(f"lesson {lesson.nn}: plausible mistakes, each caught by a test "
          f"(./workshop break-it {lesson.number} NAME runs one)")
    for p in patches:
        meta = next(e for e in tomllib.loads((p.file.parent / "manifest.toml").read_text())
                    ["patch"] if e["file"] == p.file.name)
        rate = f"{meta.get('caught', '?')} of {meta.get('runs', '?')} runs"
        gated = "" if p.reliable else "  (not reliable on every machine: not gated)"
        if p.explorer:
            gated = f"\n    and by:    {p.explorer} (the interleaving explorer: every run)"
        print(f"\n  {p.name}\n    the bug:   {meta.get('bug', '')}\n    caught by: {p.test} "
              f"({p.preset} build; {rate}){gated}")
    return 0


def run_patch(lesson: Lesson, name: str) -> int:
    bi = _break_it_module()
    matches = [p for p in patches_of(lesson) if p.name.startswith(name)]
    if len(matches) != 1:
        known = ", ".join(p.name for p in patches_of(lesson)) or "none"
        raise UsageError(f"lesson {lesson.nn} has {'no' if not matches else 'more than one'} "
                         f"break-it patch named '{name}'; its patches: {known}")
    patch = matches[0]
    print(f"break-it {patch.name}: applying it to a scratch copy of solutions/{lesson.folder} "
          f"(your files are not touched), then building ({patch.preset}) ...", flush=True)
    print(patch.file.read_text())
    box = bi.Sandbox(keep=False)
    try:
        box.apply(patch)
        exe = box.build(patch)
        print(f"running {patch.test} ...", flush=True)
        env = bi.SANITIZER_ENV.get(patch.preset)
        try:
            r = bi.run([str(exe), f"--gtest_filter={patch.test}"], box.dir, env=env, timeout=600)
            failed, output = r.returncode != 0, r.stdout + r.stderr
        except subprocess.TimeoutExpired:
            failed, output = True, "(timed out)"
        if not failed and patch.explorer:
            # A stress test finds the bug by luck; the explorer tries every schedule.
            print(f"{patch.test} passed this time; running the explorer test {patch.explorer} "
                  "...", flush=True)
            exe = box.build(patch, patch.explorer_target, "default")
            r = bi.run([str(exe), f"--gtest_filter={patch.explorer}"], box.dir, timeout=600)
            if r.returncode != 0:
                patch = dataclasses.replace(patch, test=patch.explorer)
                failed, output = True, r.stdout + r.stderr
    except bi.Failure as e:
        raise UsageError(str(e)) from None
    finally:
        box.close()
    if failed:
        print(f"\ncaught: {patch.test} fails with the bug in. What it said:\n")
        print("  " + failure_reason(output).replace("\n", "\n  "))
        return 0
    print(f"\nescaped this time: {patch.test} passed with the bug in. "
          + ("This patch is not caught on every run (see the manifest's rate): try again."
             if not patch.reliable else
             "The manifest says it is caught reliably: please report this."))
    return 1
