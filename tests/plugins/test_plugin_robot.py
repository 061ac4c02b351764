"""The UR5e + fin-ray gripper as a LeRobot robot (``agentic_ur5e``) on the digital twin: its
features are the exporter's, and every action passes the project's safety layer."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from lerobot.robots import RobotConfig, make_robot_from_config
from lerobot.teleoperators import TeleoperatorConfig, make_teleoperator_from_config
from lerobot.utils.errors import DeviceAlreadyConnectedError, DeviceNotConnectedError
from lerobot.utils.feature_utils import hw_to_dataset_features
from lerobot_camera_agentic import AgenticKinectCameraConfig
from lerobot_robot_agentic_ur5e import (
    ACTION_NAMES,
    POS_NAMES,
    STATE_NAMES,
    AgenticScriptedConfig,
    AgenticUR5e,
    AgenticUR5eConfig,
    CalibrationMissingError,
)
from support.lerobot_plugins import HEIGHT, WIDTH, twin_config

from agentic_env.contract.features import CAMERAS, video_key
from agentic_env.datasets.lerobot_format import vector_features
from agentic_env.errors import InvalidActionError, InvalidConfigError
from agentic_env.real.safety import FaultKind, SafetyFaultError
from agentic_env.robot.constants import (
    GRIPPER_SPEED_LIMIT,
    GRIPPER_WIDTH_RANGE,
    HOME_JOINT_POSITIONS,
)


def _state(observation: dict[str, Any]) -> np.ndarray:
    return np.array([observation[name] for name in STATE_NAMES])


def _action(vector: np.ndarray) -> dict[str, float]:
    return {name: float(v) for name, v in zip(ACTION_NAMES, vector, strict=True)}


def test_features_are_named_as_the_dataset_exporter_names_them() -> None:
    robot = make_robot_from_config(twin_config())
    assert isinstance(robot, AgenticUR5e)
    assert RobotConfig.get_choice_class("agentic_ur5e") is AgenticUR5eConfig
    observation = hw_to_dataset_features(robot.observation_features, "observation")
    action = hw_to_dataset_features(robot.action_features, "action")
    exporter = vector_features()
    assert set(observation) == {"observation.state", *map(video_key, CAMERAS)}
    assert observation["observation.state"]["names"] == exporter["observation.state"]["names"]
    assert action["action"]["names"] == exporter["action"]["names"]
    for camera in CAMERAS:
        assert observation[video_key(camera)]["shape"] == (HEIGHT, WIDTH, 3)


def test_lerobot_naming_keeps_the_order_for_lerobot_rollout() -> None:
    robot = make_robot_from_config(twin_config(feature_names="lerobot"))
    scalars = [name for name, kind in robot.observation_features.items() if kind is float]
    assert scalars == list(POS_NAMES) == list(robot.action_features)
    assert tuple(f"{name}.pos" for name in STATE_NAMES) == POS_NAMES
    teleop = make_teleoperator_from_config(AgenticScriptedConfig(feature_names="lerobot"))
    assert list(teleop.action_features) == list(POS_NAMES)
    with pytest.raises(InvalidConfigError, match="valid: exporter, lerobot"):
        twin_config(feature_names="pos")


def test_connects_reads_and_disconnects_on_the_twin() -> None:
    robot = make_robot_from_config(twin_config())
    assert robot.is_calibrated and not robot.is_connected
    with pytest.raises(DeviceNotConnectedError):
        robot.get_observation()
    robot.connect()
    try:
        assert robot.is_connected
        with pytest.raises(DeviceAlreadyConnectedError):
            robot.connect()
        observation = robot.get_observation()
        assert set(observation) == set(robot.observation_features)
        np.testing.assert_allclose(_state(observation)[:6], HOME_JOINT_POSITIONS, atol=1e-3)
        assert observation["shoulder"].shape == (HEIGHT, WIDTH, 3)
        # the LeRobot cameras read through the robot's drivers: the same frame
        np.testing.assert_array_equal(robot.cameras["wrist"].read(), observation["wrist"])
    finally:
        robot.disconnect()
    assert not robot.is_connected and robot.env is None
    assert not any(camera.is_connected for camera in robot.cameras.values())
    with pytest.raises(DeviceNotConnectedError):
        robot.disconnect()


def test_a_safe_action_moves_the_arm(twin_robot: AgenticUR5e) -> None:
    start = _state(twin_robot.get_observation())
    target = start.copy()
    target[0] += 0.02  # 0.02 rad of shoulder pan in one 50 ms period: 0.4 rad/s
    sent = twin_robot.send_action(_action(target))
    np.testing.assert_allclose([sent[name] for name in ACTION_NAMES[:6]], target[:6], atol=1e-9)
    for _ in range(5):
        twin_robot.send_action(_action(target))
    moved = _state(twin_robot.get_observation())
    assert abs(moved[0] - target[0]) < 0.005
    assert twin_robot.env.safety_fault is None


def test_an_out_of_range_gripper_target_is_clipped_and_ramped(twin_robot: AgenticUR5e) -> None:
    start = _state(twin_robot.get_observation())
    target = start.copy()
    target[6] = -0.5  # far below fully closed
    sent = twin_robot.send_action(_action(target))
    ramp = GRIPPER_SPEED_LIMIT * twin_robot.env.control_dt
    assert sent["gripper_width.target"] == pytest.approx(max(start[6] - ramp,
                                                              GRIPPER_WIDTH_RANGE[0]))
    np.testing.assert_allclose([sent[name] for name in ACTION_NAMES[:6]], start[:6], atol=1e-6)


def test_an_unsafe_jump_is_refused_latched_and_nothing_moves(twin_robot: AgenticUR5e) -> None:
    start = _state(twin_robot.get_observation())
    target = start.copy()
    target[1] += 1.0  # 1 rad of shoulder lift in one period: past the acceleration cap
    with pytest.raises(SafetyFaultError) as refused:
        twin_robot.send_action(_action(target))
    assert refused.value.fault.kind == FaultKind.TARGET_REJECTED
    assert twin_robot.env.safety_fault is not None
    with pytest.raises(SafetyFaultError):  # latched: later actions are refused too
        twin_robot.send_action(_action(start))
    np.testing.assert_allclose(twin_robot.env.robot.joint_positions(), start[:6], atol=2e-3)
    twin_robot.disconnect()  # and the robot still shuts down cleanly
    assert not twin_robot.is_connected


def test_malformed_actions_are_refused_before_anything_moves(twin_robot: AgenticUR5e) -> None:
    start = _state(twin_robot.get_observation())
    bad = start.copy()
    bad[2] = math.nan
    with pytest.raises(InvalidActionError, match="non-finite"):
        twin_robot.send_action(_action(bad))
    partial = _action(start)
    del partial["elbow.target"]
    with pytest.raises(InvalidActionError, match="missing elbow.target"):
        twin_robot.send_action(partial)
    assert twin_robot.env.safety_fault is None
    assert twin_robot.env.hardware.arm.commands == 0


def test_the_scripted_teleoperator_drives_the_twin_smoothly(twin_robot: AgenticUR5e) -> None:
    teleop = make_teleoperator_from_config(AgenticScriptedConfig(period_s=2.0))
    assert TeleoperatorConfig.get_choice_class("agentic_scripted") is AgenticScriptedConfig
    teleop.connect()
    first = teleop.get_action()
    np.testing.assert_allclose([first[n] for n in ACTION_NAMES[:6]], HOME_JOINT_POSITIONS)
    assert first["gripper_width.target"] == GRIPPER_WIDTH_RANGE[1]
    for _ in range(20):  # half a swing: the largest speed, within every safety cap
        twin_robot.send_action(teleop.get_action())
    teleop.disconnect()
    assert twin_robot.env.safety_fault is None
    moved = _state(twin_robot.get_observation())
    assert moved[5] - HOME_JOINT_POSITIONS[5] > 0.25  # wrist 3 swung out by ~0.3 rad
    assert moved[6] < 0.05  # the gripper closed towards 0.03 m


def test_configuration_errors_say_what_to_set(tmp_path: Any) -> None:
    with pytest.raises(InvalidConfigError, match="robot_host and gripper_port"):
        AgenticUR5eConfig()
    with pytest.raises(InvalidConfigError, match="twin on a hardware robot"):
        twin_config(twin=False, robot_host="ur", gripper_port="/dev/null",
                    cameras={**twin_config().cameras,
                             "shoulder": AgenticKinectCameraConfig(twin=True)})
    with pytest.raises(InvalidConfigError, match="RGB only"):
        twin_config(cameras={**twin_config().cameras,
                             "shoulder": AgenticKinectCameraConfig(use_depth=True)})
    with pytest.raises(InvalidConfigError, match="shoulder, wrist"):
        twin_config(cameras={"front": AgenticKinectCameraConfig()})
    hardware = make_robot_from_config(AgenticUR5eConfig(
        robot_host="192.0.2.1", gripper_port="/dev/null",
        calibration_file=tmp_path / "calibration.json"))
    assert not hardware.is_calibrated
    for connect in (hardware.connect, lambda: hardware.connect(calibrate=False),
                    hardware.calibrate):
        with pytest.raises(CalibrationMissingError, match="agentic-env calibrate --camera"):
            connect()
    assert not hardware.is_connected
