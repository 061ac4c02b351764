"""Physics outcomes of the primitives (agentic_env.primitives.executor) in the sim env.

Grasps use ground-truth object poses the way the tabletop expert does: a top-down grasp at the
object's centre, no lower than 8 mm of fingertip clearance above the table, yaw folded into
[-pi/4, pi/4]. Envs use tiny cameras so that rendering costs next to nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from support.single_object_task import BIN_NAME, OBJECT_NAME, SingleObjectTask

from agentic_env.contract.actions import (
    box_top_grasp_yaw,
    close_gripper,
    home,
    move_to,
    pick,
    place,
    pose_to_vector,
    top_down_pose,
)
from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.primitives.types import PrimitiveConfig
from agentic_env.robot.constants import GRIPPER_WIDTH_RANGE, TCP_TO_FINGERTIP
from agentic_env.robot.kinematics import pose_error

SMALL_SCENE = SceneConfig(
    shoulder_camera=azure_kinect_color(64, 36), wrist_camera=realsense_d405(64, 36)
)
CUBE_HALF = 0.02
CUBE_SIZE = (CUBE_HALF,) * 3
#: A stopped arm: every joint slower than this after a failed primitive, rad/s (a primitive
#: moves the joints at up to ~1 rad/s).
STOPPED_SPEED = 0.05
#: Lowest lift of a held object above its start after a pick (the pick lifts 12 cm), metres.
MIN_LIFT = 0.08


# -- fixtures and helpers ------------------------------------------------------------------


@pytest.fixture
def make_env(make_sim_env):
    """Factory of small-camera envs around a task (closed at teardown, see conftest.py)."""

    def factory(task: SingleObjectTask, **kwargs: Any) -> SimEnv:
        return make_sim_env(task=task, scene=SMALL_SCENE, **kwargs)

    return factory


@pytest.fixture(scope="module")
def cube_env():
    """One env with a 4 cm cube at (0.5, 0.0), shared by tests that reset it first."""
    env = SimEnv(task=SingleObjectTask("box", CUBE_SIZE, (0.5, 0.0)), scene=SMALL_SCENE,
                 realism="ideal")
    yield env
    env.close()


def object_position(env: SimEnv) -> np.ndarray:
    """Object centre, base frame, metres (privileged)."""
    return env.scene_state.body_position(OBJECT_NAME).copy()


def tcp_position(env: SimEnv) -> np.ndarray:
    """Measured TCP position, base frame, metres."""
    return env.robot.kinematics.forward(env.robot.joint_positions())[:3, 3]


def ground_truth_pick(env: SimEnv) -> tuple[np.ndarray, dict[str, Any]]:
    """Pick the object at its true pose like the tabletop expert; return (start centre, info)."""
    scene = env.scene_state
    start = object_position(env)
    grasp = start.copy()
    grasp[2] = max(grasp[2], TCP_TO_FINGERTIP + 0.008)
    yaw = box_top_grasp_yaw(scene.body_rotation(OBJECT_NAME))
    action = pick(top_down_pose(grasp, yaw), width=env.task.object.grasp_width)
    info = env.step(action)[4]
    return start, info


def hold(env: SimEnv, seconds: float) -> None:
    """Keep the current joint and gripper references for ``seconds`` of robot time."""
    robot = env.robot
    for _ in range(round(seconds / robot.control_dt)):
        robot.send(robot.joint_reference(), robot.gripper_reference())


def expect_failure(env: SimEnv, action: dict[str, Any], reason: str) -> dict[str, Any]:
    """Step ``action``; assert it failed with ``reason`` and a message, and left the arm
    stopped: joints slower than :data:`STOPPED_SPEED` after the step, and within 5 mrad of
    where they stopped while the references are held for another 0.5 s."""
    info = env.step(action)[4]
    outcome = info["primitive"]
    assert not outcome["ok"], outcome
    assert outcome["reason"] == reason, outcome
    assert outcome["message"], outcome
    speed = np.max(np.abs(env.robot.joint_velocities()))
    assert speed < STOPPED_SPEED, f"arm still moving at {speed:.3f} rad/s after {outcome}"
    q_stopped = env.robot.joint_positions()
    hold(env, 0.5)  # ... and it stays there (the failure left consistent servo references)
    drift = np.max(np.abs(env.robot.joint_positions() - q_stopped))
    assert drift < 0.005, f"arm drifted {drift:.4f} rad after {outcome}"
    return outcome


# -- picks ---------------------------------------------------------------------------------


def check_random_cube_picks(env: SimEnv, count: int, seed: int) -> None:
    """Pick a 4 cm cube at ``count`` random poses; every pick must lift it between the pads."""
    rng = np.random.default_rng(seed)
    failures = []
    for trial in range(count):
        xy = rng.uniform([0.35, -0.3], [0.65, 0.3])
        yaw = rng.uniform(-np.pi, np.pi)
        env.task.set_pose(xy, yaw)
        env.reset(seed=trial)
        start, info = ground_truth_pick(env)
        outcome = info["primitive"]
        centre = object_position(env)
        lift = centre[2] - start[2]
        width = env.robot.gripper_width()
        off_axis = np.linalg.norm(centre[:2] - tcp_position(env)[:2])
        if not (outcome["ok"] and lift >= MIN_LIFT and abs(width - 2 * CUBE_HALF) <= 0.003
                and off_axis < 0.005):
            failures.append(
                f"x={xy[0]:.3f} y={xy[1]:.3f} yaw={yaw:+.2f}: {outcome['reason'] or 'ok'} "
                f"{outcome['message']} lift={lift * 1000:.0f} mm width={width * 1000:.1f} mm "
                f"off-axis={off_axis * 1000:.1f} mm"
            )
    assert not failures, f"{len(failures)}/{count} cube picks failed:\n" + "\n".join(failures)


def test_pick_cubes_at_random_poses(make_env):
    """Ground-truth picks of a 4 cm cube at 10 random poses in x 0.35-0.65, y -0.3-0.3 m,
    any yaw: ok, lifted >= 8 cm, held between the pads (width reading within 3 mm of 40 mm,
    cube centre within 5 mm of the TCP axis)."""
    env = make_env(SingleObjectTask("box", CUBE_SIZE))
    check_random_cube_picks(env, count=10, seed=0)


@pytest.mark.slow
def test_pick_cubes_at_100_random_poses(make_env):
    """As :func:`test_pick_cubes_at_random_poses` with 100 other poses."""
    env = make_env(SingleObjectTask("box", CUBE_SIZE))
    check_random_cube_picks(env, count=100, seed=1)


@pytest.mark.parametrize(
    ("shape", "size", "xy"),
    [("cylinder", (0.025, 0.04), (0.5, 0.15)), ("sphere", (0.025,), (0.45, -0.15))],
    ids=["cylinder", "sphere"],
)
def test_round_object_stays_held(make_env, shape, size, xy):
    """An upright cylinder (r 2.5 cm, 8 cm tall) and a sphere (r 2.5 cm) are picked, carried
    20-30 cm sideways and held for 1 s without slipping; the fin-ray fingers visibly bend
    around the sphere (middle hinge > 0.01 rad, tip curled back by the -1.5x coupling)."""
    env = make_env(SingleObjectTask(shape, size, xy))
    env.reset(seed=0)
    start, info = ground_truth_pick(env)
    assert info["primitive"]["ok"], info["primitive"]
    assert object_position(env)[2] - start[2] >= MIN_LIFT

    carry = env.step(move_to(top_down_pose([0.45, -xy[1], 0.3], yaw=0.5)))[4]
    assert carry["primitive"]["ok"], carry["primitive"]
    hold(env, 1.0)

    centre = object_position(env)
    assert centre[2] - start[2] >= MIN_LIFT + 0.1, f"{shape} dropped: centre at {centre}"
    assert np.linalg.norm(centre[:2] - tcp_position(env)[:2]) < 0.005, "slid between the pads"
    assert env.robot.gripper_width() > env.primitive_config.min_grasp_width
    if shape == "sphere":
        for side in ("left", "right"):
            middle = float(env.data.joint(f"robot/gripper/{side}_fin").qpos[0])
            tip = float(env.data.joint(f"robot/gripper/{side}_fin_tip").qpos[0])
            assert middle > 0.01, f"{side} fin did not deflect: {middle:.4f} rad"
            assert tip == pytest.approx(-1.5 * middle, abs=0.005)


def test_place_accuracy(make_env):
    """Pick-and-place of a 4 cm cube to three table targets (TCP 1 cm above the resting
    height): the cube's centre ends within 1.5 cm of the target in x-y, resting on the table
    (centre height = half size +- 3 mm)."""
    env = make_env(SingleObjectTask("box", CUBE_SIZE, (0.45, 0.15), yaw=0.4))
    env.reset(seed=0)
    for target in ((0.55, -0.15), (0.38, 0.0), (0.62, 0.22)):
        info = ground_truth_pick(env)[1]
        assert info["primitive"]["ok"], info["primitive"]
        info = env.step(place(top_down_pose([*target, CUBE_HALF + 0.01], yaw=0.0)))[4]
        assert info["primitive"]["ok"], info["primitive"]
        centre = object_position(env)
        error = np.linalg.norm(centre[:2] - target)
        assert error <= 0.015, f"placed {error * 1000:.1f} mm from {target}"
        assert centre[2] == pytest.approx(CUBE_HALF, abs=0.003), f"not resting: {centre}"


# -- failures ------------------------------------------------------------------------------


def test_unreachable_position(cube_env):
    """A pose inside the workspace box but beyond the arm's reach: planning fails first."""
    env = cube_env
    env.reset(seed=0)
    goal = [0.9, 0.6, 0.0]
    assert env.primitive_config.workspace.contains(np.array(goal))
    q_before = env.robot.joint_positions()
    expect_failure(env, move_to(top_down_pose(goal)), "unreachable")
    np.testing.assert_allclose(env.robot.joint_positions(), q_before, atol=1e-3)


