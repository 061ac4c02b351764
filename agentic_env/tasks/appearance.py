"""What every named object of the five benchmark tasks is called, for checking that it looks so.

An :class:`Appearance` joins a PDDL name to the words the task's language uses for the thing
(its noun, its colour word, the synonyms its paraphrases use, its category and attributes)
and to the body that shows it. :func:`appearances` lists them per task from the tasks' own
data (the catalogue, the containers' words, the palettes), so a renamed or recoloured object
changes here too. ``agentic-env catalogue-sheet`` renders each one alone with these words
under it (:mod:`agentic_env.harness.catalogue_sheet`), and a test checks that each rendered
object's colour and shape match its colour word and noun.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentic_env.errors import InvalidConfigError
from agentic_env.tasks import BENCHMARK_TASKS
from agentic_env.tasks.crossword import CrosswordTask
from agentic_env.tasks.crossword.board import BOARD
from agentic_env.tasks.kitchen import CABINET, DRAWER, KitchenTask
from agentic_env.tasks.reorientation import ReorientationTask
from agentic_env.tasks.sorting import SortingTask
from agentic_env.tasks.sorting.rules import CONTAINER_WORDS
from agentic_env.tasks.stacking import StackingTask
from agentic_env.tasks.vocabulary import noun_synonyms

#: Yaw of -90 deg (w, x, y, z): turns a body's +x side (a mug's handle) to -y.
_TURNED = (float(np.cos(-np.pi / 4)), 0.0, 0.0, float(np.sin(-np.pi / 4)))
@dataclass(frozen=True)
class Appearance:
    """One named thing of a task and what its names say it looks like.

    Attributes:
        task: the task (one of :data:`~agentic_env.tasks.BENCHMARK_TASKS`).
        name: its PDDL name.
        body: the body that shows it (the cabinet for its drawer), with its child bodies.
        noun: the noun its names use, without the colour word (``bin``, ``cube``).
        colour: the colour word its names use, or ``None`` (names that give none).
        words: synonyms of the noun, then category and attribute words.
        quat: body orientation (w, x, y, z) to show a free body in (its resting pose; a
            mug's handle and a chicken leg's bone turned to the body's -y, the side the
            sheet's viewpoint sees).
    """

    task: str
    name: str
    body: str
    noun: str
    colour: str | None
    words: tuple[str, ...] = ()
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)

    @property
    def description(self) -> str:
        """The words as a person would say them: ``blue bin (container)``."""
        head = f"{self.colour} {self.noun}" if self.colour else self.noun
        return f"{head} ({', '.join(self.words)})" if self.words else head


def _named(task: str, name: str, noun: str, colour: str | None, extra: tuple[str, ...] = (),
           body: str | None = None,
           quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)) -> Appearance:
    words = tuple(dict.fromkeys((*noun_synonyms(noun), *extra)))
    return Appearance(task, name, body or name, noun, colour, words, quat)


def _sorting() -> list[Appearance]:
    task = SortingTask()
    found = []
    for entry in task.items.values():
        noun = entry.noun.removeprefix(f"{entry.colour} ")
        found.append(_named("sorting", entry.name, noun, entry.colour,
                            (entry.category, *sorted(entry.attributes)), quat=entry.rest_quat))
    for name in task.containers:
        *colour, noun = CONTAINER_WORDS[name]["plain"].split()
        found.append(_named("sorting", name, noun, " ".join(colour) or None, ("container",)))
    return found


def _stacking() -> list[Appearance]:
    task = StackingTask()
    cubes = [_named("stacking", cube.name, "cube", colour)
             for colour, cube in task.cubes.items()]
    plates = [_named("stacking", f"{colour}-plate-1", "plate", colour)
              for colour in task.plates]
    return cubes + plates


def _crossword() -> list[Appearance]:
    task = CrosswordTask()
    # the blocks differ only in letter and tint, the slots in number: one of each
    return [_named("crossword", task.blocks[0], "letter block", None),
            _named("crossword", task.slots[0], "slot", None),
            _named("crossword", BOARD, "crossword board", None)]


def _reorientation() -> list[Appearance]:
    task = ReorientationTask()
    return [_named("reorientation", item.name, item.family, item.colour,
                   quat=_TURNED if item.family == "mug" else (1.0, 0.0, 0.0, 0.0))
            for item in task.items.values()]


def _kitchen() -> list[Appearance]:
    task = KitchenTask()
    found = []
    for item in task.items.values():
        attributes = item.spec.attributes
        found.append(_named("kitchen", item.name, attributes["kind"], attributes.get("colour"),
                            quat=_TURNED))
    found += [_named("kitchen", name, name.rsplit("-", 1)[0], None)
              for name in task.containers]
    found.append(_named("kitchen", DRAWER, "top drawer", None, ("cabinet",), body=CABINET))
    return found


_BY_TASK = {"sorting": _sorting, "stacking": _stacking, "crossword": _crossword,
            "reorientation": _reorientation, "kitchen": _kitchen}


def appearances(task: str | None = None) -> list[Appearance]:
    """Every named object of ``task`` (default: of all five benchmark tasks, in their order).

    Raises:
        InvalidConfigError: for a task that is not a benchmark task.
    """
    if task is not None and task not in _BY_TASK:
        raise InvalidConfigError(f"no appearances for task {task!r}; valid: "
                                 f"{', '.join(BENCHMARK_TASKS)}")
    return [a for name in ((task,) if task else BENCHMARK_TASKS) for a in _BY_TASK[name]()]
