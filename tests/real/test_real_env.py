"""RealEnv on the MuJoCo twins: the sim's spaces, primitives and observations through the
real code path (native frames, resizing, intrinsics, calibration, safety gate, serial
gripper), and fault injection — every fault latched, reported and the arm stopped."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("serial")

from agentic_env.contract.actions import (  # noqa: E402
    close_gripper,
    home,
    move_to,
    pick,
    top_down_pose,
)
from agentic_env.contract.spaces import CONTROL_MODES, Workspace  # noqa: E402
from agentic_env.envs.sim_env import SimEnv  # noqa: E402
from agentic_env.experts import expert_actions
from agentic_env.real.frames import adjust_intrinsics, crop_box  # noqa: E402
from agentic_env.real.real_env import RealEnv, describe_action  # noqa: E402
from agentic_env.real.safety import SafetyConfig, SafetyFaultError  # noqa: E402
from agentic_env.real.twin import Twin, make_twin_env  # noqa: E402
from agentic_env.real.twin.camera import REALSENSE_D405_848  # noqa: E402

FAR_POSE = top_down_pose([0.55, 0.25, 0.25])
NEAR_POSE = top_down_pose([0.45, -0.05, 0.22])


def arm_speed(twin: Twin) -> float:
    return float(np.max(np.abs(twin.world.env.robot.joint_velocities())))


def assert_fault(info: dict[str, Any], terminated: bool, kind: str, twin: Twin) -> None:
    assert terminated
    assert info["safety_fault"] is not None and info["safety_fault"]["kind"] == kind, info
    assert arm_speed(twin) < 0.02, "the arm was not stopped"


@pytest.mark.parametrize("control_mode", CONTROL_MODES)
def test_spaces_equal_the_sim_env(control_mode: str) -> None:
    sim = SimEnv(control_mode=control_mode, realism="ideal")
    real, _ = make_twin_env(control_mode=control_mode)
    try:
        assert real.observation_space == sim.observation_space
        assert real.action_space == sim.action_space
    finally:
        real.close()
        sim.close()


def test_passes_gymnasiums_passive_checks(twin_env) -> None:
    """The API checks that apply to a real robot (``check_env``'s determinism checks do not:
    the robot clock moves on)."""
    import warnings

    from gymnasium.utils.passive_env_checker import (
        check_action_space,
        check_observation_space,
        env_reset_passive_checker,
        env_step_passive_checker,
    )
    from support.envs import EXPECTED_CHECKER_ADVICE

    env, _ = twin_env
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for pattern in EXPECTED_CHECKER_ADVICE:
            warnings.filterwarnings("ignore", message=pattern, category=UserWarning)
        check_observation_space(env.observation_space)
        check_action_space(env.action_space)
        env_reset_passive_checker(env, seed=3)
        env_step_passive_checker(env, move_to(NEAR_POSE))
    assert env.render() is None


def test_the_twin_hands_the_real_env_the_calibration_its_world_solves(twin_env) -> None:
    """In the (default) realistic world the sim draws a calibration error per episode; the
    ``RealEnv`` on its twin is given that solved calibration, so both observe the same
    extrinsics (not the exact poses, which no calibration session finds)."""
    env, twin = twin_env
    assert twin.world.env.world is not None  # the realistic world
    obs, sim = env.observe(), twin.world.env.observe()
    for key in ("shoulder_extrinsics", "wrist_extrinsics"):
        np.testing.assert_allclose(obs[key], sim[key], atol=1e-5, err_msg=key)
    exact = twin.world.true_calibration().shoulder_to_base
    assert not np.allclose(obs["shoulder_extrinsics"], exact, atol=1e-5)


def test_observation_matches_the_sim_through_the_real_pipeline() -> None:
    """The real pipeline (crop, resize, undistortion, depth alignment) sees what the sim
    renders: compared in the ideal world, whose frames are noise-free (in the realistic
    world each camera path would draw its own sensor noise)."""
    real, twin = make_twin_env(seed=0, realism="ideal")
    with real:
        real.reset()
        _compare_with_the_sim(real, twin)


def _compare_with_the_sim(env: RealEnv, twin: Twin) -> None:
    obs = env.observe()
    assert env.observation_space.contains(obs)
    sim = twin.world.env.observe()
    for key in ("joint_positions", "tcp_pose", "gripper_width", "shoulder_extrinsics",
                "wrist_extrinsics", "shoulder_intrinsics"):
        np.testing.assert_allclose(obs[key], sim[key], atol=1e-5, err_msg=key)
    # the D405's 848x480 is cropped to 16:9 (848x477) then resized: intrinsics follow
    native_k = twin.cameras["wrist"]._renderer.config.intrinsics
    box = crop_box(REALSENSE_D405_848.width, REALSENSE_D405_848.height, 640, 360)
    assert box == (0, 1, 848, 478)
    np.testing.assert_allclose(obs["wrist_intrinsics"], adjust_intrinsics(native_k, box, 640, 360),
                               rtol=1e-6)
    for cam in ("shoulder", "wrist"):
        real_depth, sim_depth = obs[f"{cam}_depth"], sim[f"{cam}_depth"]
        both = (real_depth > 0) & (sim_depth > 0)
        assert both.mean() > 0.5
        assert np.median(np.abs(real_depth - sim_depth)[both]) < 0.003
        difference = np.abs(obs[f"{cam}_rgb"].astype(int) - sim[f"{cam}_rgb"].astype(int))
        assert difference.mean() < 3.0


def test_intrinsics_project_points_to_the_same_place_after_crop_and_resize() -> None:
    k = np.array([[600.0, 0, 424.0], [0, 600.0, 240.0], [0, 0, 1]])
    box = crop_box(848, 480, 640, 360)
    adjusted = adjust_intrinsics(k, box, 640, 360)
    point = np.array([0.1, -0.05, 0.4])
    native = (k @ point)[:2] / point[2]
    fitted = (adjusted @ point)[:2] / point[2]
    scale = 640 / (box[2] - box[0])
    np.testing.assert_allclose(fitted, (native - box[:2]) * scale, rtol=1e-9)


def test_primitives_report_like_the_sim(twin_env) -> None:
    env, twin = twin_env
    sim = SimEnv(realism="ideal")
    try:
        sim.reset(seed=0)
        for action in (move_to(top_down_pose([0.9, 0.6, 0.05])), close_gripper(),
                       pick(top_down_pose([0.6, -0.3, 0.02]), width=0.04), move_to(NEAR_POSE)):
            real_info = env.step(action)[4]["primitive"]
            sim_info = sim.step(action)[4]["primitive"]
            assert real_info.keys() == sim_info.keys()
            assert (real_info["ok"], real_info["reason"]) == (sim_info["ok"], sim_info["reason"])
    finally:
        sim.close()
    assert env.safety_fault is None
    tcp = env.observe()["tcp_pose"][:3]
    np.testing.assert_allclose(tcp, NEAR_POSE[:3, 3], atol=0.003)


def test_protective_stop_mid_motion_latches_until_unlocked(twin_env) -> None:
    env, twin = twin_env
    twin.arm.protective_stop_after(5)
    obs, reward, terminated, truncated, info = env.step(move_to(FAR_POSE))
    assert_fault(info, terminated, "protective_stop", twin)
    assert info["primitive"]["reason"] == "safety_fault" and not info["primitive"]["ok"]
    assert env.observation_space.contains(obs)
    clock = twin.world.time
    _, _, terminated, _, info = env.step(home())  # nothing moves while latched
    assert terminated and info["safety_fault"]["kind"] == "protective_stop"
    assert twin.world.time == clock
    with pytest.raises(SafetyFaultError, match="latched"):
        env.reset()
    with pytest.raises(SafetyFaultError, match="still reports"):
        env.clear_fault()  # never cleared while the controller is protective-stopped
    twin.arm.unlock_protective_stop()
    env.clear_fault()
    env.reset()
    assert env.step(move_to(NEAR_POSE))[4]["primitive"]["ok"]


def test_dropped_frames_are_a_stale_frame_fault(twin_env) -> None:
    env, twin = twin_env
    env.step(move_to(NEAR_POSE))
    twin.cameras["wrist"].drop_frames(5)
    obs, _, terminated, _, info = env.step(move_to(FAR_POSE))
    assert_fault(info, terminated, "stale_frame", twin)
    assert "wrist camera" in info["safety_fault"]["message"]
    assert not obs["wrist_rgb"].any() and not obs["wrist_depth"].any()


def test_stalled_camera_times_out_into_a_fault(twin_env) -> None:
    env, twin = twin_env
    twin.cameras["shoulder"].stall()
    _, _, terminated, _, info = env.step(move_to(NEAR_POSE))
    assert_fault(info, terminated, "stale_frame", twin)


def test_disconnect_mid_motion_stops_and_closes_cleanly(twin_env) -> None:
    env, twin = twin_env
    twin.arm.drop_connection_after(4)
    _, _, terminated, _, info = env.step(move_to(FAR_POSE))
    assert_fault(info, terminated, "connection_lost", twin)
    env.close()  # exit path with the link down: no exception
    assert not env.connected


def test_refused_target_is_a_command_rejected_fault(twin_env) -> None:
    env, twin = twin_env
    twin.arm.reject_next_command("target pose unreachable")
    _, _, terminated, _, info = env.step(move_to(FAR_POSE))
    assert_fault(info, terminated, "command_rejected", twin)
    assert "unreachable" in info["safety_fault"]["message"]


def test_unreachable_primitive_target_fails_without_a_fault(twin_env) -> None:
    env, twin = twin_env
    before = twin.world.env.robot.joint_positions()
    info = env.step(move_to(top_down_pose([0.94, 0.64, 0.02])))[4]
    assert info["primitive"]["reason"] == "unreachable" and info["safety_fault"] is None
    np.testing.assert_allclose(twin.world.env.robot.joint_positions(), before, atol=1e-3)


def test_target_outside_the_safety_box_is_refused_before_sending() -> None:
    box = Workspace(low=(0.05, -0.8, 0.15), high=(1.0, 0.8, 1.0))
    env, twin = make_twin_env(safety=SafetyConfig(workspace=box))
    with env:
        env.reset()
        _, _, terminated, _, info = env.step(move_to(top_down_pose([0.45, 0.0, 0.05])))
        assert_fault(info, terminated, "target_rejected", twin)
        assert "safety box" in info["safety_fault"]["message"]
        tcp = env.kinematics.forward(twin.world.env.robot.joint_positions())[:3, 3]
        assert tcp[2] >= 0.15 - 0.01


def test_primitive_speeds_must_fit_the_safety_caps() -> None:
    from agentic_env.errors import InvalidConfigError

    with pytest.raises(InvalidConfigError, match="safety caps"):
        make_twin_env(safety=SafetyConfig(max_joint_speed=1.0))


def test_joint_position_jump_is_rate_limited_and_gated() -> None:
    env, twin = make_twin_env(control_mode="joint_position",
                              safety=SafetyConfig(max_joint_acceleration=20.0))
    with env:
        obs, _ = env.reset()
        target = np.concatenate([obs["joint_positions"], obs["gripper_width"]])
        target[0] += 1.0
        _, _, terminated, _, info = env.step(target)
        assert_fault(info, terminated, "target_rejected", twin)
        assert "acceleration" in info["safety_fault"]["message"]


def test_joint_position_jump_is_rate_limited_to_the_configured_speed_cap() -> None:
    """A lower ``max_joint_speed`` is what the rate limiter follows, so the gate (which checks
    the same cap) never refuses a target the limiter produced."""
    env, twin = make_twin_env(control_mode="joint_position",
                              safety=SafetyConfig(max_joint_speed=1.9))
    with env:
        obs, _ = env.reset()
        start = obs["joint_positions"].copy()
        target = np.concatenate([start, obs["gripper_width"]])
        target[0] += 1.0
        _, _, terminated, _, info = env.step(target)
        assert not terminated and info.get("safety_fault") is None
        moved = env.robot.joint_reference()[0] - start[0]
        assert moved == pytest.approx(1.9 * env.robot.control_dt, rel=1e-6)


def test_gripper_link_loss_is_a_fault(twin_env) -> None:
    env, twin = twin_env
    emulator_close = env.hardware.closers[0]
    emulator_close()  # the controller end of the pty goes away
    _, _, terminated, _, info = env.step(close_gripper())
    assert_fault(info, terminated, "gripper", twin)


def test_watchdog_catches_an_emergency_stop_between_steps(twin_env) -> None:
    env, twin = twin_env
    twin.arm.emergency_stop()
    env._watchdog.poll()  # the thread polls every watchdog_period; poll once deterministically
    clock = twin.world.time
    _, _, terminated, _, info = env.step(move_to(NEAR_POSE))
    # latched and reported, but an e-stop refuses motion instead of ending the episode
    assert info["safety_fault"]["kind"] == "emergency_stop"
    assert not terminated and info["primitive"]["reason"] == "estop"
    assert twin.world.time == clock


def test_confirm_each_step_can_decline() -> None:
    asked: list[str] = []
    env, twin = make_twin_env(confirm=lambda text: asked.append(text) or False)
    with env:
        env.reset()
        clock = twin.world.time
        _, _, terminated, truncated, info = env.step(move_to(NEAR_POSE))
        assert asked == [describe_action(move_to(NEAR_POSE))] and "move_to at (45.0" in asked[0]
        assert info["operator_declined"] and truncated and not terminated
        assert info["primitive"]["reason"] == "operator_declined"
        assert twin.world.time == clock


def test_exceptions_inside_with_still_disconnect() -> None:
    env, twin = make_twin_env()
    with pytest.raises(RuntimeError, match="agent crashed"), env:
        env.reset()
        raise RuntimeError("agent crashed")
    assert not env.connected and not twin.arm._connected


def test_scripted_expert_completes_the_task_through_the_real_path() -> None:
    """End to end: every primitive through RealRobot, the safety gate and the serial
    gripper; the task is scored from the twin's world (the harness's privilege)."""
    env, twin = make_twin_env(seed=0)
    world = twin.world.env
    with env:
        env.reset()
        for action in expert_actions(world.task, world.scene_state):
            obs, _, terminated, truncated, info = env.step(action)
            assert info["primitive"]["ok"], info["primitive"]
            assert env.observation_space.contains(obs)
            if world.task.evaluate(world.scene_state).success:
                break
        assert world.task.evaluate(world.scene_state).success
        assert env.safety_fault is None


def test_driving_into_the_table_trips_the_twins_protective_stop() -> None:
    loose = SafetyConfig(max_joint_acceleration=500.0, max_tcp_speed=10.0)
    env, twin = make_twin_env(control_mode="joint_position", safety=loose)
    with env:
        obs, _ = env.reset()
        into_table = top_down_pose([0.45, 0.3, 0.005])  # fingertips 13 mm into the table
        solution = env.kinematics.solve(into_table, obs["joint_positions"].astype(float))
        action = np.append(solution.q, 0.0).astype(np.float32)
        for _ in range(60):
            _, _, terminated, _, info = env.step(action)
            if terminated:
                break
        assert_fault(info, terminated, "protective_stop", twin)


def test_twin_blocking_moves_and_refusals(twin_env) -> None:
    from agentic_env.real.drivers.base import CommandRejectedError
    from agentic_env.real.twin.arm import pose_vector

    _, twin = twin_env
    goal = top_down_pose([0.5, 0.1, 0.3])
    twin.arm.move_linear(pose_vector(goal), 0.25, 1.0)
    state = twin.arm.read_state()
    np.testing.assert_allclose(state.tcp_pose[:3], goal[:3, 3], atol=0.003)
    start = state.joint_positions
    twin.arm.move_joint(start + [0.2, 0, 0, 0, 0, 0], 1.0, 2.0)
    np.testing.assert_allclose(twin.arm.read_state().joint_positions[0], start[0] + 0.2,
                               atol=0.01)
    with pytest.raises(CommandRejectedError, match="moveL refused"):
        twin.arm.move_linear(pose_vector(top_down_pose([2.0, 0.0, 0.3])), 0.25, 1.0)


def test_observations_are_undistorted_with_the_coefficients_the_camera_reports(
        twin_env, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentic_env.geometry.distortion import undistort
    from agentic_env.real.twin.camera import TwinCamera

    env, _ = twin_env
    pinhole = env.observe()
    lens = np.array([0.08, -0.05, 0.0, 0.0, 0.02])
    monkeypatch.setattr(TwinCamera, "distortion", property(lambda self: lens))
    seen = env.observe()
    for cam in ("shoulder", "wrist"):
        k = pinhole[f"{cam}_intrinsics"]
        np.testing.assert_array_equal(seen[f"{cam}_intrinsics"], k)
        np.testing.assert_array_equal(seen[f"{cam}_rgb"],
                                      undistort(pinhole[f"{cam}_rgb"], k, lens, nearest=False))
        np.testing.assert_array_equal(seen[f"{cam}_depth"],
                                      undistort(pinhole[f"{cam}_depth"], k, lens, nearest=True))
        assert not np.array_equal(seen[f"{cam}_rgb"], pinhole[f"{cam}_rgb"])
