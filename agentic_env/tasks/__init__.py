"""Benchmark tasks and their registry of names."""

from __future__ import annotations

from agentic_env.errors import InvalidConfigError
from agentic_env.tasks.base import Task

#: Task names accepted by :func:`make_task`, mapped to ``module:factory`` (a task class or a
#: function returning a configured task).
TASKS: dict[str, str] = {
    "tabletop": "agentic_env.tasks.tabletop:TabletopTask",
    "stacking": "agentic_env.tasks.stacking:StackingTask",
    "crossword": "agentic_env.tasks.crossword:CrosswordTask",
    "reorientation": "agentic_env.tasks.reorientation:ReorientationTask",
    "sorting": "agentic_env.tasks.sorting:SortingTask",
    "kitchen": "agentic_env.tasks.kitchen:KitchenTask",
    "sorting-cluttered": "agentic_env.tasks.sorting.task:cluttered_sorting_task",
}
#: The five AgenticLab benchmark tasks, in the paper's order: what agents are run and
#: benchmarked on (every name is one of :data:`TASKS`).
BENCHMARK_TASKS: tuple[str, ...] = ("sorting", "stacking", "crossword", "reorientation",
                                    "kitchen")


def make_task(name: str) -> Task:
    """Instantiate the task called ``name`` with its default configuration."""
    if name not in TASKS:
        raise InvalidConfigError(f"unknown task {name!r}; valid: {', '.join(sorted(TASKS))}")
    module_name, class_name = TASKS[name].split(":")
    module = __import__(module_name, fromlist=[class_name])
    return getattr(module, class_name)()
