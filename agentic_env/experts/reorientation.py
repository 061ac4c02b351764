"""Scripted expert of ``AgenticEnv/Reorientation-v0`` (privileged: reads the true sim state).

The closed-loop expert of :func:`agentic_env.experts.closed_loop.closed_loop_actions` executes the
Fast Downward reference plan, grounding each step here (:meth:`ReorientationExpert
.primitive_for`; the grasps and the feasibility search are described on
:class:`agentic_env.tasks.reorientation.ReorientationTask`). Poses are 4x4 TCP poses in the
robot base frame, metres.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from agentic_env.contract.actions import pick, place
from agentic_env.contract.workcell import ROBOT_PREFIX
from agentic_env.errors import InvalidConfigError
from agentic_env.experts.closed_loop import closed_loop_actions
from agentic_env.geometry.rotations import unit
from agentic_env.pddl.planning import PlanStep
from agentic_env.primitives.turning import ReachCheck, grasp_poses, place_rotations
from agentic_env.robot.constants import GRIPPER_PREFIX, TCP_SITE
from agentic_env.robot.model import RobotIndices
from agentic_env.robot.reorienting import needs_turn
from agentic_env.sim.state import SceneState, body_box, lowest_offset, rotation_quat

if TYPE_CHECKING:
    from agentic_env.tasks.reorientation.task import Item, ReorientationTask


class ReorientationExpert:
    """Grounds reorientation plan steps for one task instance; caches the arm kinematics
    and the sweep checker (dropped when pickled)."""

    def __init__(self, task: ReorientationTask) -> None:
        self.task = task
        self._reach_check: ReachCheck | None = None
        self._sweep: _SweepChecker | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_reach_check"] = None
        state["_sweep"] = None
        return state

    def actions(self, scene: SceneState) -> Iterator[dict[str, Any]]:
        """Execute the Fast Downward reference plan with ground-truth poses, replanning when
        a step fails (:func:`~agentic_env.experts.closed_loop.closed_loop_actions`)."""
        return closed_loop_actions(self.task, scene, self.primitive_for)

    def primitive_for(self, step: PlanStep, scene: SceneState) -> dict[str, Any]:
        """``pick`` with a grasp suited to the object's pose and goal; ``place-in-pose`` with
        the TCP pose that turns the object, as it sits in the hand, into the asked pose."""
        if step.name == "pick":
            return self._pick_action(scene, step.args[0])
        if step.name == "place-in-pose":
            return self._place_action(scene, step.args[0], step.args[1])
        raise InvalidConfigError(f"reorientation has no primitive for {step}; valid: pick, "
                                 "place-in-pose")

    def _pick_action(self, scene: SceneState, name: str) -> dict[str, Any]:
        cfg = self.task.config
        item = self.task.items[name]
        rotation, centre = scene.body_rotation(name), scene.body_position(name)
        axis = rotation[:, 2]
        low = body_box(scene, name).low[2]
        goal = self.task.goal()
        turning = name == goal["object"] and needs_turn(axis, goal["pose"])
        if abs(axis[2]) < np.cos(np.radians(45.0)):  # lying: grasp across the body axis
            along = unit(np.array([axis[0], axis[1], 0.0]))
            if item.family == "bottle":
                position = centre + (cfg.bottle_grasp_height - cfg.bottle_half_length) * axis
                width = 2.0 * cfg.bottle_radius
            else:  # no goal needs it; the widest of these do not fit the gripper
                position = centre.copy()
                extents = np.abs(rotation.T @ np.cross(along, [0.0, 0.0, 1.0]))
                width = min(2.0 * float(extents @ self._half_extents(item)), 0.065)
            position[2] = centre[2]
            # the tool leans towards the base: turning it by 90 deg about the closing axis
            # stands the object on its base
            leans = [-along]
        else:  # standing: from above near the top, across the narrow side or the mug body
            along = unit(np.array([rotation[0, 0], rotation[1, 0], 0.0]))
            width = (2.0 * cfg.box_half_size[1] if item.family == "box"
                     else 2.0 * (cfg.bottle_radius if item.family == "bottle"
                                 else cfg.mug_radius))
            position = centre.copy()
            position[2] = body_box(scene, name).high[2] - cfg.top_grasp_depth
            outward = unit(np.array([centre[0], centre[1], 0.0]))
            leans = sorted([along, -along], key=lambda lean: -float(lean @ outward))
        q = self._joint_positions(scene)
        poses = grasp_poses(position, leans, cfg.grasp_tilts if turning else (0.0,), low)
        for pose in poses:
            if not turning or self._reach().pick(q, pose):
                return pick(pose, width=width)
        return pick(poses[0], width=width)

    def _half_extents(self, item: Item) -> np.ndarray:
        cfg = self.task.config
        if item.family == "box":
            return np.asarray(cfg.box_half_size)
        if item.family == "bottle":
            return np.array([cfg.bottle_radius, cfg.bottle_radius, cfg.bottle_half_length])
        return np.array([cfg.mug_radius, cfg.mug_radius, cfg.mug_half_height])

    def _place_action(self, scene: SceneState, name: str, pose: str) -> dict[str, Any]:
        tcp_rot, tcp_pos = self._tcp_pose(scene)
        obj_rot, obj_pos = scene.body_rotation(name), scene.body_position(name)
        # the object in the hand: its rotation and position in the tool frame
        in_hand_rot = tcp_rot.T @ obj_rot
        in_hand_pos = tcp_rot.T @ (obj_pos - tcp_pos)
        spot = obj_pos[:2].copy()
        candidates = place_rotations(tcp_rot, in_hand_rot, pose, spot)
        if not needs_turn(obj_rot[:, 2], pose):
            return place(self._tcp_target(scene, name, candidates[0], in_hand_rot, in_hand_pos,
                                          spot))
        q = self._joint_positions(scene)
        for rotation in candidates:
            target = self._tcp_target(scene, name, rotation, in_hand_rot, in_hand_pos, spot)
            if self._place_feasible(scene, name, q, target, in_hand_rot, in_hand_pos):
                return place(target)
        return place(self._tcp_target(scene, name, candidates[0], in_hand_rot, in_hand_pos,
                                      spot))

    def _tcp_target(self, scene: SceneState, name: str, tcp_rotation: np.ndarray,
                    in_hand_rot: np.ndarray, in_hand_pos: np.ndarray,
                    spot: np.ndarray) -> np.ndarray:
        """TCP pose (4x4) that rests the object at ``spot`` (x, y), ``release_gap`` above the
        table, when the tool has ``tcp_rotation``."""
        obj_rot = tcp_rotation @ in_hand_rot
        release = self.task.config.release_gap
        obj_pos = np.array([spot[0], spot[1],
                            release - lowest_offset(scene.model, name, obj_rot)])
        pose = np.eye(4)
        pose[:3, :3] = tcp_rotation
        pose[:3, 3] = obj_pos - tcp_rotation @ in_hand_pos
        return pose

    def _tcp_pose(self, scene: SceneState) -> tuple[np.ndarray, np.ndarray]:
        site = scene.data.site(ROBOT_PREFIX + TCP_SITE)
        return site.xmat.reshape(3, 3).copy(), site.xpos - scene.base_pos

    def _joint_positions(self, scene: SceneState) -> np.ndarray:
        return scene.data.qpos[self._checker(scene).arm_qpos].copy()

    def _checker(self, scene: SceneState) -> _SweepChecker:
        if self._sweep is None or self._sweep.source is not scene.model:
            self._sweep = _SweepChecker(scene.model)
        return self._sweep

    def _reach(self) -> ReachCheck:
        if self._reach_check is None:
            self._reach_check = ReachCheck()
        return self._reach_check

    def _place_feasible(self, scene: SceneState, name: str, q: np.ndarray, target: np.ndarray,
                        in_hand_rot: np.ndarray, in_hand_pos: np.ndarray) -> bool:
        """Whether the place primitive can plan its path to ``target`` and the hand with the
        held object keeps clear of the arm, the table and the other objects along it."""
        waypoints = self._reach().place(q, target)
        if waypoints is None:
            return False
        return self._checker(scene).clear(scene, name, waypoints, in_hand_rot, in_hand_pos)



class _SweepChecker:
    """Kinematic collision check of a planned path with the held object carried along.

    Works on a copy of the scene model whose geoms report contacts up to ``margin`` apart.
    Along the path, the robot (but its fingers, which hold the object) must keep ``margin``
    from the other objects, ``table_margin`` from the table and fixtures, and the held object
    must not touch anything but the fingers.
    """

    margin = 0.01
    table_margin = 0.004

    def __init__(self, model: mujoco.MjModel) -> None:
        self.source = model
        self.model = copy.deepcopy(model)
        self.model.geom_margin[:] = self.margin
        self.data = mujoco.MjData(self.model)
        indices = RobotIndices.from_model(model, ROBOT_PREFIX)
        self.arm_qpos = indices.arm_qpos
        robot_bodies = np.array(sorted(indices.robot_bodies))
        self.robot = np.isin(model.geom_bodyid, robot_bodies)
        fingers = [model.body(ROBOT_PREFIX + GRIPPER_PREFIX + f"{side}_{part}").id
                   for side in ("left", "right") for part in ("carriage", "middle", "tip")]
        self.finger = np.isin(model.geom_bodyid, fingers)
        self.static = (model.body_weldid[model.geom_bodyid] == 0) & ~self.robot
        self.tcp_site = model.site(ROBOT_PREFIX + TCP_SITE).id

    def clear(self, scene: SceneState, held: str, waypoints: np.ndarray,
              in_hand_rot: np.ndarray, in_hand_pos: np.ndarray) -> bool:
        """Whether ``waypoints`` (N, 6) keep clear (see the class docstring)."""
        model, data = self.model, self.data
        data.qpos[:] = scene.data.qpos
        body = model.body(held).id
        adr = model.jnt_qposadr[model.body_jntadr[body]]
        for q in waypoints[::2]:
            data.qpos[self.arm_qpos] = q
            mujoco.mj_kinematics(model, data)
            tcp_rot = data.site_xmat[self.tcp_site].reshape(3, 3)
            data.qpos[adr:adr + 3] = data.site_xpos[self.tcp_site] + tcp_rot @ in_hand_pos
            data.qpos[adr + 3:adr + 7] = rotation_quat(tcp_rot @ in_hand_rot)
            mujoco.mj_kinematics(model, data)
            mujoco.mj_collision(model, data)
            for contact in data.contact[:data.ncon]:
                if not self._acceptable(contact.geom[0], contact.geom[1], contact.dist, body):
                    return False
        return True

    def _acceptable(self, g1: int, g2: int, dist: float, held: int) -> bool:
        model = self.model
        for a, b in ((g1, g2), (g2, g1)):
            if self.robot[a]:
                if self.robot[b]:
                    return True
                if model.geom_bodyid[b] == held:
                    return self.finger[a] or dist > self.table_margin
                if self.static[b]:
                    return dist > self.table_margin
                return dist > self.margin
        if held in (model.geom_bodyid[g1], model.geom_bodyid[g2]):
            return dist > 0.002
        return True