def test_unreachable_orientation(cube_env):
    """The TCP pointing back at the base at x = 0.85 m is out of reach, pointing down is not."""
    env = cube_env
    env.reset(seed=0)
    facing_base = np.eye(4)
    facing_base[:3, :3] = np.column_stack([[0, 0, 1], [0, 1, 0], [-1, 0, 0]])
    facing_base[:3, 3] = [0.85, 0.0, 0.2]
    q_before = env.robot.joint_positions()
    expect_failure(env, move_to(facing_base), "unreachable")
    np.testing.assert_allclose(env.robot.joint_positions(), q_before, atol=1e-3)
    info = env.step(move_to(top_down_pose(facing_base[:3, 3])))[4]
    assert info["primitive"]["ok"], info["primitive"]


def test_grasp_into_table_is_a_planned_collision(cube_env):
    """A grasp with the TCP at table height would put the fingertips 18 mm into the table:
    rejected while planning, before the arm moves."""
    env = cube_env
    env.reset(seed=0)
    q_before = env.robot.joint_positions()
    cube_before = object_position(env)
    outcome = expect_failure(
        env, pick(top_down_pose([*cube_before[:2], 0.0]), width=0.04), "collision"
    )
    assert "table" in outcome["message"]
    np.testing.assert_allclose(env.robot.joint_positions(), q_before, atol=1e-3)
    np.testing.assert_allclose(object_position(env), cube_before, atol=1e-3)


