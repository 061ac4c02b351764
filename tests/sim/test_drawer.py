"""The kitchen cabinet (agentic_env.sim.cabinet) and the open_drawer / close_drawer primitives.

Handle poses are the ground truth of :func:`agentic_env.sim.cabinet.handle_pose`, as a scripted
expert would use them. Envs use tiny cameras so that rendering costs next to nothing.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from support.cabinet_task import BOX_NAME, CABINET_NAME, CabinetTask

from agentic_env.contract.actions import (
    close_drawer,
    move_to,
    open_drawer,
    pick,
    place,
    top_down_pose,
)
from agentic_env.contract.spaces import PRIMITIVES
from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.geometry.rotations import exp_rotation
from agentic_env.robot.constants import TCP_TO_FINGERTIP
from agentic_env.sim.cabinet import (
    CabinetSpec,
    drawer_interior,
    drawer_interior_pose,
    drawer_opening,
    handle_pose,
    inside_drawer,
)

SMALL_SCENE = SceneConfig(
    shoulder_camera=azure_kinect_color(64, 36), wrist_camera=realsense_d405(64, 36)
)
#: An arm slower than this after a failed primitive counts as stopped, rad/s.
STOPPED_SPEED = 0.05
#: Tolerance of the opening reached by open_drawer, metres.
OPEN_TOLERANCE = 0.02
#: A drawer closer than this counts as closed, metres.
CLOSED = 0.01


@pytest.fixture(scope="module")
def env():
    """One env with the cabinet in its default layout, shared by tests that reset it first."""
    env = SimEnv(task=CabinetTask(), scene=SMALL_SCENE, realism="ideal")
    yield env
    env.close()


def opening(env: SimEnv) -> float:
    """How far the drawer is open, metres (privileged)."""
    return drawer_opening(env.model, env.data, CABINET_NAME)


def handle(env: SimEnv) -> np.ndarray:
    """The handle's TCP grasp pose in the base frame (privileged)."""
    return handle_pose(env.model, env.data, CABINET_NAME, env.scene_state.base_pos)


def step_ok(env: SimEnv, action: dict[str, Any]) -> dict[str, Any]:
    """Step ``action`` and assert that the primitive succeeded; return its outcome."""
    outcome = env.step(action)[4]["primitive"]
    assert outcome["ok"], outcome
    return outcome


def box_position(env: SimEnv) -> np.ndarray:
    """The box's centre, base frame, metres (privileged)."""
    return env.scene_state.body_position(BOX_NAME).copy()


# -- the cabinet -----------------------------------------------------------------------------


def test_cabinet_names_and_handle_frame(env):
    """The slide, handle site and interior exist; the grasp frame's z points into the cabinet
    (+x at yaw 0), its y (closing axis) up; a released drawer stays where it is left."""
    env.reset(seed=0)
    pose = handle(env)
    np.testing.assert_allclose(pose[:3, 2], [1, 0, 0], atol=1e-9)
    np.testing.assert_allclose(pose[:3, 1], [0, 0, 1], atol=1e-9)
    spec = env.task.cabinet
    front = env.task.front
    np.testing.assert_allclose(pose[:3, 3], [front[0] - spec.handle_standoff, front[1],
                                             spec.slot_centre_height], atol=1e-9)
    assert opening(env) == pytest.approx(0.0, abs=1e-4)
    _, half = drawer_interior(env.model, env.data, CABINET_NAME, env.scene_state.base_pos)
    np.testing.assert_allclose(2 * half, spec.drawer_inner_size)


def test_invalid_cabinet_is_rejected():
    with pytest.raises(InvalidConfigError, match="fit"):
        CabinetSpec(drawer_inner_size=(0.24, 0.6, 0.07))


def test_drawer_primitives_are_appended():
    """The drawer primitives come last, so the ids of the older primitives keep their values."""
    assert PRIMITIVES[:4] == ("home", "move_to", "pick", "place")
    assert PRIMITIVES[-2:] == ("open_drawer", "close_drawer")


# -- open / close ----------------------------------------------------------------------------


