"""Scripted expert of ``AgenticEnv/Stacking-v0`` (privileged: reads the true sim state).

The closed-loop expert of :func:`agentic_env.experts.closed_loop.closed_loop_actions` executes
the Fast Downward reference plan, grounding each step here (:meth:`StackingExpert.primitive_for`);
:data:`agentic_env.experts.EXPERTS` names it the ``stacking`` task's expert. Positions are in
the robot base frame, metres; yaws about its vertical, radians.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.contract.actions import box_top_grasp_yaw, pick, place, top_down_pose
from agentic_env.errors import InvalidConfigError
from agentic_env.experts.closed_loop import closed_loop_actions
from agentic_env.pddl.planning import PlanStep
from agentic_env.robot.constants import TCP_TO_FINGERTIP
from agentic_env.sim.state import Box, SceneState, body_box

if TYPE_CHECKING:
    from agentic_env.tasks.stacking import StackingTask


class StackingExpert:
    """Grounds stacking plan steps with ground-truth poses for one task instance."""

    def __init__(self, task: StackingTask) -> None:
        self.task = task

    def actions(self, scene: SceneState) -> Iterator[dict[str, Any]]:
        """Execute the Fast Downward reference plan with ground-truth poses, replanning when
        a step fails (:func:`~agentic_env.experts.closed_loop.closed_loop_actions`)."""
        return closed_loop_actions(self.task, scene, self.primitive_for)

    def primitive_for(self, step: PlanStep, scene: SceneState) -> dict[str, Any]:
        """``pick`` at the cube's pose; ``place-on-object`` centred on the target's top."""
        cfg = self.task.config
        if step.name == "pick":
            cube = step.args[0]
            position = scene.body_position(cube)
            position[2] = max(position[2], body_box(scene, cube).low[2] + TCP_TO_FINGERTIP
                              + 0.008)
            return pick(top_down_pose(position, self._roomiest_yaw(scene, cube)),
                        width=2 * cfg.cube_half_size)
        if step.name == "place-on-object" and step.args[1] == self.task.table:
            return place(top_down_pose(self._free_table_spot(scene), 0.0))
        if step.name == "place-on-object":
            target = step.args[1]
            top = body_box(scene, target).high[2]
            centre = scene.body_position(target)
            position = np.array([centre[0], centre[1], top + cfg.cube_half_size + 0.008])
            on_cube = target in {cube.name for cube in self.task.cubes.values()}
            yaw = box_top_grasp_yaw(scene.body_rotation(target)) if on_cube else 0.0
            return place(top_down_pose(position, yaw))
        raise InvalidConfigError(f"stacking has no primitive for {step}; valid: pick, "
                                 "place-on-object")

    def _roomiest_yaw(self, scene: SceneState, cube: str) -> float:
        """Of the two grasp yaws across the cube's faces, the one whose fingers land
        farthest from other objects and plates (fingers sit beside the cube, ~3 cm out)."""
        base_yaw = box_top_grasp_yaw(scene.body_rotation(cube))
        centre = scene.body_position(cube)[:2]
        others = [body_box(scene, c) for c in self.task.active_cubes() if c != cube]
        others += [body_box(scene, p) for p in self.task.plate_bodies()]
        others = [box for box in others if not box.contains_xy(centre)]  # not what it sits on

        def room(yaw: float) -> float:
            closing = np.array([-np.sin(yaw), np.cos(yaw)])
            fingers = [centre + sign * 0.035 * closing for sign in (-1.0, 1.0)]
            return min((_distance_xy(box, finger) for box in others for finger in fingers),
                       default=np.inf)

        candidates = (base_yaw, base_yaw + np.pi / 2 if base_yaw < 0 else base_yaw - np.pi / 2)
        return max(candidates, key=room)

    def _free_table_spot(self, scene: SceneState) -> np.ndarray:
        """TCP position for setting a cube down on the table away from plates and cubes."""
        cfg = self.task.config
        xs, ys = np.meshgrid(np.linspace(0.35, 0.65, 7), np.linspace(-0.35, 0.35, 15))
        candidates = np.stack([xs.ravel(), ys.ravel()], axis=1)
        occupied = [scene.body_position(c)[:2] for c in self.task.active_cubes()]
        occupied += [np.asarray(xy) for xy in self.task.plate_xy.values()]
        clearance = np.min(np.linalg.norm(candidates[:, None] - np.array(occupied)[None],
                                          axis=2), axis=1)
        best = candidates[int(np.argmax(clearance))]
        return np.array([*best, cfg.cube_half_size + TCP_TO_FINGERTIP + 0.01])


def _distance_xy(box: Box, point: np.ndarray) -> float:
    """Horizontal distance from ``point`` (x, y) to ``box``'s footprint (0 inside)."""
    gap = np.maximum(np.maximum(box.low[:2] - point, point - box.high[:2]), 0.0)
    return float(np.linalg.norm(gap))