def test_timeout(make_env):
    """A 0.2 s primitive time limit stops a long move_to shortly after the limit."""
    env = make_env(SingleObjectTask("box", CUBE_SIZE), primitives=PrimitiveConfig(timeout=0.2))
    env.reset(seed=0)
    outcome = expect_failure(env, move_to(top_down_pose([0.5, 0.3, 0.1])), "timeout")
    assert 0.2 <= outcome["sim_duration"] < 0.4


def test_pick_at_empty_spot(cube_env):
    """Closing on nothing fails with nothing_grasped; the gripper reopens and backs off along
    the approach (to the pre-grasp pose 10 cm above)."""
    env = cube_env
    env.reset(seed=0)
    grasp = [0.5, 0.2, TCP_TO_FINGERTIP + 0.008]
    expect_failure(env, pick(top_down_pose(grasp), width=0.04), "nothing_grasped")
    assert env.robot.gripper_width() > 0.05
    np.testing.assert_allclose(
        tcp_position(env), np.add(grasp, [0, 0, env.primitive_config.approach_distance]),
        atol=0.005,
    )


def test_place_with_closed_empty_gripper(cube_env):
    """Place with the gripper closed on nothing fails before moving."""
    env = cube_env
    env.reset(seed=0)
    assert env.step(close_gripper())[4]["primitive"]["ok"]
    q_before = env.robot.joint_positions()
    expect_failure(env, place(top_down_pose([0.4, 0.2, 0.03])), "nothing_grasped")
    np.testing.assert_allclose(env.robot.joint_positions(), q_before, atol=1e-3)


def test_place_with_open_empty_gripper(cube_env):
    """Place right after reset (gripper open, nothing held) should fail with nothing_grasped."""
    env = cube_env
    env.reset(seed=0)
    expect_failure(env, place(top_down_pose([0.4, 0.2, 0.03])), "nothing_grasped")


def _nan_pose() -> dict[str, Any]:
    action = move_to(top_down_pose([0.5, 0.0, 0.2]))
    action["pose"][1] = np.nan
    return action


def _zero_quaternion() -> dict[str, Any]:
    action = move_to(top_down_pose([0.5, 0.0, 0.2]))
    action["pose"][3:] = 0.0
    return action


