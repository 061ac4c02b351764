"""The set of drivers a :class:`~agentic_env.real.real_env.RealEnv` runs on.

:func:`real_hardware` assembles the real cell's drivers (UR5e over RTDE, Azure Kinect,
RealSense D405, serial gripper); :func:`agentic_env.real.twin.twin_hardware` assembles the
MuJoCo twins behind the same interfaces.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from agentic_env.real.drivers.base import ArmDriver, CameraDriver, GripperDriver
from agentic_env.real.safety import SafetyConfig


@dataclass
class Hardware:
    """Drivers of one cell (not yet connected).

    Attributes:
        arm: the UR5e.
        gripper: the gripper's servo controller.
        cameras: camera drivers by observation camera name (``shoulder``, ``wrist``).
        clock: host clock that camera frames are stamped with, seconds.
        closers: called after the drivers disconnect (e.g. to stop an emulator).
    """

    arm: ArmDriver
    gripper: GripperDriver
    cameras: dict[str, CameraDriver]
    clock: Callable[[], float] = time.monotonic
    closers: list[Callable[[], None]] = field(default_factory=list)


def real_hardware(robot_host: str, gripper_port: str, kinect_device: int = 0,
                  realsense_serial: str | None = None,
                  safety: SafetyConfig | None = None) -> Hardware:
    """The real cell's drivers; the hardware packages are imported only on ``connect``.

    Args:
        robot_host: UR controller IP address or host name.
        gripper_port: serial device of the gripper's controller (e.g. ``/dev/ttyACM0``).
        kinect_device: Azure Kinect device index.
        realsense_serial: D405 serial number (``None``: the only one attached).
        safety: serial timeout and retries come from here.
    """
    from agentic_env.real.drivers.gripper_serial import SerialGripper
    from agentic_env.real.drivers.kinect import AzureKinectCamera
    from agentic_env.real.drivers.realsense import RealSenseCamera
    from agentic_env.real.drivers.ur_rtde import URRtdeArm

    safety = safety or SafetyConfig()
    return Hardware(
        arm=URRtdeArm(robot_host),
        gripper=SerialGripper(gripper_port, timeout=safety.serial_timeout,
                              retries=safety.serial_retries),
        cameras={"shoulder": AzureKinectCamera(kinect_device, clock=time.monotonic),
                 "wrist": RealSenseCamera(realsense_serial, clock=time.monotonic)},
        clock=time.monotonic,
    )