@pytest.mark.parametrize("distance", [0.12, 0.0], ids=["12cm", "default_20cm"])
def test_open_and_close(env, distance):
    """open_drawer pulls the drawer out by the distance (0 = 0.2 m) +-2 cm and stays there;
    close_drawer pushes it back in to < 1 cm."""
    env.reset(seed=0)
    step_ok(env, open_drawer(handle(env), distance))
    wanted = distance or env.primitive_config.drawer_distance
    assert opening(env) == pytest.approx(wanted, abs=OPEN_TOLERANCE)
    assert env.robot.gripper_width() > 0.08, "the gripper let go of the handle"
    step_ok(env, close_drawer(handle(env), wanted))
    assert opening(env) < CLOSED


@pytest.mark.parametrize(
    ("offset", "rotation"),
    [((0.0, 0.025, 0.0), (0.0, 0.0, 0.0)), ((0.02, -0.015, 0.01), (0.1, -0.1, 0.1))],
    ids=["2.5cm_high", "off_and_tilted"],
)
def test_inexact_handle_pose(env, offset, rotation):
    """Grasp poses off the bar's centre (offset in the handle frame, m; rotation vector, rad)
    still open the drawer by 15 cm +-2 cm and close it: the stroke complies sideways."""
    env.reset(seed=0)

    def off_pose() -> np.ndarray:
        pose = handle(env)
        moved = pose.copy()
        moved[:3, 3] += pose[:3, :3] @ np.asarray(offset)
        moved[:3, :3] = pose[:3, :3] @ exp_rotation(np.asarray(rotation))
        return moved

    step_ok(env, open_drawer(off_pose(), 0.15))
    assert opening(env) == pytest.approx(0.15, abs=OPEN_TOLERANCE)
    step_ok(env, close_drawer(off_pose(), 0.15))
    assert opening(env) < CLOSED


def test_close_stops_at_the_closed_end(env):
    """Pushing 20 cm a drawer open 10 cm stops, successfully, where the drawer closes."""
    env.reset(seed=0)
    step_ok(env, open_drawer(handle(env), 0.1))
    outcome = step_ok(env, close_drawer(handle(env), 0.2))
    assert opening(env) < CLOSED
    assert outcome["sim_duration"] < env.primitive_config.timeout


def test_place_in_open_drawer_moves_with_it(env):
    """A 4 cm box picked from the table and placed in the open drawer lands inside the drawer
    volume, and travels with the drawer when it is closed."""
    env.reset(seed=0)
    step_ok(env, open_drawer(handle(env), 0.2))
    start = box_position(env)
    grasp = start.copy()
    grasp[2] = max(grasp[2], TCP_TO_FINGERTIP + 0.008)
    half = env.task.box.half_height
    step_ok(env, pick(top_down_pose(grasp), width=2 * half))
    scene = env.scene_state
    target = drawer_interior_pose(env.model, env.data, CABINET_NAME, scene.base_pos, half + 0.01)
    # lift high first: a straight line from the pick to the pre-place pose would drag the box
    # through the cabinet's side and the drawer wall
    step_ok(env, move_to(top_down_pose([*start[:2], 0.38])))
    step_ok(env, place(target, approach_distance=0.15))
    placed = box_position(env)
    assert inside_drawer(env.model, env.data, CABINET_NAME, placed, scene.base_pos)
    drawer_before = scene.body_position(f"{CABINET_NAME}_drawer").copy()

    step_ok(env, close_drawer(handle(env), opening(env)))
    assert opening(env) < CLOSED
    closed = box_position(env)
    assert inside_drawer(env.model, env.data, CABINET_NAME, closed, scene.base_pos)
    drawer_shift = scene.body_position(f"{CABINET_NAME}_drawer") - drawer_before
    np.testing.assert_allclose(closed - placed, drawer_shift, atol=0.01)


