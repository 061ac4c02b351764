"""MuJoCo twins of the real drivers, for tests and dry runs without hardware.

:func:`make_twin_env` builds a :class:`~agentic_env.envs.sim_env.SimEnv` as the physical
world and a :class:`~agentic_env.real.real_env.RealEnv` on twin drivers over it: the arm
(:class:`~agentic_env.real.twin.arm.TwinArm`), the cameras at native resolutions and formats
(:mod:`~agentic_env.real.twin.camera`) and the gripper behind the emulated servo controller
on a pseudo-terminal (:mod:`~agentic_env.real.twin.gripper`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from agentic_env.contract.trial import TrialSpec
from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.real.calibration import Calibration
from agentic_env.real.hardware import Hardware
from agentic_env.real.real_env import RealEnv
from agentic_env.real.safety import SafetyConfig
from agentic_env.real.twin.arm import TwinArm
from agentic_env.real.twin.camera import TwinCamera, azure_kinect_twin, realsense_d405_twin
from agentic_env.real.twin.gripper import serial_gripper_twin
from agentic_env.real.twin.world import TwinWorld
from agentic_env.robot.kinematics import ArmKinematics
from agentic_env.sim.realism import BENCHMARK_REALISM


@dataclass
class Twin:
    """Handles on a twin cell, for fault injection in tests.

    Attributes:
        world: the simulated cell.
        arm: the twin arm driver.
        cameras: twin camera drivers by name.
    """

    world: TwinWorld
    arm: TwinArm
    cameras: dict[str, TwinCamera]


def twin_hardware(world: TwinWorld, safety: SafetyConfig | None = None) -> tuple[Hardware, Twin]:
    """Twin drivers over ``world`` (not yet connected) and handles on them."""
    safety = safety or SafetyConfig()
    arm = TwinArm(world, ArmKinematics())
    gripper, emulator = serial_gripper_twin(world, safety.serial_timeout, safety.serial_retries)
    cameras = {"shoulder": azure_kinect_twin(world), "wrist": realsense_d405_twin(world)}
    hardware = Hardware(arm=arm, gripper=gripper, cameras=dict(cameras),
                        clock=lambda: world.time, closers=[emulator.close])
    return hardware, Twin(world, arm, cameras)


def make_twin_env(
    task: str = "tabletop", seed: int = 0, trial: TrialSpec | None = None,
    scene: SceneConfig | None = None, control_hz: float = 20.0,
    calibration: Calibration | None = None, realism: str = BENCHMARK_REALISM,
    **env_kwargs: Any,
) -> tuple[RealEnv, Twin]:
    """A :class:`RealEnv` on twin drivers over a freshly reset simulated cell.

    Args:
        task: task of the simulated cell.
        seed: layout seed of its reset (ignored when ``trial`` is given).
        trial: a trial spec to lay out instead.
        scene: shared by the world and the env (observation resolution, optics).
        control_hz: control rate of both.
        calibration: camera poses the env uses; default: what a calibration session in
            that world solves (:meth:`TwinWorld.solved_calibration`: exact in the ideal world).
        realism: the simulated cell's world (``realistic`` or ``ideal``).
        env_kwargs: further :class:`RealEnv` arguments (control_mode, safety, confirm...).
    """
    scene = scene or SceneConfig()
    env = SimEnv(task=task, scene=replace(scene, setting=trial.setting) if trial else scene,
                 control_hz=control_hz, realism=realism)
    env.reset(seed=seed, options={"trial": trial} if trial else None)
    world = TwinWorld(env)
    hardware, twin = twin_hardware(world, env_kwargs.get("safety"))
    hardware.closers.append(env.close)
    try:
        real = RealEnv(hardware, calibration or world.solved_calibration(), scene=scene,
                       control_hz=control_hz, **env_kwargs)
    except BaseException:
        for closer in hardware.closers:
            closer()
        raise
    return real, twin
