"""Privileged access to the simulator's state: bodies, their boxes, what the fingers hold.

Used by the tasks (scoring, reset sampling), the scripted experts, the disturbances and the
sim-oracle; never by agents. Positions are in the robot base frame (metres), which is aligned
with the world frame and sits on the table top.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from agentic_env.contract.trial import ObjectPose
from agentic_env.contract.workcell import ROBOT_PREFIX
from agentic_env.errors import InvalidConfigError
from agentic_env.robot.constants import FINGER_PAD_GEOMS


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


def shift_free_body(scene: SceneState, name: str, shift: np.ndarray) -> None:
    """Translate free body ``name`` by ``shift`` (3,), metres, and stop it."""
    model, data = scene.model, scene.data
    joint = model.body(name).jntadr[0]
    data.qpos[model.jnt_qposadr[joint]:][:3] += shift
    data.qvel[model.jnt_dofadr[joint]:][:6] = 0.0


def rotation_quat(rotation: np.ndarray) -> np.ndarray:
    """Quaternion (w, x, y, z) of a rotation matrix (3, 3) (MuJoCo's conversion)."""
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(rotation).flatten())
    return quat


def set_body_pose(scene: SceneState, name: str, position: np.ndarray,
                  rotation: np.ndarray) -> None:
    """Place free body ``name`` at ``position`` (base frame, m) with ``rotation``, at rest."""
    joint = scene.model.body(name).jntadr[0]
    adr = scene.model.jnt_qposadr[joint]
    scene.data.qpos[adr:adr + 3] = scene.base_pos + position
    scene.data.qpos[adr + 3:adr + 7] = rotation_quat(rotation)
    dof = scene.model.jnt_dofadr[joint]
    scene.data.qvel[dof:dof + 6] = 0.0


def lowest_offset(model: mujoco.MjModel, body: str, rotation: np.ndarray) -> float:
    """Height of the lowest point of ``body``'s colliding geom boxes below its origin when
    the body has orientation ``rotation`` (3, 3), metres (negative: below)."""
    body_id = model.body(body).id
    geoms = np.flatnonzero((model.geom_bodyid == body_id)
                           & ((model.geom_contype != 0) | (model.geom_conaffinity != 0)))
    lowest = np.inf
    for g in geoms:
        geom_rot = np.zeros(9)
        mujoco.mju_quat2Mat(geom_rot, model.geom_quat[g])
        world = rotation @ geom_rot.reshape(3, 3)
        centre = rotation @ model.geom_pos[g] + world @ model.geom_aabb[g, :3]
        extent = float(np.abs(world[2]) @ model.geom_aabb[g, 3:])
        lowest = min(lowest, centre[2] - extent)
    return float(lowest)


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in the base frame: ``low`` and ``high`` corners (3,), metres."""

    low: np.ndarray
    high: np.ndarray

    @property
    def centre(self) -> np.ndarray:
        """Centre (3,), metres."""
        return (self.low + self.high) / 2.0

    def contains_xy(self, point: np.ndarray, margin: float = 0.0) -> bool:
        """Whether ``point``'s x, y lie within the box grown by ``margin``."""
        return bool(np.all(point[:2] >= self.low[:2] - margin)
                    and np.all(point[:2] <= self.high[:2] + margin))

    def contains(self, point: np.ndarray) -> bool:
        """Whether ``point`` (3,) lies inside the box."""
        return bool(np.all(point >= self.low) and np.all(point <= self.high))


def geoms_box(model: mujoco.MjModel, data: mujoco.MjData,
              geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World-frame axis-aligned (low, high) corners (3,) around the geoms ``geoms`` (ids, at
    least one) as posed in ``data``, metres."""
    rotations = data.geom_xmat[geoms].reshape(-1, 3, 3)
    centres = data.geom_xpos[geoms] + np.einsum("gij,gj->gi", rotations,
                                                 model.geom_aabb[geoms, :3])
    extents = np.einsum("gij,gj->gi", np.abs(rotations), model.geom_aabb[geoms, 3:])
    return np.min(centres - extents, axis=0), np.max(centres + extents, axis=0)


def body_box(scene: SceneState, body: str) -> Box:
    """Axis-aligned bounding box (base frame) of the colliding geoms of ``body``."""
    model = scene.model
    body_id = model.body(body).id
    geoms = np.flatnonzero((model.geom_bodyid == body_id)
                           & ((model.geom_contype != 0) | (model.geom_conaffinity != 0)))
    low, high = geoms_box(model, scene.data, geoms)
    return Box(low - scene.base_pos, high - scene.base_pos)


def holding(scene: SceneState, body: str) -> bool:
    """``body`` touches a pad of each finger."""
    touched = pads_touching(scene, body)
    return any("left" in pad for pad in touched) and any("right" in pad for pad in touched)


def pads_touching(scene: SceneState, body: str) -> set[str]:
    model, data = scene.model, scene.data
    body_id = model.body(body).id
    pads = {model.geom(ROBOT_PREFIX + name).id: name for name in FINGER_PAD_GEOMS}
    touched: set[str] = set()
    for g1, g2 in data.contact.geom[: data.ncon]:
        for pad, other in ((g1, g2), (g2, g1)):
            if pad in pads and model.geom_bodyid[other] == body_id:
                touched.add(pads[pad])
    return touched


def free_body_names(model: mujoco.MjModel) -> list[str]:
    """Names of all bodies with a free joint (task objects and distractors)."""
    return [model.body(model.jnt_bodyid[j]).name for j in range(model.njnt)
            if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]


def capture_object_poses(scene: SceneState) -> tuple[ObjectPose, ...]:
    """Poses of every free body, in the base frame."""
    poses = []
    for name in free_body_names(scene.model):
        joint = scene.model.body(name).jntadr[0]
        qpos = scene.data.qpos[scene.model.jnt_qposadr[joint]:][:7]
        position = qpos[:3] - scene.base_pos
        poses.append(ObjectPose(name, tuple(float(v) for v in position),
                                tuple(float(v) for v in qpos[3:7])))
    return tuple(poses)


def apply_object_poses(scene: SceneState, poses: tuple[ObjectPose, ...]) -> None:
    """Set every listed free body to its pose, at rest.

    Raises:
        InvalidConfigError: if a pose names a body that is not a free body of the model.
    """
    valid = set(free_body_names(scene.model))
    for pose in poses:
        if pose.name not in valid:
            names = ", ".join(sorted(valid))
            raise InvalidConfigError(
                f"trial object {pose.name!r} is not in this scene; valid: {names}"
            )
        joint = scene.model.body(pose.name).jntadr[0]
        adr = scene.model.jnt_qposadr[joint]
        scene.data.qpos[adr : adr + 3] = np.asarray(pose.position) + scene.base_pos
        scene.data.qpos[adr + 3 : adr + 7] = pose.quaternion
        dof = scene.model.jnt_dofadr[joint]
        scene.data.qvel[dof : dof + 6] = 0.0
