"""Safety layer and frame fitting units: target checks, safety bits, config validation,
native frame conversion, cropping, resizing, depth units and staleness."""

from __future__ import annotations

import numpy as np
import pytest

from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.camera import CameraConfig
from agentic_env.real.drivers.base import ArmState, RawFrame, SafetyBits
from agentic_env.real.frames import check_fresh, fit_frame
from agentic_env.real.safety import (
    FaultKind,
    FaultLatch,
    SafetyConfig,
    SafetyFault,
    SafetyFaultError,
    TargetGate,
    state_fault,
)
from agentic_env.robot.constants import HOME_JOINT_POSITIONS
from agentic_env.robot.kinematics import ArmKinematics


@pytest.fixture(scope="module")
def kinematics() -> ArmKinematics:
    return ArmKinematics()


def gate(kinematics: ArmKinematics, **limits: float) -> TargetGate:
    checker = TargetGate(SafetyConfig(**limits), kinematics, period=0.05)
    checker.reset(HOME_JOINT_POSITIONS)
    return checker


def rejection(checker: TargetGate, q: np.ndarray) -> str:
    with pytest.raises(SafetyFaultError) as error:
        checker.check(q, 1.0)
    assert error.value.fault.kind == FaultKind.TARGET_REJECTED
    return error.value.fault.message


def test_gate_accepts_smooth_targets_and_rejects_bad_ones(kinematics: ArmKinematics) -> None:
    checker = gate(kinematics)
    q = HOME_JOINT_POSITIONS.copy()
    for _ in range(10):  # 0.5 rad/s on the pan joint, reached with 10 rad/s^2
        q[0] += 0.025
        checker.check(q, 0.0)
    assert "finite" in rejection(gate(kinematics), np.full(6, np.nan))
    assert "joint limits" in rejection(gate(kinematics), HOME_JOINT_POSITIONS + [0, 0, 4, 0, 0, 0])
    assert "max_step" in rejection(gate(kinematics), HOME_JOINT_POSITIONS + [0.3, 0, 0, 0, 0, 0])
    slow = gate(kinematics, max_joint_speed=1.0)
    assert "joint speed" in rejection(slow, HOME_JOINT_POSITIONS + [0.1, 0, 0, 0, 0, 0])
    jerky = gate(kinematics, max_joint_acceleration=20.0)  # 1.2 rad/s from rest in 50 ms
    assert "acceleration" in rejection(jerky, HOME_JOINT_POSITIONS + [0.06, 0, 0, 0, 0, 0])
    tcp_capped = gate(kinematics, max_tcp_speed=0.2)
    assert "TCP speed" in rejection(tcp_capped, HOME_JOINT_POSITIONS + [0, 0.04, 0, 0, 0, 0])


def test_gate_rejects_tcp_outside_the_box(kinematics: ArmKinematics) -> None:
    from agentic_env.contract.spaces import Workspace

    checker = gate(kinematics, workspace=Workspace(low=(0.0, -1, 0.4), high=(1, 1, 1)))
    assert "safety box" in rejection(checker, HOME_JOINT_POSITIONS)


def test_state_faults_from_bits_connection_and_program() -> None:
    def state(bits: SafetyBits, running: bool = True, connected: bool = True) -> ArmState:
        return ArmState(2.0, np.zeros(6), np.zeros(6), np.zeros(6), bits, running, connected)

    assert state_fault(state(SafetyBits.NORMAL_MODE)) is None
    assert state_fault(state(SafetyBits.NORMAL_MODE | SafetyBits.REDUCED_MODE)) is None
    kinds = {
        SafetyBits.PROTECTIVE_STOPPED: FaultKind.PROTECTIVE_STOP,
        SafetyBits.EMERGENCY_STOPPED: FaultKind.EMERGENCY_STOP,
        SafetyBits.VIOLATION: FaultKind.CONTROLLER_FAULT,
        SafetyBits.SAFEGUARD_STOPPED: FaultKind.SAFETY_VIOLATION,
    }
    for bits, kind in kinds.items():
        fault = state_fault(state(bits))
        assert fault is not None and fault.kind == kind and fault.robot_time == 2.0
    assert state_fault(state(SafetyBits.NORMAL_MODE, running=False)).kind == "program_stopped"
    assert state_fault(state(SafetyBits.NORMAL_MODE, connected=False)).kind == "connection_lost"


def test_latch_keeps_the_first_fault() -> None:
    latch = FaultLatch()
    first = latch.trip(SafetyFault(FaultKind.PROTECTIVE_STOP, "first"))
    assert latch.trip(SafetyFault(FaultKind.GRIPPER, "second")) is first
    latch.clear()
    assert latch.fault is None


def test_config_validation_names_the_field() -> None:
    with pytest.raises(InvalidConfigError, match="max_joint_speed"):
        SafetyConfig(max_joint_speed=4.0)
    with pytest.raises(InvalidConfigError, match="max_frame_age"):
        SafetyConfig(max_frame_age=0.0)


def test_fit_frame_converts_crops_and_resizes() -> None:
    camera = CameraConfig("wrist", 32, 16, fovy_deg=58.0, depth_min=0.07, depth_max=0.5)
    # 80x32 BGRA: cropped centrally to 64x32 (columns 8..71), then halved
    color = np.zeros((32, 80, 4), np.uint8)
    color[..., 0] = 200  # blue
    color[..., 2] = np.arange(80)[None, :] * 3  # red ramp along x
    depth = np.full((32, 80), 3000, np.uint16)  # 0.3 m in 0.1 mm units
    depth[:, 8:12] = 100  # 1 cm: too near for the D405
    depth[:, 9] = 2000  # a thin edge: nearest neighbours keep it, never averaged
    depth[:4, 20:24] = 6000  # 0.6 m: too far
    intrinsics = np.array([[40.0, 0, 40.0], [0, 40.0, 16.0], [0, 0, 1]])
    raw = RawFrame(color, "bgra8", depth, 1e-4, intrinsics, timestamp=0.0)
    rgb, metres, k = fit_frame(raw, camera)
    assert rgb.shape == (16, 32, 3) and metres.shape == (16, 32) and metres.dtype == np.float32
    assert np.all(rgb[..., 2] == 200)  # blue moved to the last channel
    box_average = (np.arange(8, 72, 2) + 0.5) * 3
    np.testing.assert_allclose(rgb[5, :, 0], box_average, atol=1.0)
    np.testing.assert_allclose(metres[:, 0], 0.2, atol=1e-6)  # column 9, the thin edge
    assert np.all(metres[:, 1] == 0.0)  # column 11: too near
    assert np.all(metres[:2, 6:8] == 0.0) and np.all(metres[2:, 6:8] > 0.29)  # too far
    np.testing.assert_allclose(metres[8, 10:], 0.3, atol=1e-6)
    np.testing.assert_allclose(k, [[20.0, 0, 16.0], [0, 20.0, 8.0], [0, 0, 1]])


def test_stale_frames_are_refused() -> None:
    raw = RawFrame(np.zeros((2, 2, 3), np.uint8), "rgb8", np.zeros((2, 2), np.uint16), 1e-3,
                   np.eye(3), timestamp=10.0)
    check_fresh(raw, "wrist", now=10.2, max_age=0.25)
    with pytest.raises(SafetyFaultError, match="wrist camera's newest frame is 300 ms old"):
        check_fresh(raw, "wrist", now=10.3, max_age=0.25)