def check_random_layouts(env: SimEnv, count: int, seed: int) -> None:
    """Open then close the drawer of a cabinet at ``count`` random layouts."""
    rng = np.random.default_rng(seed)
    failures = []
    for trial in range(count):
        front = rng.uniform([0.58, 0.2], [0.65, 0.3])
        yaw = rng.uniform(-0.3, 0.05)
        distance = rng.uniform(0.08, 0.21)
        env.task.set_layout(front, yaw)
        env.reset(seed=trial)
        opened = env.step(open_drawer(handle(env), distance))[4]["primitive"]
        reached = opening(env)
        closed = env.step(close_drawer(handle(env), distance))[4]["primitive"]
        if not (opened["ok"] and closed["ok"] and abs(reached - distance) <= OPEN_TOLERANCE
                and opening(env) < CLOSED):
            failures.append(
                f"front={np.round(front, 3).tolist()} yaw={yaw:+.2f} distance={distance:.3f}: "
                f"open {opened['reason'] or 'ok'} {opened['message']} -> {reached:.3f} m, "
                f"close {closed['reason'] or 'ok'} {closed['message']} -> {opening(env):.3f} m"
            )
    assert not failures, f"{len(failures)}/{count} layouts failed:\n" + "\n".join(failures)


def test_random_layouts(make_sim_env):
    """Open by 8-21 cm and close again at 10 random layouts: the front's centre at x 0.58-0.65,
    y 0.2-0.3 m, yaw -0.3..0.05 rad."""
    check_random_layouts(make_sim_env(task=CabinetTask(), scene=SMALL_SCENE), 10, seed=0)


@pytest.mark.slow
def test_random_layouts_100(make_sim_env):
    """As :func:`test_random_layouts` with 100 other layouts."""
    check_random_layouts(make_sim_env(task=CabinetTask(), scene=SMALL_SCENE), 100, seed=1)


# -- failures --------------------------------------------------------------------------------


def expect_failure(env: SimEnv, action: dict[str, Any], reason: str) -> dict[str, Any]:
    """Step ``action``; assert it failed with ``reason`` and a message, arm stopped."""
    outcome = env.step(action)[4]["primitive"]
    assert not outcome["ok"], outcome
    assert outcome["reason"] == reason, outcome
    assert outcome["message"], outcome
    speed = np.max(np.abs(env.robot.joint_velocities()))
    assert speed < STOPPED_SPEED, f"arm still moving at {speed:.3f} rad/s after {outcome}"
    return outcome


def test_open_beside_the_handle_grasps_nothing(env):
    """open_drawer 10 cm beside the handle (along the bar) closes on nothing: nothing_grasped,
    the gripper reopens and backs off, the drawer stays shut."""
    env.reset(seed=0)
    off = handle(env)
    off[:3, 3] += 0.1 * off[:3, 0]
    expect_failure(env, open_drawer(off, 0.2), "nothing_grasped")
    assert env.robot.gripper_width() > 0.08
    assert opening(env) < 0.002
    tcp = env.robot.kinematics.forward(env.robot.joint_positions())[:3, 3]
    back = off[:3, 3] - env.primitive_config.approach_distance * off[:3, 2]
    np.testing.assert_allclose(tcp, back, atol=0.005)


def test_open_blocked_drawer_times_out(env):
    """A drawer that cannot move (its slide limited to 2 mm) makes open_drawer fail with
    timeout, saying how far the handle came; the gripper lets go."""
    env.reset(seed=0)
    joint = env.model.joint(f"{CABINET_NAME}_drawer_slide").id
    travel = env.model.jnt_range[joint].copy()
    env.model.jnt_range[joint] = [0.0, 0.002]
    try:
        outcome = expect_failure(env, open_drawer(handle(env), 0.2), "timeout")
    finally:
        env.model.jnt_range[joint] = travel
    assert "blocked" in outcome["message"]
    assert env.robot.gripper_width() > 0.08


def test_check_env(make_sim_env):
    """Gymnasium's env checker passes with the grown primitive action space (random actions
    include drawer primitives)."""
    sim = make_sim_env(task=CabinetTask(), scene=SMALL_SCENE)
    assert sim.action_space["primitive"].n == len(PRIMITIVES)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for pattern in (r".*A Box observation space (minimum|maximum) value is -?infinity",
                        r".*For Box action spaces, we recommend using a symmetric"):
            warnings.filterwarnings("ignore", message=pattern, category=UserWarning)
        check_env(sim, skip_render_check=True)
