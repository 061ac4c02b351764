"""``AgenticEnv/Reorientation-v0``: turn one object into a language-specified pose.

:class:`~agentic_env.tasks.reorientation.task.ReorientationTask` (its docstring gives the
description, randomizations and success conditions) and the catalogue;
:mod:`~agentic_env.tasks.reorientation.poses` the pose names and predicates. Colours, riddles
and instruction templates are data (``scenes/tasks/reorientation.toml``); the scripted expert
is :mod:`agentic_env.experts.reorientation`.
"""

from agentic_env.tasks.reorientation.poses import (
    HANDLE_DIRECTIONS,
    POSES,
    PoseTolerances,
    axis_tilt,
    handle_error,
    in_pose,
    resting_pose,
)
from agentic_env.tasks.reorientation.task import (
    FAMILIES,
    Item,
    ReorientationConfig,
    ReorientationTask,
    make_item,
)

__all__ = [
    "FAMILIES",
    "HANDLE_DIRECTIONS",
    "POSES",
    "Item",
    "PoseTolerances",
    "ReorientationConfig",
    "ReorientationTask",
    "axis_tilt",
    "handle_error",
    "in_pose",
    "make_item",
    "resting_pose",
]
