"""Which lessons `./workshop bench N` is built from, and what to tell a learner whose code made it
fail: the lessons that are really unfinished, not only lesson N.

bench_lessonNN links every lesson its `ws_add_benchmark` line in bench/CMakeLists.txt names
(bench 7: lessons 05, 06 and 07). That line is the one list: linked_lessons() reads it. In the
student edition every one of them is the learner's code; in the instructors' copy
bench_lessonNN_mine takes only lesson NN from lessons/ and the others from solutions/."""
from __future__ import annotations

import re
from pathlib import Path

from . import build as b
from .benchmarks import BenchmarkFailed
from .lessons import ROOT, UsageError

BENCH_CMAKE = ROOT / "bench" / "CMakeLists.txt"

# ws_add_benchmark(bench_lesson07 bench_lesson07.cpp 05 06 07), at the start of a line (not in a
# comment); the lesson numbers may run on over several lines.
_ADD_BENCHMARK = re.compile(
    r"^[ \t]*ws_add_benchmark\(\s*bench_lesson(\d+)\s+\S+((?:\s+\d+)+)\s*\)", re.M)

# What a starter's stub throws (ws::NotImplemented): "not implemented yet: lesson 05, exercise 2:
# the worker loop".
_NOT_IMPLEMENTED = re.compile(r"not implemented yet: lesson (\d+), exercise (\d+)")
# How a compiler's or linker's complaint names a lesson: a path (lessons/05_parking/...), a target
# (ws_lesson05) or a symbol (ws::lesson05::ThreadPool).
_LESSON_IN_COMPLAINT = re.compile(r"(?:\blessons/|\bws_lesson|\bws::lesson)(\d\d)")
# The lines that complain (not a command line, whose -I paths and -Werror name every lesson).
_COMPLAINT = re.compile(r"\berror:|^FAILED:|undefined reference|multiple definition")


def linked_lessons(number: int, cmake: Path = BENCH_CMAKE) -> list[int]:
    """The lessons bench_lessonNN links, in the order its ws_add_benchmark line names them;
    [number] where there is no such line (a one-lesson edition's bench/ is a stub)."""
    try:
        text = cmake.read_text()
    except OSError:
        return [number]
    for m in _ADD_BENCHMARK.finditer(text):
        if int(m.group(1)) == number:
            return [int(n) for n in m.group(2).split()]
    return [number]


def _listed(words: list[str]) -> str:
    """["a", "b", "c"] -> "a, b and c"."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def spoken(numbers: list[int]) -> str:
    """[5, 6, 7] -> "05, 06 and 07"."""
    return _listed([f"{n:02d}" for n in numbers])


def lessons_phrase(numbers: list[int]) -> str:
    """[5] -> "lesson 05"; [5, 6] -> "lessons 05 and 06"."""
    return f"lesson{'s' if len(numbers) > 1 else ''} {spoken(numbers)}"


def named_lessons(output: str, among: list[int]) -> list[int]:
    """The lessons of `among` that a failure's output blames: the stubs that threw, else those a
    compiler's or linker's error line names; empty if it names none of them."""
    blamed = {int(m.group(1)) for m in _NOT_IMPLEMENTED.finditer(output)}
    if not blamed:
        blamed = {int(m.group(1)) for line in output.splitlines() if _COMPLAINT.search(line)
                  for m in _LESSON_IN_COMPLAINT.finditer(line)}
    return [n for n in among if n in blamed]


def _your_code(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"your lesson {numbers[0]:02d} code"
    return f"your code of lessons {spoken(numbers)}"


def _tests(numbers: list[int], verb: str) -> str:
    """"./workshop test 5 says", "./workshop test 5 and ./workshop test 6 say" (verb: says)."""
    return (_listed([f"./workshop test {n}" for n in numbers]) + " "
            + (verb if len(numbers) == 1 else verb.removesuffix("s")))


def explain(error: b.BuildError, number: int, *, student: bool,
            cmake: Path = BENCH_CMAKE) -> Exception:
    """What to raise instead of `error`, a failed build or run of `./workshop bench N` of the
    learner's code: the lessons at fault by name where the output names them, else every lesson
    of the learner's that the benchmark is built from. A build failure keeps the compiler's
    words under the new first line; one that names none of the learner's lessons is not theirs
    and stays as it is."""
    linked = linked_lessons(number, cmake)
    mine = linked if student else linked[-1:]
    output = str(error)
    blamed = named_lessons(output, mine)
    ran = isinstance(error, BenchmarkFailed)
    # The context, where the benchmark holds more of the learner's code than lesson N's.
    context = (f"bench {number} {'runs' if ran else 'builds'} your lessons {spoken(mine)}: "
               if len(mine) > 1 else "")
    if not ran:
        if not blamed:
            return error
        return b.BuildError(f"{context}{_your_code(blamed)} does not build (what the build said "
                            f"is below; {_tests(blamed, 'shows')} it too):\n{output}")
    stub = _NOT_IMPLEMENTED.search(output)
    if stub:
        exercise = f"exercise {int(stub.group(2))}"
        if len(blamed) > 1:
            exercise = f"lesson {int(stub.group(1)):02d}, {exercise}"
        what = f"is not finished yet ({exercise} threw \"not implemented yet\" in the benchmark)"
    elif "not implemented yet" in output or "terminate called" in output:
        what = "is not finished yet (it threw in the benchmark)"
    else:
        what = "crashed in the benchmark"
    if blamed:
        headline = f"{context}{_your_code(blamed)} {what}"
    else:
        blamed = mine
        headline = f"{context}one of them {what}" if context else f"{_your_code(mine)} {what}"
    advice = _tests(blamed, "says") + " what is left"
    if not student:
        advice += f"; ./workshop bench {number} --solution measures the reference"
    return UsageError(f"{headline}: {advice}")
