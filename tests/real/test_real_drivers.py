"""Hardware drivers without their packages fail with errors naming what to install; the
safety watchdog thread latches a fault raised while the env is idle."""

from __future__ import annotations

import importlib.util
import time

import pytest

from agentic_env.errors import AgenticEnvError
from agentic_env.real.drivers.base import MissingDriverError
from agentic_env.real.drivers.kinect import AzureKinectCamera
from agentic_env.real.drivers.realsense import RealSenseCamera
from agentic_env.real.drivers.ur_rtde import URRtdeArm


@pytest.mark.parametrize(("driver", "module", "advice"), [
    (lambda: URRtdeArm("192.0.2.1"), "rtde_control", "'real' extra"),
    (lambda: AzureKinectCamera(), "pyk4a", "Azure Kinect Sensor SDK"),
    (lambda: RealSenseCamera(), "pyrealsense2", "libusb-1.0-0"),
])
def test_missing_hardware_packages_name_the_fix(driver, module: str, advice: str) -> None:
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed")
    with pytest.raises(MissingDriverError, match=module) as error:
        driver().connect()
    assert advice in str(error.value)
    assert isinstance(error.value, AgenticEnvError) and isinstance(error.value, ImportError)


def test_watchdog_thread_latches_an_idle_protective_stop() -> None:
    pytest.importorskip("serial")
    from agentic_env.contract.actions import home
    from agentic_env.real.twin import make_twin_env

    env, twin = make_twin_env()
    with env:
        env.reset()
        twin.arm.protective_stop_after(0)
        twin.arm.servo_joint(twin.world.env.robot.joint_positions(), 0.05, 1.0, 1.0)
        deadline = time.monotonic() + 5.0
        while env.safety_fault is None and time.monotonic() < deadline:
            time.sleep(0.01)  # nobody steps the env: only the watchdog thread can notice
        assert env.safety_fault is not None and env.safety_fault.kind == "protective_stop"
        _, _, terminated, _, info = env.step(home())
        assert terminated and info["safety_fault"]["kind"] == "protective_stop"
        assert info["primitive"]["reason"] == "safety_fault"
