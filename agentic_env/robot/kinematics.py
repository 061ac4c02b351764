"""Forward and inverse kinematics of the arm, shared by the sim and the real env.

IK runs on a robot-only model (arm + rigid gripper, no scene) with mink: a TCP frame task, a
small posture task towards the seed, and joint-limit constraints, iterated from a seed
configuration. All poses are 4x4 homogeneous matrices of the TCP frame in the robot base
frame (metres); joint vectors are the six arm joints in radians, shoulder to wrist.
"""

from __future__ import annotations

from dataclasses import dataclass

import mink
import mujoco
import numpy as np

from agentic_env.robot.constants import GRIPPER_PREFIX, TCP_SITE
from agentic_env.robot.model import robot_spec


@dataclass(frozen=True)
class IKSolution:
    """Result of :meth:`ArmKinematics.solve`.

    Attributes:
        q: joint positions reached (6,), radians.
        position_error: distance from the target position, metres.
        rotation_error: angle from the target orientation, radians.
        converged: whether both errors are below the requested tolerances.
    """

    q: np.ndarray
    position_error: float
    rotation_error: float
    converged: bool


def _rigid_gripper_spec() -> mujoco.MjSpec:
    spec = robot_spec()
    for element in [*spec.actuators, *spec.joints]:
        if element.name.startswith(GRIPPER_PREFIX):
            spec.delete(element)
    for element in [*spec.equalities, *spec.tendons, *spec.keys]:
        spec.delete(element)
    return spec


def pose_error(current: np.ndarray, target: np.ndarray) -> tuple[float, float]:
    """Position (m) and rotation (rad) distance between two 4x4 poses."""
    position = float(np.linalg.norm(current[:3, 3] - target[:3, 3]))
    relative = current[:3, :3].T @ target[:3, :3]
    cos_angle = np.clip((np.trace(relative) - 1.0) / 2.0, -1.0, 1.0)
    return position, float(np.arccos(cos_angle))


class ArmKinematics:
    """TCP kinematics of the UR5e with the fin-ray gripper (joint limits enforced)."""

    def __init__(self) -> None:
        self.model = _rigid_gripper_spec().compile()
        self._configuration = mink.Configuration(self.model)
        self._tcp_task = mink.FrameTask(
            TCP_SITE, "site", position_cost=1.0, orientation_cost=0.5, lm_damping=1e-6
        )
        self._posture_task = mink.PostureTask(self.model, cost=1e-3)
        self._limits = [mink.ConfigurationLimit(self.model)]
        self._tcp_site = self.model.site(TCP_SITE).id
        self.lower = self.model.jnt_range[:, 0].copy()
        self.upper = self.model.jnt_range[:, 1].copy()
        self._moving_geoms = np.flatnonzero(
            self.model.body_weldid[self.model.geom_bodyid] != 0
        )
        self._data = mujoco.MjData(self.model)

    def forward(self, q: np.ndarray) -> np.ndarray:
        """TCP pose (4x4) in the base frame for joint positions ``q`` (6,) rad."""
        self._data.qpos[:] = q
        mujoco.mj_kinematics(self.model, self._data)
        pose = np.eye(4)
        pose[:3, :3] = self._data.site_xmat[self._tcp_site].reshape(3, 3)
        pose[:3, 3] = self._data.site_xpos[self._tcp_site]
        return pose

    def solve(
        self,
        target: np.ndarray,
        seed: np.ndarray,
        *,
        position_tolerance: float = 2e-4,
        rotation_tolerance: float = 2e-3,
        max_iterations: int = 60,
    ) -> IKSolution:
        """Joint positions that put the TCP at ``target`` (4x4, base frame), near ``seed``.

        Args:
            target: desired TCP pose in the base frame.
            seed: starting joint positions (6,), radians; the solution stays close to it.
            position_tolerance: metres.
            rotation_tolerance: radians.
            max_iterations: bound on the damped QP iterations.
        """
        configuration = self._configuration
        configuration.update(np.clip(seed, self.lower, self.upper))
        self._posture_task.set_target(configuration.q)
        self._tcp_task.set_target(mink.SE3.from_matrix(target))
        tasks = [self._tcp_task, self._posture_task]
        dt = 1.0
        position_error = rotation_error = np.inf
        for _ in range(max_iterations):
            current = configuration.get_transform_frame_to_world(TCP_SITE, "site").as_matrix()
            position_error, rotation_error = pose_error(current, target)
            if position_error < position_tolerance and rotation_error < rotation_tolerance:
                break
            velocity = mink.solve_ik(
                configuration, tasks, dt, "daqp", damping=1e-4, limits=self._limits
            )
            configuration.integrate_inplace(velocity, dt)
        converged = position_error < position_tolerance and rotation_error < rotation_tolerance
        return IKSolution(configuration.q.copy(), position_error, rotation_error, converged)

    def lowest_geom_height(self, q: np.ndarray) -> float:
        """Lowest point (z, base frame, metres) of any moving robot geom's box at ``q``."""
        self._data.qpos[:] = q
        mujoco.mj_kinematics(self.model, self._data)
        geoms = self._moving_geoms
        centers = self.model.geom_aabb[geoms, :3]
        halves = self.model.geom_aabb[geoms, 3:]
        rotations = self._data.geom_xmat[geoms].reshape(-1, 3, 3)
        # z extent of an oriented box = sum |R[2, k]| * half[k]
        centre_z = self._data.geom_xpos[geoms, 2] + np.einsum("gk,gk->g", rotations[:, 2], centers)
        extent_z = np.einsum("gk,gk->g", np.abs(rotations[:, 2, :]), halves)
        return float(np.min(centre_z - extent_z))

    def robot_points(self, points: np.ndarray, q: np.ndarray, margin: float = 0.02) -> np.ndarray:
        """Mask of the ``points`` (N, 3), base frame, that lie on the robot at joint positions
        ``q`` (6,) rad: inside a moving geom's bounding box grown by ``margin`` m.

        Used to remove the robot itself from a camera's point cloud (self-filtering).
        """
        self._data.qpos[:] = q
        mujoco.mj_kinematics(self.model, self._data)
        boxes = []
        for geom in self._moving_geoms:
            rotation = self._data.geom_xmat[geom].reshape(3, 3)
            centre = self._data.geom_xpos[geom] + rotation @ self.model.geom_aabb[geom, :3]
            boxes.append((rotation, centre, self.model.geom_aabb[geom, 3:] + margin))
        # only points inside the boxes' bounding spheres' common bounding box can be inside
        reach = np.array([np.linalg.norm(half) for _, _, half in boxes]) + 1e-6
        centres = np.array([centre for _, centre, _ in boxes])
        low, high = np.min(centres.T - reach, axis=1), np.max(centres.T + reach, axis=1)
        candidates = np.flatnonzero(np.all((points >= low) & (points <= high), axis=1))
        near = points[candidates]
        inside = np.zeros(len(near), dtype=bool)
        for rotation, centre, half in boxes:
            inside |= np.all(np.abs((near - centre) @ rotation) <= half, axis=1)
        mask = np.zeros(len(points), dtype=bool)
        mask[candidates[inside]] = True
        return mask
