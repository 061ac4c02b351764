"""A test-only task: a kitchen cabinet with one drawer on the table, and a small box.

It implements the :class:`agentic_env.tasks.base.Task` protocol with no goal (``evaluate``
never reports success) and no expert, for tests that drive the drawer primitives by hand::

    env = SimEnv(task=CabinetTask())

The cabinet (``CabinetSpec("cabinet")``) stands on the table to the robot's left, its front
facing the robot; the box rests on the table to the right. :meth:`CabinetTask.set_layout`
chooses where the next reset puts them; every reset closes the drawer (or opens it to
``opening``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agentic_env.contract.trial import TrialSpec
from agentic_env.sim.cabinet import CabinetSpec, add_cabinet, set_cabinet_pose, set_drawer_opening
from agentic_env.sim.props import ObjectSpec
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import SceneState
from agentic_env.tasks.base import TaskEvaluation
from agentic_env.tasks.instructions import Instruction

#: Name of the cabinet (prefix of its bodies, joint, geoms and sites).
CABINET_NAME = "cabinet"
#: Body (and geom) name of the box.
BOX_NAME = "box"


class CabinetTask:
    """A cabinet whose front faces the robot, and a small box on the table.

    Args:
        front: (x, y) of the centre of the cabinet's front (bottom edge), robot base frame, m.
        yaw: turn of the cabinet about the vertical, radians (0 = front facing -x, the robot).
        box_position: (x, y) of the box's centre on the table, base frame, metres.
        box_half_size: half edge of the (cubic) box, metres.
        cabinet: the cabinet's geometry.
    """

    name = "cabinet"

    def __init__(
        self,
        front: tuple[float, float] = (0.64, 0.25),
        yaw: float = 0.0,
        box_position: tuple[float, float] = (0.45, -0.2),
        box_half_size: float = 0.02,
        cabinet: CabinetSpec | None = None,
    ) -> None:
        self.cabinet = cabinet or CabinetSpec(CABINET_NAME)
        self.box = ObjectSpec(BOX_NAME, "box", (box_half_size,) * 3, (0.85, 0.2, 0.15, 1.0),
                              mass=0.05)
        self.opening = 0.0
        self.set_layout(front, yaw, box_position)

    def set_layout(
        self,
        front: tuple[float, float] | np.ndarray,
        yaw: float,
        box_position: tuple[float, float] | np.ndarray | None = None,
        opening: float = 0.0,
    ) -> None:
        """Where the next :meth:`reset` puts the cabinet, the box, and how open the drawer is."""
        self.front = np.array(front, dtype=float)
        self.yaw = float(yaw)
        if box_position is not None:
            self.box_position = np.array([*box_position, self.box.half_height + 1e-3])
        self.opening = float(opening)

    def cabinet_origin(self) -> np.ndarray:
        """Bottom centre of the cabinet in the base frame for the current layout, metres."""
        inward = np.array([np.cos(self.yaw), np.sin(self.yaw), 0.0])
        return np.array([*self.front, 0.0]) + inward * self.cabinet.size[0] / 2

    def build(self, builder: SceneBuilder) -> None:
        """Add the cabinet and the box."""
        add_cabinet(builder.spec, self.cabinet, builder.base_pos + self.cabinet_origin(),
                    self.yaw)
        builder.add_object(self.box)

    def reset(
        self, scene: SceneState, rng: np.random.Generator, instruction_category: str | None = None
    ) -> None:
        """Move the cabinet to the layout, set the drawer's opening, put the box down (no
        randomisation: tests choose the layout with :meth:`set_layout`)."""
        self._apply_fixtures(scene)
        scene.set_free_body_pose(BOX_NAME, self.box_position, 0.0)

    def _apply_fixtures(self, scene: SceneState) -> None:
        set_cabinet_pose(scene.model, CABINET_NAME, scene.base_pos + self.cabinet_origin(),
                         self.yaw)
        set_drawer_opening(scene.model, scene.data, CABINET_NAME, self.opening)

    def trial_state(self) -> dict[str, Any]:
        """The cabinet's front and yaw and the drawer's initial opening."""
        return {"front": self.front.tolist(), "yaw": self.yaw, "opening": self.opening}

    def apply_trial(self, scene: SceneState, trial: TrialSpec) -> None:
        """Restore the cabinet and the drawer of a recorded trial."""
        state = trial.task_state
        self.set_layout(state["front"], state["yaw"], opening=state["opening"])
        self._apply_fixtures(scene)

    def goal(self) -> dict[str, Any]:
        """No structured goal."""
        return {}

    def instruction(self) -> Instruction:
        """A fixed instruction."""
        return Instruction("Put the box into the top drawer and close it.", "canonical")

    def evaluate(self, scene: SceneState) -> TaskEvaluation:
        """No goal: never successful."""
        return TaskEvaluation(False, 0.0)
