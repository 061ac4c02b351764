"""Cartesian motion planning shared by the sim and the real env.

A straight-line TCP path (linear in position, slerp in orientation) is solved into a chain of
IK waypoints seeded one from the next, checked against the table plane, then time-scaled with
a minimum-jerk profile that respects Cartesian and joint speed caps, and sampled at the
control rate. Poses are 4x4 TCP poses in the robot base frame; joints are radians.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentic_env.errors import MotionPlanningError
from agentic_env.geometry.rotations import exp_rotation, log_rotation
from agentic_env.robot.constants import JOINT_SPEED_LIMIT
from agentic_env.robot.kinematics import ArmKinematics, pose_error


@dataclass(frozen=True)
class MotionLimits:
    """Speed caps and planning resolution of primitive motions.

    Attributes:
        max_linear_speed: TCP speed cap, m/s.
        max_angular_speed: TCP rotation speed cap, rad/s.
        joint_speed_fraction: fraction (0..1] of the joint speed limit used when planning.
        waypoint_spacing: distance between IK waypoints along a path, metres.
        waypoint_rotation: rotation between IK waypoints, radians.
        max_joint_jump: largest joint change between waypoints before the path is declared
            discontinuous (an IK branch flip), radians.
        table_clearance: the lowest point of any moving robot part must stay this far above
            the table top (z = 0 in the base frame), metres; negative allows touching.
    """

    max_linear_speed: float = 0.3
    max_angular_speed: float = 1.2
    joint_speed_fraction: float = 0.6
    waypoint_spacing: float = 0.01
    waypoint_rotation: float = 0.1
    max_joint_jump: float = 0.35
    table_clearance: float = 0.0


def interpolate_pose(start: np.ndarray, goal: np.ndarray, fraction: float) -> np.ndarray:
    """Pose at ``fraction`` (0..1) along the straight line / slerp from ``start`` to ``goal``."""
    pose = np.eye(4)
    pose[:3, 3] = (1.0 - fraction) * start[:3, 3] + fraction * goal[:3, 3]
    relative = start[:3, :3].T @ goal[:3, :3]
    axis_angle = log_rotation(relative)
    pose[:3, :3] = start[:3, :3] @ exp_rotation(fraction * axis_angle)
    return pose


@dataclass(frozen=True)
class JointPath:
    """Joint waypoints (N, 6) radians along a planned path, with the TCP poses they reach."""

    waypoints: np.ndarray
    poses: np.ndarray
    linear_length: float
    angular_length: float


def plan_cartesian_path(
    kinematics: ArmKinematics,
    q_start: np.ndarray,
    goal: np.ndarray,
    limits: MotionLimits,
    *,
    start: np.ndarray | None = None,
) -> JointPath:
    """Solve the straight TCP path from ``start`` (default: FK of ``q_start``) to ``goal``.

    Raises:
        MotionPlanningError: ``unreachable`` if a waypoint has no IK solution or the joint path is
            discontinuous; ``collision`` if the robot would go below the table clearance.
    """
    start = kinematics.forward(q_start) if start is None else start
    linear, angular = pose_error(start, goal)
    count = max(
        1,
        int(np.ceil(linear / limits.waypoint_spacing)),
        int(np.ceil(angular / limits.waypoint_rotation)),
    )
    waypoints = [np.asarray(q_start, dtype=float)]
    poses = [start]
    for i in range(1, count + 1):
        target = interpolate_pose(start, goal, i / count)
        solution = kinematics.solve(target, waypoints[-1])
        if not solution.converged:
            raise MotionPlanningError(
                "unreachable",
                f"no IK solution for TCP position {np.round(target[:3, 3], 3).tolist()} m "
                f"(left {solution.position_error * 1000:.1f} mm / "
                f"{np.rad2deg(solution.rotation_error):.1f} deg away)",
            )
        jump = float(np.max(np.abs(solution.q - waypoints[-1])))
        if jump > limits.max_joint_jump:
            raise MotionPlanningError(
                "unreachable",
                f"path needs a joint jump of {jump:.2f} rad near "
                f"{np.round(target[:3, 3], 3).tolist()} m (singularity or joint limit)",
            )
        check_table_clearance(kinematics, solution.q, limits)
        waypoints.append(solution.q)
        poses.append(target)
    return JointPath(np.array(waypoints), np.array(poses), linear, angular)


def plan_through(kinematics: ArmKinematics, q_start: np.ndarray, via: list[np.ndarray],
                 limits: MotionLimits) -> np.ndarray:
    """Joint waypoints (M, 6) of straight TCP segments from joints ``q_start`` through the
    poses ``via`` (4x4, base frame), each segment starting where the last one ended.

    Raises:
        MotionPlanningError: as :func:`plan_cartesian_path`, for the first segment that fails.
    """
    pose = kinematics.forward(q_start)
    q = np.asarray(q_start, dtype=float)
    waypoints = [q[None]]
    for goal in via:
        path = plan_cartesian_path(kinematics, q, goal, limits, start=pose)
        waypoints.append(path.waypoints[1:])
        q, pose = path.waypoints[-1], goal
    return np.concatenate(waypoints)


def plan_joint_path(
    kinematics: ArmKinematics, q_start: np.ndarray, q_goal: np.ndarray, limits: MotionLimits
) -> JointPath:
    """Straight line in joint space, checked against the table at regular samples."""
    span = float(np.max(np.abs(q_goal - q_start)))
    count = max(1, int(np.ceil(span / limits.waypoint_rotation)))
    waypoints = np.linspace(q_start, q_goal, count + 1)
    poses = []
    for q in waypoints:
        check_table_clearance(kinematics, q, limits)
        poses.append(kinematics.forward(q))
    linear, angular = pose_error(poses[0], poses[-1])
    return JointPath(waypoints, np.array(poses), linear, angular)


def check_table_clearance(kinematics: ArmKinematics, q: np.ndarray, limits: MotionLimits) -> None:
    """Raise ``MotionPlanningError('collision')`` if the robot at ``q`` dips below the table."""
    lowest = kinematics.lowest_geom_height(q)
    if lowest < limits.table_clearance:
        tcp = kinematics.forward(q)[:3, 3]
        raise MotionPlanningError(
            "collision",
            f"the robot would reach {lowest * 1000:.0f} mm relative to the table top near TCP "
            f"position {np.round(tcp, 3).tolist()} m "
            f"(minimum {limits.table_clearance * 1000:.0f} mm)",
        )


def time_parameterize(path: JointPath, control_dt: float, limits: MotionLimits) -> np.ndarray:
    """Sample ``path`` at the control rate with a minimum-jerk time scaling.

    The duration is the shortest for which the peak Cartesian speeds and every joint's
    peak speed stay under the caps (peak of a minimum-jerk profile = 1.875 x mean).

    Returns:
        (M, 6) joint targets, one per control period, ending exactly at the last waypoint.
    """
    waypoints = path.waypoints
    joint_travel = np.sum(np.abs(np.diff(waypoints, axis=0)), axis=0)
    peak = 1.875
    duration = max(
        peak * path.linear_length / limits.max_linear_speed,
        peak * path.angular_length / limits.max_angular_speed,
        peak * float(np.max(joint_travel)) / (JOINT_SPEED_LIMIT * limits.joint_speed_fraction),
        2 * control_dt,
    )
    steps = int(np.ceil(duration / control_dt))
    tau = np.arange(1, steps + 1) / steps
    progress = 10 * tau**3 - 15 * tau**4 + 6 * tau**5
    position = progress * (len(waypoints) - 1)
    lower = np.minimum(np.floor(position).astype(int), len(waypoints) - 2)
    frac = (position - lower)[:, None]
    return (1.0 - frac) * waypoints[lower] + frac * waypoints[lower + 1]