@pytest.mark.parametrize(
    ("make_action", "words"),
    [
        (_nan_pose, "finite"),
        (lambda: pick(top_down_pose([0.5, 0.0, 0.03]), width=0.2), "width"),
        (lambda: move_to(top_down_pose([1.2, 0.0, 0.2])), "workspace"),
        (lambda: pick(pose_to_vector(top_down_pose([0.5, 0.0, -0.05])), 0.04), "workspace"),
        (_zero_quaternion, "zero norm"),
    ],
    ids=["nan_pose", "width_0.2", "x_beyond_workspace", "z_below_workspace", "zero_quat"],
)
def test_invalid_parameters(cube_env, make_action, words):
    """Invalid values (not malformed structure) fail with invalid_parameters, arm untouched."""
    env = cube_env
    env.reset(seed=0)
    q_before = env.robot.joint_positions()
    outcome = expect_failure(env, make_action(), "invalid_parameters")
    assert words in outcome["message"]
    np.testing.assert_allclose(env.robot.joint_positions(), q_before, atol=1e-3)


def test_collision_during_motion(make_env):
    """A move_to whose straight path sweeps the fingers through a static bin wall (6 cm high)
    stops at the first contact with reason collision, naming the contact."""
    task = SingleObjectTask("box", CUBE_SIZE, (0.35, 0.25), bin_position=(0.5, -0.3))
    env = make_env(task)
    env.reset(seed=0)
    beside = env.step(move_to(top_down_pose([0.5, -0.1, 0.03])))[4]
    assert beside["primitive"]["ok"], beside["primitive"]
    outcome = expect_failure(env, move_to(top_down_pose([0.5, -0.3, 0.03])), "collision")
    assert "robot contact" in outcome["message"] and BIN_NAME in outcome["message"]
    wall_y = -0.3 + 0.12 + 0.008  # the wall's near face: inner half width + thickness
    assert tcp_position(env)[1] > wall_y, "the arm went on through the wall"


def test_a_primitive_stopped_by_a_contact_backs_out_of_it(make_env):
    """After the collision stop, the arm has backed out along the path it came (BACK_OUT_DISTANCE
    of TCP travel): it touches nothing, and the next primitives (back beside the wall, home)
    run instead of stopping at their first control period in the same contact."""
    task = SingleObjectTask("box", CUBE_SIZE, (0.35, 0.25), bin_position=(0.5, -0.3))
    env = make_env(task)
    env.reset(seed=0)
    assert env.step(move_to(top_down_pose([0.5, -0.1, 0.03])))[4]["primitive"]["ok"]
    expect_failure(env, move_to(top_down_pose([0.5, -0.3, 0.03])), "collision")
    assert env.robot.unexpected_contact() is None
    wall_y = -0.3 + 0.12 + 0.008
    assert tcp_position(env)[1] > wall_y + 0.015, "it did not back away from the wall"
    for action in (move_to(top_down_pose([0.5, -0.1, 0.03])), home()):
        info = env.step(action)[4]
        assert info["primitive"]["ok"], info["primitive"]


# -- rollouts ------------------------------------------------------------------------------


@pytest.mark.parametrize("control_hz", [20.0, 50.0])
def test_rollout_is_recorded_and_replays(make_env, control_hz):
    """A pick's rollout has one joint target per control period (sim_duration x control_hz,
    +-2); replaying the joint and gripper targets in joint_position mode from the same seed
    reproduces the final TCP pose within 2 mm / 0.01 rad (and lifts the cube again)."""
    task_args = ("box", CUBE_SIZE, (0.55, 0.1), 0.3)
    env = make_env(SingleObjectTask(*task_args), control_hz=control_hz, record_rollouts=True)
    env.reset(seed=3)
    start, info = ground_truth_pick(env)
    assert info["primitive"]["ok"], info["primitive"]
    rollout = info["rollout"]
    periods = info["primitive"]["sim_duration"] * control_hz
    assert abs(len(rollout.joint_targets) - periods) <= 2
    assert len(rollout.gripper_targets) == len(rollout.joint_targets)
    assert len(rollout.ee_delta_actions) == len(rollout.joint_targets)
    assert min(rollout.gripper_targets) == GRIPPER_WIDTH_RANGE[0]  # it closed on the cube
    picked_tcp = env.robot.kinematics.forward(env.robot.joint_positions())

    replay = make_env(
        SingleObjectTask(*task_args), control_hz=control_hz, control_mode="joint_position"
    )
    replay.reset(seed=3)
    for joint_target, width_target in zip(
        rollout.joint_targets, rollout.gripper_targets, strict=True
    ):
        replay.step(np.array([*joint_target, width_target], dtype=np.float32))
    replayed_tcp = replay.robot.kinematics.forward(replay.robot.joint_positions())
    position_error, rotation_error = pose_error(replayed_tcp, picked_tcp)
    assert position_error < 0.002 and rotation_error < 0.01
    assert object_position(replay)[2] - start[2] >= MIN_LIFT
