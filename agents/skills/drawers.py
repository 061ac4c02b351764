"""Drawer skills: find the handle's grasp, open, close, and the yaw that keeps the wrist
out of the cabinet. Base frame (z up, table top z = 0), metres and radians."""

from __future__ import annotations

import numpy as np

from agentic_env.agents.perception import box_cloud
from agentic_env.agents.skills.handles import handle_grasp
from agentic_env.agents.skills.io import SkillIO
from agentic_env.agents.skills.locate import Target
from agentic_env.agents.skills.result import SkillCode, SkillResult
from agentic_env.agents.skills.scene import without_robot
from agentic_env.contract.actions import close_drawer as close_action
from agentic_env.contract.actions import open_drawer as open_action

#: How far (m) an open drawer is pulled out, and how far a close pushes at most.
DRAWER_PULL = 0.2
DRAWER_PUSH = 0.3


def handle_pose(io: SkillIO, handle: Target) -> SkillResult:
    """The TCP grasp pose (4x4) of a located drawer handle as ``data["pose"]``, fitted to the
    drawer front around it (:func:`.handles.handle_grasp`); ``NOT_FOUND`` when no front
    fits."""
    detection = handle.detection
    u, v = detection.point
    u0, v0, u1, v1 = detection.box or (u - 10, v - 10, u + 10, v + 10)
    pad_u, pad_v = 2 * (u1 - u0) // 3 + 8, 2 * (v1 - v0) + 12
    surround = box_cloud(io.obs, handle.camera, (u0 - pad_u, v0 - pad_v, u1 + pad_u,
                                                 v1 + pad_v))
    pose = handle_grasp(handle.cloud, without_robot(surround, io.obs, radius=0.0))
    if pose is None:
        return SkillResult(SkillCode.NOT_FOUND,
                           f"could not fit the front of {handle.name} around its handle")
    return SkillResult(SkillCode.OK, f"handle of {handle.name} fitted", {"pose": pose})


def outward_yaw(handle_grasp: np.ndarray) -> float:
    """Yaw (rad) that points the tool x axis out of the cabinet whose handle is grasped at
    ``handle_grasp`` (4x4): the wrist's bulky side then stays clear of the carcass."""
    into = handle_grasp[:3, 2]
    return float(np.arctan2(-into[1], -into[0]))


def open_drawer(io: SkillIO, handle: Target, why: str = "",
                distance: float = DRAWER_PULL) -> SkillResult:
    """Pull the drawer of the located ``handle`` open by ``distance`` m."""
    return _move_drawer(io, handle, why, distance, opening=True)


def close_drawer(io: SkillIO, handle: Target, why: str = "",
                 distance: float = DRAWER_PUSH) -> SkillResult:
    """Push the drawer of the located ``handle`` closed (at most ``distance`` m)."""
    return _move_drawer(io, handle, why, distance, opening=False)


def _move_drawer(io: SkillIO, handle: Target, why: str, distance: float,
                 opening: bool) -> SkillResult:
    fitted = handle_pose(io, handle)
    if not fitted.ok:
        return fitted
    pose = fitted.data["pose"]
    action = open_action(pose, distance) if opening else close_action(pose, distance)
    verb = "open-drawer" if opening else "close-drawer"
    status = io.act(action, why or f"{verb} {handle.name}")
    return SkillResult.from_status(status, verb, pose=pose)
