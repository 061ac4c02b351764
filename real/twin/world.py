"""The twin's physical world: a :class:`~agentic_env.envs.sim_env.SimEnv` the twin drivers act
on in place of the real cell.

The twin drivers (:mod:`~agentic_env.real.twin.arm`, :mod:`~agentic_env.real.twin.camera`,
:mod:`~agentic_env.real.twin.gripper`) read and move this world's MuJoCo state — the world
*is* the hardware here, so touching the simulator's state is their job; the real env above
them sees only what the driver interfaces report. Time is the simulation clock: it moves
only when the arm driver streams a control period (or stops the arm), so runs are
reproducible and faster than real time. All access goes through :attr:`lock` because the
gripper's servo emulator and the safety watchdog run in threads of their own.
"""

from __future__ import annotations

import threading

import numpy as np

from agentic_env.contract.workcell import ROBOT_PREFIX
from agentic_env.envs.sim_env import SimEnv
from agentic_env.real.calibration import FLANGE_SITE, Calibration
from agentic_env.sim.cameras import camera_pose_in_world
from agentic_env.sim.realism.calibration import apply_extrinsic_error


class TwinWorld:
    """A reset :class:`SimEnv` plus the gripper servo target the serial link sets.

    Args:
        env: the simulated cell (reset it, e.g. with a trial, before connecting drivers).
    """

    def __init__(self, env: SimEnv) -> None:
        self.env = env
        self.lock = threading.RLock()
        self.gripper_target = env.robot.gripper_width()
        self._previous_width = self.gripper_target

    @property
    def time(self) -> float:
        """Simulation clock, seconds."""
        with self.lock:
            return float(self.env.data.time)

    def step(self, joint_target: np.ndarray) -> None:
        """One control period towards ``joint_target`` (6,) rad and the gripper target."""
        with self.lock:
            self._previous_width = self.env.robot.gripper_width()
            self.env.robot.send(joint_target, self.gripper_target)

    def gripper_width(self) -> float:
        """Present opening between the pads, metres."""
        with self.lock:
            return self.env.robot.gripper_width()

    def gripper_moving(self) -> bool:
        """Whether the opening changed during the last control period (> 0.1 mm)."""
        with self.lock:
            return abs(self.env.robot.gripper_width() - self._previous_width) > 1e-4

    def reset_gripper_target(self) -> None:
        """Make the servo target the present width (after a reset of the sim)."""
        with self.lock:
            self.gripper_target = self._previous_width = self.env.robot.gripper_width()

    def true_calibration(self) -> Calibration:
        """The exact camera poses of this world (what a perfect calibration would find)."""
        with self.lock:
            env = self.env
            data, model = env.data, env.model
            world_to_base = np.eye(4)
            world_to_base[:3, 3] = -np.asarray(env.scene_config.robot_base_pos)
            shoulder = world_to_base @ camera_pose_in_world(data, env.camera_id("shoulder"))
            wrist_world = camera_pose_in_world(data, env.camera_id("wrist"))
            site = model.site(ROBOT_PREFIX + FLANGE_SITE).id
            flange = np.eye(4)
            flange[:3, :3] = data.site_xmat[site].reshape(3, 3)
            flange[:3, 3] = data.site_xpos[site]
            return Calibration(shoulder, np.linalg.inv(flange) @ wrist_world)

    def solved_calibration(self) -> Calibration:
        """The camera poses a calibration session in this world would solve: the exact ones
        with the realistic world's drawn calibration error of this episode (shoulder: camera
        -> base; wrist: camera -> flange, carried by the arm), the exact ones in the ideal
        world. What the simulator hands its own agents, so a ``RealEnv`` on the twin and the
        ``SimEnv`` under it observe the same extrinsics."""
        exact = self.true_calibration()
        world = self.env.world
        if world is None:
            return exact
        errors = world.episode.extrinsic_errors
        shoulder, wrist = exact.shoulder_to_base, exact.wrist_to_flange
        if "shoulder" in errors:
            shoulder = apply_extrinsic_error(shoulder, errors["shoulder"])
        if "wrist" in errors:
            wrist = apply_extrinsic_error(wrist, errors["wrist"])
        return Calibration(shoulder, wrist)
