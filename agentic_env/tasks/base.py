"""What a task provides to the sim env: props, reset sampling, privileged scoring, an expert.

Tasks are plain objects composed into :class:`agentic_env.envs.sim_env.SimEnv`; they read
privileged simulator state only in :meth:`Task.reset`, :meth:`Task.evaluate` and
:meth:`Task.expert_actions` (used by the harness and the scripted expert, never by agents).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import mujoco
import numpy as np

from agentic_env.scene import SceneBuilder


@dataclass(frozen=True)
class TaskEvaluation:
    """Privileged score of the current state.

    Attributes:
        success: the goal holds.
        progress: fraction of the goal achieved, 0..1.
        terms: named components of the score (logged separately).
    """

    success: bool
    progress: float
    terms: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class SceneState:
    """Privileged access to the simulator for a task: model, data and the base pose."""

    model: mujoco.MjModel
    data: mujoco.MjData
    base_pos: np.ndarray

    def body_position(self, name: str) -> np.ndarray:
        """Position of body ``name`` in the robot base frame (3,), metres."""
        return self.data.body(name).xpos - self.base_pos

    def body_rotation(self, name: str) -> np.ndarray:
        """Rotation matrix (3, 3) of body ``name`` (the base frame is world-aligned)."""
        return self.data.body(name).xmat.reshape(3, 3).copy()

    def set_free_body_pose(self, name: str, position: np.ndarray, yaw: float) -> None:
        """Place free body ``name`` at ``position`` (base frame, m) turned by ``yaw`` (rad)."""
        joint = self.model.body(name).jntadr[0]
        adr = self.model.jnt_qposadr[joint]
        self.data.qpos[adr : adr + 3] = self.base_pos + position
        self.data.qpos[adr + 3 : adr + 7] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
        dof = self.model.jnt_dofadr[joint]
        self.data.qvel[dof : dof + 6] = 0.0


class Task(Protocol):
    """A benchmark task: see :class:`agentic_env.tasks.tabletop.TabletopTask` for an example."""

    name: str

    def build(self, builder: SceneBuilder) -> None:
        """Add the task's props to the scene (called once per env)."""
        ...

    def reset(self, scene: SceneState, rng: np.random.Generator) -> None:
        """Sample the initial layout into ``scene.data`` (before physics settles)."""
        ...

    def instruction(self) -> str:
        """The language instruction of the current episode."""
        ...

    def evaluate(self, scene: SceneState) -> TaskEvaluation:
        """Privileged score of the current state."""
        ...

    def expert_actions(self, scene: SceneState) -> Iterator[dict[str, Any]]:
        """Primitive actions of a ground-truth scripted expert, computed lazily."""
        ...
