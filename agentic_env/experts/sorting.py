"""Scripted expert of ``AgenticEnv/Sorting-v0`` (privileged: reads the true sim state).

The closed-loop expert of :func:`agentic_env.experts.closed_loop.closed_loop_actions` executes
the Fast Downward reference plan, grounding each step here (:meth:`SortingExpert.primitive_for`);
:data:`agentic_env.experts.EXPERTS` names it the ``sorting`` task's expert. Positions are in
the robot base frame, metres; yaws about its vertical, radians.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.contract.actions import pick, place, top_down_pose
from agentic_env.contract.workcell import ROBOT_PREFIX
from agentic_env.errors import InvalidConfigError
from agentic_env.experts.closed_loop import closed_loop_actions
from agentic_env.geometry.rotations import rotation_z, wrap_angle, yaw_of
from agentic_env.pddl.planning import PlanStep
from agentic_env.robot.constants import TCP_SITE, TCP_TO_FINGERTIP
from agentic_env.sim.state import SceneState
from agentic_env.tasks.predicates import lowest_point

if TYPE_CHECKING:
    from agentic_env.tasks.sorting.task import SortingTask


class SortingExpert:
    """Grounds sorting plan steps with ground-truth poses for one task instance."""

    def __init__(self, task: SortingTask) -> None:
        self.task = task

    def actions(self, scene: SceneState) -> Iterator[dict[str, Any]]:
        """Execute the Fast Downward reference plan with ground-truth poses, replanning when
        a step fails (:func:`~agentic_env.experts.closed_loop.closed_loop_actions`)."""
        return closed_loop_actions(self.task, scene, self.primitive_for)

    def _reference_xy(self, scene: SceneState, name: str) -> np.ndarray:
        """Centre of the object's footprint (base frame x, y)."""
        entry = self.task.items[name]
        centre = np.array([*entry.footprint[0], 0.0])
        local = entry.rest_rotation.T @ centre
        return (scene.body_position(name) + scene.body_rotation(name) @ local)[:2]

    def grasp_action(self, scene: SceneState, name: str) -> dict[str, Any]:
        """Top grasp across the object's rest-frame y at its grasp point."""
        entry = self.task.items[name]
        yaw = self.task.rest_yaw(scene, name)
        rotation = scene.body_rotation(name)
        offset = entry.rest_rotation.T @ np.array([*entry.grasp_offset, 0.0])
        position = scene.body_position(name) + rotation @ offset
        position[2] = lowest_point(scene, name) + entry.tcp_height
        grasp_yaw = (yaw + np.pi / 2) % np.pi - np.pi / 2
        return pick(top_down_pose(position, grasp_yaw), width=entry.grasp_width)

    def _tcp(self, scene: SceneState) -> tuple[np.ndarray, float]:
        site = scene.data.site(ROBOT_PREFIX + TCP_SITE)
        return site.xpos - scene.base_pos, yaw_of(site.xmat.reshape(3, 3))

    def drop_action(self, scene: SceneState, name: str, target_xy: np.ndarray,
                    bottom_z: float, object_yaw: float | None = None) -> dict[str, Any]:
        """Place the held ``name`` so its footprint centre is over ``target_xy``, its bottom
        and the fingertips at least at ``bottom_z``, its long axis along ``object_yaw`` (mod
        pi; ``None`` keeps the current yaw)."""
        tcp, tcp_yaw = self._tcp(scene)
        turn = 0.0
        if object_yaw is not None:
            turn = (object_yaw - self.task.rest_yaw(scene, name) + np.pi / 2) % np.pi - np.pi / 2
        offset = rotation_z(turn)[:2, :2] @ (self._reference_xy(scene, name) - tcp[:2])
        above_bottom = max(tcp[2] - lowest_point(scene, name), TCP_TO_FINGERTIP)
        position = np.array([*(np.asarray(target_xy) - offset), bottom_z + above_bottom])
        return place(top_down_pose(position, wrap_angle(tcp_yaw + turn)))

    def primitive_for(self, step: PlanStep, scene: SceneState) -> dict[str, Any]:
        """``pick`` / ``pick-from``: a top grasp; ``place-in``: release above the object's
        lane slot, just above the rim; ``place-on-table``: set down at a free spot."""
        if step.name in ("pick", "pick-from"):
            return self.grasp_action(scene, step.args[0])
        if step.name == "place-in":
            item, container = step.args
            target = scene.body_position(container)[:2] + self.task.drop_offset(item, container)
            rim = scene.body_position(container)[2] + self.task.containers[container].wall_height
            return self.drop_action(scene, item, target, rim + self.task.config.drop_clearance,
                                    np.pi / 2)
        if step.name == "place-on-table":
            item = step.args[0]
            spot = self.task.free_spot(scene, item, self._tcp(scene)[0][:2])
            return self.drop_action(scene, item, spot, 0.01)
        raise InvalidConfigError(f"sorting has no primitive for {step}; valid: pick, "
                                 "pick-from, place-in, place-on-table")
