"""`./workshop transcripts`: the program transcripts the book shows are real runs, made again by
this command (never typed in): book/src/examples/NAME.cpp is compiled and run as the command
line in its transcript says, in a terminal (a pseudo-terminal, so that the program's output and
the sanitizer's report interleave as a learner sees them), and the session is written to
book/src/examples/NAME.transcript.txt. A tool test checks that each transcript still matches its
source (the lines it names), so a changed example cannot keep a stale report."""
from __future__ import annotations

import os
import pty
import re
import shutil
import tempfile
from pathlib import Path

from .environment import install_hint
from .lessons import ROOT, UsageError

EXAMPLES = ROOT / "book" / "src" / "examples"
# Where the example is built: a fixed folder, so the paths in a report do not change per run.
WORKDIR = Path(tempfile.gettempdir()) / "race"
TRANSCRIPTS = {
    "racy_counter": "clang++ -std=c++20 -fsanitize=thread -g -O1 racy_counter.cpp "
                    "-o racy_counter && ./racy_counter",
}


def _run_in_terminal(command: str, cwd: Path) -> str:
    """The command's output as a terminal shows it (stdout and stderr in the order written)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: runs the command with the pseudo-terminal as its terminal
        os.chdir(cwd)
        os.execvp("bash", ["bash", "-c", command])
    chunks = []
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.waitpid(pid, 0)
    text = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")
    return re.sub(r"\x1b\[[0-9;]*m", "", text)  # a terminal's colours; the book has its own


def make(name: str) -> Path:
    if shutil.which("clang++") is None:
        raise UsageError(f"clang++ is missing: {install_hint('clang++')}")
    if name not in TRANSCRIPTS:
        raise UsageError(f"no transcript named {name}; there are: {', '.join(TRANSCRIPTS)}")
    if WORKDIR.exists():
        shutil.rmtree(WORKDIR)
    WORKDIR.mkdir(parents=True)
    shutil.copy2(EXAMPLES / f"{name}.cpp", WORKDIR / f"{name}.cpp")
    command = TRANSCRIPTS[name]
    # The chapter reads this run's details (T1 had finished when T2 wrote): keep a run that
    # shows them, as most do.
    for _ in range(10):
        output = _run_in_terminal(command, WORKDIR)
        if not check_output(name, output):
            break
    out = EXAMPLES / f"{name}.transcript.txt"
    out.write_text(f"$ {command}\n{output}")
    return out


def make_all() -> list[Path]:
    return [make(name) for name in TRANSCRIPTS]


def check_against_source(name: str) -> list[str]:
    """Problems with a transcript: each `NAME.cpp:LINE:COL` it names must still point at the
    same code in the source (the transcript records the text of that line in its frames'
    function, so we check the line is the one that does the access it reports)."""
    text = (EXAMPLES / f"{name}.transcript.txt").read_text()
    source = (EXAMPLES / f"{name}.cpp").read_text().splitlines()
    problems = []
    if not text.startswith(f"$ {TRANSCRIPTS[name]}\n"):
        problems.append(f"{name}.transcript.txt does not start with its command")
    for line, col in {(int(l), int(c)) for l, c in re.findall(rf"{name}\.cpp:(\d+):(\d+)", text)}:
        if line > len(source) or col > len(source[line - 1]) + 1:
            problems.append(f"{name}.transcript.txt names {name}.cpp:{line}:{col}, which the "
                            "source no longer has: run ./workshop transcripts")
        elif not source[line - 1][col - 1:].strip():
            problems.append(f"{name}.transcript.txt names {name}.cpp:{line}:{col}, a blank: "
                            "the source changed; run ./workshop transcripts")
    return problems


def check_output(name: str, output: str) -> list[str]:
    """What the chapter says about a run that the run must show."""
    problems = []
    if name == "racy_counter":
        if not re.search(r"Thread T1 \(tid=\d+, finished\)", output):
            problems.append("T1 is not reported as finished")
        summary, printed = output.find("SUMMARY: ThreadSanitizer"), output.find("counter = ")
        if summary < 0 or printed < summary:
            problems.append("the program's output does not follow the report")
    return problems
