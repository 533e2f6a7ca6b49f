"""Finding lessons and their exercises: lessons/NN_topic with its lesson.toml."""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class UsageError(Exception):
    """A mistake in what the user asked for; the message says what to do instead."""


@dataclass
class Exercise:
    number: int
    title: str


@dataclass
class Lesson:
    number: int
    folder: str  # e.g. "01_shared_queue"
    title: str
    summary: str
    exercises: list[Exercise] = field(default_factory=list)
    # The files the learner writes (lesson.toml's learner_files): the only files that grading
    # from a trusted copy takes from a student's checkout.
    learner_files: list[str] = field(default_factory=list)

    @property
    def nn(self) -> str:
        return f"{self.number:02d}"

    @property
    def label(self) -> str:
        return f"lesson{self.nn}"

    def exercise(self, number: int) -> Exercise:
        for ex in self.exercises:
            if ex.number == number:
                return ex
        known = ", ".join(str(e.number) for e in self.exercises)
        raise UsageError(
            f"lesson {self.nn} has no exercise {number}; its exercises are {known}")


def all_lessons(root: Path = ROOT) -> list[Lesson]:
    lessons = []
    for folder in sorted((root / "lessons").glob("[0-9][0-9]_*")):
        meta_path = folder / "lesson.toml"
        meta = tomllib.loads(meta_path.read_text()) if meta_path.exists() else {}
        exercises = [Exercise(int(e["number"]), e["title"]) for e in meta.get("exercise", [])]
        lessons.append(Lesson(int(folder.name[:2]), folder.name, meta.get("title", folder.name[3:]),
                              meta.get("summary", ""), exercises,
                              [str(f) for f in meta.get("learner_files", [])]))
    return lessons


# A lesson's test programs (cmake/WsLesson.cmake): ws_lessonNN[_solution]_<program>. The
# explorer's scenarios, tests/NN_topic/model/*.cpp, are a program of their own, built with the
# model's ws::atomic; their tests are named like the others (LessonNNExK.Explorer...).
TESTS, MODEL_TESTS = "tests", "model_tests"


def test_programs(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """The lesson's test programs: its tests, and its explorer tests when it has some."""
    model = any((root / "tests" / lesson.folder / "model").glob("*.cpp"))
    return [TESTS, MODEL_TESTS] if model else [TESTS]


def test_target(lesson: Lesson, solution: bool, program: str = TESTS) -> str:
    """The CMake target of one of the lesson's test programs, against the starter or the
    reference solution."""
    return f"ws_lesson{lesson.nn}{'_solution' if solution else ''}_{program}"


def test_targets(lesson: Lesson, solution: bool, root: Path = ROOT) -> list[str]:
    """The CMake targets of all of the lesson's test programs: what testing it builds."""
    return [test_target(lesson, solution, p) for p in test_programs(lesson, root)]


def lesson_list_text(lessons: list[Lesson]) -> str:
    """The lessons on one line (an error message is one line)."""
    return "; ".join(f"{l.number} ({l.title})" for l in lessons) or "none"


def find_lesson(spec: str, root: Path = ROOT) -> Lesson:
    """Accepts 1, 01 or 01_shared_queue."""
    lessons = all_lessons(root)
    m = re.fullmatch(r"0*(\d+)(_\w+)?", spec.strip())
    if m:
        for lesson in lessons:
            if lesson.number == int(m.group(1)):
                return lesson
    raise UsageError(f"there is no lesson '{spec}'. The lessons are: {lesson_list_text(lessons)}")
