"""Scripted expert of ``AgenticEnv/Tabletop-v0`` (privileged: reads the true sim state).

:data:`agentic_env.experts.EXPERTS` names it the ``tabletop`` task's expert. Positions are in
the robot base frame, metres.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.contract.actions import box_top_grasp_yaw, pick, place, top_down_pose
from agentic_env.robot.constants import TCP_TO_FINGERTIP
from agentic_env.sim.state import SceneState

if TYPE_CHECKING:
    from agentic_env.tasks.tabletop import TabletopTask


class TabletopExpert:
    """Puts the cubes of one tabletop task instance into its bin, one by one."""

    def __init__(self, task: TabletopTask) -> None:
        self.task = task

    def actions(self, scene: SceneState) -> Iterator[dict[str, Any]]:
        """Pick each cube not yet in the bin at its centre and drop it into a bin slot."""
        task = self.task
        cfg = task.config
        slots = np.linspace(-0.06, 0.06, max(len(task.cubes), 2))
        for slot, cube in zip(slots, task.cubes, strict=False):
            if task.cube_in_bin(scene, cube):
                continue
            position = scene.body_position(cube.name)
            # grasp at the centre, but keep the fingertips 8 mm above the table
            position[2] = max(position[2], TCP_TO_FINGERTIP + 0.008)
            yield pick(top_down_pose(position, box_top_grasp_yaw(scene.body_rotation(cube.name))),
                       width=cube.grasp_width)
            target = task.bin_floor(scene) + [0.0, slot, cfg.bin.wall_thickness
                                              + cube.half_height + 0.015]
            yield place(top_down_pose(target, 0.0))
