"""A test-only task: one free object of a chosen shape at a chosen pose, optionally a bin.

It implements the :class:`agentic_env.tasks.base.Task` protocol with no goal (``evaluate``
never reports success) and no expert, for tests that drive primitives by hand::

    env = SimEnv(task=SingleObjectTask("sphere", (0.025,), position=(0.5, 0.1)))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agentic_env.contract.trial import TrialSpec
from agentic_env.sim.props import BinSpec, ObjectSpec, Shape
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import SceneState
from agentic_env.tasks.base import TaskEvaluation
from agentic_env.tasks.instructions import Instruction

#: Body (and geom) name of the object.
OBJECT_NAME = "object"
#: Body name of the optional bin.
BIN_NAME = "bin"


class SingleObjectTask:
    """One free object resting upright on the table at a chosen (x, y, yaw).

    Args:
        shape: ``box``, ``cylinder`` or ``sphere``.
        size: half sizes as in :class:`~agentic_env.sim.props.ObjectSpec`, metres.
        position: (x, y) of the object's centre, robot base frame, metres. At reset the object
            is put 1 mm above the table and the env lets it settle.
        yaw: rotation about the vertical, radians.
        bin_position: if given, a static bin (``BinSpec("bin")``) with its floor centre at
            this (x, y), base frame, metres.
        mass: kilograms.
    """

    name = "single_object"

    def __init__(
        self,
        shape: Shape = "box",
        size: tuple[float, ...] = (0.02, 0.02, 0.02),
        position: tuple[float, float] = (0.5, 0.0),
        yaw: float = 0.0,
        bin_position: tuple[float, float] | None = None,
        mass: float = 0.05,
    ) -> None:
        self.object = ObjectSpec(OBJECT_NAME, shape, tuple(size), (0.8, 0.25, 0.1, 1.0), mass)
        self.bin_position = bin_position
        self.set_pose(position, yaw)

    def set_pose(self, position: tuple[float, float] | np.ndarray, yaw: float) -> None:
        """Where the next :meth:`reset` puts the object: (x, y) in metres, yaw in radians."""
        self.position = np.array([position[0], position[1], self.object.half_height + 1e-3])
        self.yaw = float(yaw)

    def build(self, builder: SceneBuilder) -> None:
        """Add the object and, if requested, the bin."""
        builder.add_object(self.object)
        if self.bin_position is not None:
            builder.add_bin(BinSpec(BIN_NAME), np.array([*self.bin_position, 0.0]))

    def reset(self, scene: SceneState, rng: np.random.Generator,
              instruction_category: str | None = None) -> None:
        """Put the object at the configured pose (no randomisation)."""
        scene.set_free_body_pose(OBJECT_NAME, self.position, self.yaw)

    def trial_state(self) -> dict[str, Any]:
        """Nothing beyond the object pose."""
        return {}

    def apply_trial(self, scene: SceneState, trial: TrialSpec) -> None:
        """Nothing to restore beyond the object pose."""

    def goal(self) -> dict[str, Any]:
        """No goal."""
        return {}

    def instruction(self) -> Instruction:
        """A fixed instruction."""
        return Instruction(f"Pick up the {self.object.shape}.", "canonical")

    def evaluate(self, scene: SceneState) -> TaskEvaluation:
        """No goal: never successful."""
        return TaskEvaluation(False, 0.0)
