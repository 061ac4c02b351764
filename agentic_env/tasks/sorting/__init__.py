"""``AgenticEnv/Sorting-v0``: sort everyday objects into containers by a semantic or colour rule.

:class:`~agentic_env.tasks.sorting.task.SortingTask` (its docstring gives the description,
randomizations and success conditions); :mod:`~agentic_env.tasks.sorting.rules` the rules,
container names, tunables and groups. The words are data (``scenes/tasks/sorting.toml``); the
scripted expert is :mod:`agentic_env.experts.sorting`.
"""

from agentic_env.tasks.sorting.rules import (
    BLUE_BIN,
    BOWL,
    CLASSES,
    CONTAINER_WORDS,
    GROUP_WORDS,
    RULE_COLOURS,
    RULES,
    WHITE_BIN,
    Group,
    SortingConfig,
)
from agentic_env.tasks.sorting.task import SortingTask

__all__ = [
    "BLUE_BIN",
    "BOWL",
    "CLASSES",
    "CONTAINER_WORDS",
    "GROUP_WORDS",
    "RULES",
    "RULE_COLOURS",
    "WHITE_BIN",
    "Group",
    "SortingConfig",
    "SortingTask",
]
