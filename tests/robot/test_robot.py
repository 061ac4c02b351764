"""The UR5e model against its published data, the IK solver, and the joint/gripper servos."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import mujoco
import numpy as np
import pytest

from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.robot.constants import (
    ARM_JOINTS,
    GRIPPER_SPEED_LIMIT,
    GRIPPER_WIDTH_RANGE,
    HOME_JOINT_POSITIONS,
    TCP_SITE,
)
from agentic_env.robot.kinematics import ArmKinematics, pose_error
from agentic_env.robot.model import robot_spec

# Universal Robots' published UR5e DH parameters (metres, radians).
DH_D = np.array([0.1625, 0.0, 0.0, 0.1333, 0.0997, 0.0996])
DH_A = np.array([0.0, -0.425, -0.3922, 0.0, 0.0, 0.0])
DH_ALPHA = np.array([np.pi / 2, 0.0, 0.0, np.pi / 2, -np.pi / 2, 0.0])
# Published link masses (kg), shoulder_link .. wrist_3_link.
LINK_MASSES = {
    "shoulder_link": 3.761,
    "upper_arm_link": 8.058,
    "forearm_link": 2.846,
    "wrist_1_link": 1.37,
    "wrist_2_link": 1.3,
    "wrist_3_link": 0.365,
}


def dh_flange_pose(q: np.ndarray) -> np.ndarray:
    """Flange pose (4x4) in the base frame: product of Rz(q) Tz(d) Tx(a) Rx(alpha)."""
    pose = np.eye(4)
    for theta, d, a, alpha in zip(q, DH_D, DH_A, DH_ALPHA, strict=True):
        ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
        pose = pose @ np.array(
            [
                [ct, -st * ca, st * sa, a * ct],
                [st, ct * ca, -ct * sa, a * st],
                [0.0, sa, ca, d],
                [0.0, 0.0, 0.0, 1.0],
            ]
        )
    return pose


def rotation_angle(r1: np.ndarray, r2: np.ndarray) -> float:
    """Angle (rad) between two rotations, accurate near zero (unlike arccos of the trace)."""
    return float(2.0 * np.arcsin(min(1.0, np.linalg.norm(r1 - r2) / (2.0 * np.sqrt(2.0)))))


def site_pose(model: mujoco.MjModel, data: mujoco.MjData, site: str) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3] = data.site(site).xmat.reshape(3, 3)
    pose[:3, 3] = data.site(site).xpos
    return pose


@pytest.fixture(scope="module")
def robot_model() -> mujoco.MjModel:
    return robot_spec().compile()


@pytest.fixture(scope="module")
def kinematics() -> ArmKinematics:
    return ArmKinematics()


# -- model data -------------------------------------------------------------------------------


def test_forward_kinematics_equals_dh_model(robot_model: mujoco.MjModel) -> None:
    data = mujoco.MjData(robot_model)
    qpos_adr = [robot_model.joint(name).qposadr[0] for name in ARM_JOINTS]
    lower = np.array([robot_model.joint(name).range[0] for name in ARM_JOINTS])
    upper = np.array([robot_model.joint(name).range[1] for name in ARM_JOINTS])
    rng = np.random.default_rng(20240601)
    for _ in range(20):
        q = rng.uniform(lower, upper)
        data.qpos[qpos_adr] = q
        mujoco.mj_kinematics(robot_model, data)
        actual = site_pose(robot_model, data, "attachment_site")
        expected = dh_flange_pose(q)
        np.testing.assert_allclose(actual[:3, 3], expected[:3, 3], rtol=0, atol=1e-6,
                                   err_msg=f"flange position at q={q.tolist()}")
        angle = rotation_angle(actual[:3, :3], expected[:3, :3])
        assert angle < 1e-6, f"flange orientation off by {angle:.2e} rad at q={q.tolist()}"


def test_link_masses_are_the_published_ones(robot_model: mujoco.MjModel) -> None:
    masses = {name: float(robot_model.body(name).mass[0]) for name in LINK_MASSES}
    assert masses == pytest.approx(LINK_MASSES, abs=1e-9)


def test_joint_ranges_are_ur5e_limits(robot_model: mujoco.MjModel) -> None:
    ranges = np.array([robot_model.joint(name).range for name in ARM_JOINTS])
    expected = np.array([2 * np.pi, 2 * np.pi, np.pi, 2 * np.pi, 2 * np.pi, 2 * np.pi])
    np.testing.assert_allclose(ranges[:, 1], expected, atol=1e-4)
    np.testing.assert_allclose(ranges[:, 0], -expected, atol=1e-4)


# -- inverse kinematics -----------------------------------------------------------------------


def test_ik_reaches_random_reachable_targets(
    kinematics: ArmKinematics, robot_model: mujoco.MjModel
) -> None:
    rng = np.random.default_rng(7)
    # The full robot model (compliant gripper included) checks the rigid model IK solves on.
    data = mujoco.MjData(robot_model)
    qpos_adr = [robot_model.joint(name).qposadr[0] for name in ARM_JOINTS]
    for _ in range(20):
        q_true = HOME_JOINT_POSITIONS + rng.uniform(-0.4, 0.4, size=6)
        target = kinematics.forward(q_true)
        solution = kinematics.solve(target, HOME_JOINT_POSITIONS)
        assert solution.converged, (solution.position_error, solution.rotation_error)
        assert np.all(solution.q >= kinematics.lower) and np.all(solution.q <= kinematics.upper)
        data.qpos[qpos_adr] = solution.q
        mujoco.mj_kinematics(robot_model, data)
        reached = site_pose(robot_model, data, TCP_SITE)
        position_error, rotation_error = pose_error(reached, target)
        assert position_error < 2e-4, f"{position_error * 1000:.3f} mm from {target[:3, 3]}"
        assert rotation_error < 2e-3, f"{rotation_error * 1000:.3f} mrad"
        assert solution.position_error == pytest.approx(position_error, abs=1e-9)


def test_ik_reports_unreachable_target(kinematics: ArmKinematics) -> None:
    target = kinematics.forward(HOME_JOINT_POSITIONS)
    target[:3, 3] += [2.0, 0.0, 0.0]  # 2 m further out: beyond the 0.85 m reach
    solution = kinematics.solve(target, HOME_JOINT_POSITIONS)
    assert not solution.converged
    assert solution.position_error > 1.0


# -- servos, through the env in joint_position mode ---------------------------------------------


@pytest.fixture(scope="module")
def joint_env() -> Iterator[SimEnv]:
    # Small images: these tests are about the servos, not the cameras.
    scene = SceneConfig.at_resolution(64, 36)
    env = SimEnv(control_mode="joint_position", scene=scene, realism="ideal")
    yield env
    env.close()


@dataclass(frozen=True)
class StepResponse:
    """Response of one joint to a step of its target, sampled at every physics step."""

    joint: int
    start: np.ndarray  # (6,) joint positions when the step was commanded
    target: np.ndarray  # (6,) commanded joint targets
    times: np.ndarray  # (N,) seconds since the step was commanded
    trace: np.ndarray  # (N, 6) joint positions after each physics step
    final_observation: dict[str, np.ndarray]


STEP = 0.3  # rad
STEP_DURATION = 1.5  # s


def run_step_response(env: SimEnv, joint: int) -> StepResponse:
    env.reset(seed=0)
    start = env.robot.joint_positions()
    target = start.copy()
    target[joint] += STEP
    action = np.concatenate([target, [GRIPPER_WIDTH_RANGE[1]]]).astype(np.float32)
    target = action[:6].astype(float)  # what the env actually receives
    trace: list[np.ndarray] = []
    arm_qpos = env.robot.idx.arm_qpos
    single_step = mujoco.mj_step

    def recording_step(model: mujoco.MjModel, data: mujoco.MjData, nstep: int = 1) -> None:
        for _ in range(nstep):
            single_step(model, data)
            trace.append(data.qpos[arm_qpos].copy())

    observation: dict[str, np.ndarray] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mujoco, "mj_step", recording_step)
        for _ in range(round(STEP_DURATION / env.robot.control_dt)):
            observation, *_ = env.step(action)
    times = np.arange(1, len(trace) + 1) * env.model.opt.timestep
    return StepResponse(joint, start, target, times, np.array(trace), observation)


@pytest.fixture(scope="module", params=["shoulder_lift_joint", "elbow_joint", "wrist_1_joint"])
def step_response(request: pytest.FixtureRequest, joint_env: SimEnv) -> StepResponse:
    return run_step_response(joint_env, ARM_JOINTS.index(request.param))


def test_step_response_settles_within_1_mrad(step_response: StepResponse) -> None:
    r = step_response
    assert r.times[-1] == pytest.approx(STEP_DURATION)
    error = np.abs(r.trace - r.target)
    settled = r.times >= 1.0
    assert error[settled, r.joint].max() < 1e-3
    # every joint, the stepped one and the held ones, ends on its target
    assert error[-1].max() < 1e-3
    observed = r.final_observation["joint_positions"]
    np.testing.assert_allclose(observed, r.target, atol=1e-3)


def test_step_response_overshoot_below_2_percent(step_response: StepResponse) -> None:
    r = step_response
    progress = (r.trace[:, r.joint] - r.start[r.joint]) / STEP
    overshoot = progress.max() - 1.0
    assert overshoot <= 0.02, f"overshoot {overshoot:.1%} of the step"


def test_gravity_hold_at_home(joint_env: SimEnv) -> None:
    observation, _ = joint_env.reset(seed=1)
    start_tcp = observation["tcp_pose"][:3].astype(float)
    home_tcp = joint_env.robot.kinematics.forward(HOME_JOINT_POSITIONS)[:3, 3]
    action = np.concatenate([HOME_JOINT_POSITIONS, [GRIPPER_WIDTH_RANGE[1]]])
    steps = round(2.0 / joint_env.robot.control_dt)
    drift = 0.0
    for _ in range(steps):
        observation, *_ = joint_env.step(action)
        drift = max(drift, float(np.linalg.norm(observation["tcp_pose"][:3] - start_tcp)))
    assert drift < 5e-4, f"TCP drifted {drift * 1000:.3f} mm in 2 s"
    assert np.linalg.norm(observation["tcp_pose"][:3] - home_tcp) < 5e-4


def test_gripper_closes_and_opens_within_speed_limit(joint_env: SimEnv) -> None:
    observation, _ = joint_env.reset(seed=2)
    assert observation["gripper_width"][0] == pytest.approx(GRIPPER_WIDTH_RANGE[1], abs=1e-3)
    dt = joint_env.robot.control_dt
    max_change = GRIPPER_SPEED_LIMIT * dt + 1e-5  # float32 readings
    steps = round(1.5 / dt)  # a full stroke takes 0.85 s
    for width in (GRIPPER_WIDTH_RANGE[0], GRIPPER_WIDTH_RANGE[1]):
        action = np.concatenate([HOME_JOINT_POSITIONS, [width]])
        readings = [float(observation["gripper_width"][0])]
        for _ in range(steps):
            observation, *_ = joint_env.step(action)
            readings.append(float(observation["gripper_width"][0]))
        changes = np.abs(np.diff(readings))
        assert changes.max() <= max_change, f"{changes.max() / dt:.4f} m/s"
        assert changes.max() > 0.9 * GRIPPER_SPEED_LIMIT * dt  # it does move at full speed
        assert readings[-1] == pytest.approx(width, abs=5e-4 if width == 0.0 else 1e-3)
        # the raw servo reading agrees with the observation
        assert joint_env.robot.gripper_width() == pytest.approx(width, abs=1e-3)
