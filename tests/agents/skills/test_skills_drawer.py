"""Skills around an open drawer, against a cabinet scene built for them: a place into the
drawer carries the object over the drawer's front without pushing it shut, the table under
the pulled-out drawer is never taken for a free spot, and the primitives' geometry that makes
this work (crossing at the pre-pose's height, a compliant touch-down, corridor approaches)."""

from __future__ import annotations

from collections.abc import Iterator

import mujoco
import numpy as np
import pytest
from support.cabinet_task import BOX_NAME, CABINET_NAME, CabinetTask

from agentic_env.agents.perception import PointCloud, target_cloud
from agentic_env.agents.runtime import Episode, Limits
from agentic_env.agents.skills import Detection, place_in
from agentic_env.agents.skills.clearance import approach_over, column_seen_free
from agentic_env.agents.skills.holding import HeldObject
from agentic_env.agents.skills.locate import Target
from agentic_env.agents.skills.scene import SceneView
from agentic_env.contract.actions import (
    home,
    move_to,
    pick,
    place,
    top_down_pose,
    vector_to_pose,
)
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.primitives.paths import transit_poses
from agentic_env.sim.cabinet import drawer_interior, drawer_opening, inside_drawer

#: How far the drawer is pulled out in these scenes, metres.
OPENING = 0.2


@pytest.fixture(scope="module")
def env() -> Iterator[SimEnv]:
    task = CabinetTask(front=(0.62, 0.25), box_position=(0.45, -0.2))
    task.set_layout((0.62, 0.25), 0.0, (0.45, -0.2), opening=OPENING)
    env = SimEnv(task=task, realism="ideal")
    yield env
    env.close()


def _box(env: SimEnv) -> np.ndarray:
    return env.scene_state.body_position(BOX_NAME).copy()


def _interior(env: SimEnv) -> tuple[np.ndarray, np.ndarray]:
    """Centre (3,) and half extents (3,) of the drawer's inner volume (privileged)."""
    pose, half = drawer_interior(env.model, env.data, CABINET_NAME, env.scene_state.base_pos)
    return pose[:3, 3], half


def _pick_box(env: SimEnv) -> None:
    """Grasp the box 1.5 cm above its centre (its bottom hangs 3.5 cm below the TCP)."""
    grasp = _box(env) + np.array([0.0, 0.0, 0.015])
    status = env.step(pick(top_down_pose(grasp, 0.0), 0.04, 0.1))[4]["primitive"]
    assert status["ok"], status


def _floor_detection(env: SimEnv) -> Detection:
    """The box around the drawer's visible floor in the shoulder image, as a detector would
    draw it (from the privileged segmentation)."""
    floor = mujoco.mj_name2id(env.model, mujoco.mjtObj.mjOBJ_GEOM, f"{CABINET_NAME}_drawer_floor")
    rows, cols = np.nonzero(env.segmentation("shoulder") == floor)
    u0, v0, u1, v1 = int(cols.min()), int(rows.min()), int(cols.max()) + 1, int(rows.max()) + 1
    return Detection(((u0 + u1) // 2, (v0 + v1) // 2), (u0, v0, u1, v1))


def test_a_place_into_the_open_drawer_carries_the_object_over_its_front(env: SimEnv) -> None:
    env.reset(seed=0)
    _pick_box(env)
    env.step(home())  # out of the shoulder camera's view, as locating the drawer would
    io = Episode(EnvRobotIO(env), Limits())
    detection = _floor_detection(env)
    target = Target("drawer", "interior", "shoulder", detection, PointCloud.empty())
    result = place_in(io, HeldObject(BOX_NAME, 0.035, 0.028), target, why="into the drawer")
    assert result.ok, result.message
    assert inside_drawer(env.model, env.data, CABINET_NAME, _box(env),
                         env.scene_state.base_pos)
    # crossing at the height the drawer's front asks for: the drawer was not pushed shut
    assert drawer_opening(env.model, env.data, CABINET_NAME) == pytest.approx(OPENING, abs=0.01)


def test_the_table_under_the_pulled_out_drawer_is_not_seen_free(env: SimEnv) -> None:
    env.reset(seed=0)
    view = SceneView(EnvRobotIO(env).observe())
    centre, _half = _interior(env)
    assert not column_seen_free(view.seen_free, centre[:2], 0.03)
    assert column_seen_free(view.seen_free, np.array([0.45, -0.05]), 0.03)


def test_a_place_that_meets_its_support_early_releases_there(env: SimEnv) -> None:
    env.reset(seed=0)
    _pick_box(env)
    spot = np.array([0.45, -0.05])
    # the box's bottom would be 1.2 cm under the table: the arm stalls there and releases
    low = top_down_pose(np.array([*spot, 0.036 - 0.012]), 0.0)
    status = env.step(place(low, 0.1))[4]["primitive"]
    assert status["ok"], status
    assert _box(env)[:2] == pytest.approx(spot, abs=0.01)
    assert abs(_box(env)[2] - 0.02) < 0.005  # resting on the table
    _pick_box(env)
    # 1 cm further down is beyond the touch-down allowance: refused or blocked, not released
    too_low = top_down_pose(np.array([*spot, 0.036 - 0.022]), 0.0)
    assert not env.step(place(too_low, 0.1))[4]["primitive"]["ok"]


def test_the_crossing_rises_first_to_the_pre_pose_height() -> None:
    start = top_down_pose(np.array([0.3, 0.3, 0.2]), 0.0)
    goal = top_down_pose(np.array([0.5, -0.2, 0.4]), 0.0)
    via = transit_poses(start, goal, height=0.25)
    assert [pose[2, 3] for pose in via] == pytest.approx([0.4, 0.4])
    assert via[0][:2, 3] == pytest.approx(start[:2, 3])  # straight up, then across
    low_goal = top_down_pose(np.array([0.5, -0.2, 0.05]), 0.0)
    assert [pose[2, 3] for pose in transit_poses(start, low_goal, 0.25)] == pytest.approx(
        [0.25, 0.25, 0.05])


def test_the_approach_clears_what_stands_along_the_way() -> None:
    # a 0.3 m tall wall halfway between the hand and a goal on the table
    wall = np.column_stack([np.full(50, 0.5), np.linspace(-0.1, 0.1, 50),
                            np.linspace(0.0, 0.3, 50)])
    scene = PointCloud(wall, np.zeros((50, 3), np.uint8), np.zeros((50, 2), np.int64))
    goal = np.array([0.7, 0.0])
    assert approach_over(scene, goal, 0.05) == 0.0  # nothing near the goal itself
    approach = approach_over(scene, goal, 0.05, hanging=0.03, start=np.array([0.3, 0.0]))
    assert 0.05 + approach >= 0.3 + 0.03


def test_the_kitchen_keeps_clutter_out_of_the_arms_room_at_the_drawer() -> None:
    env = SimEnv(task="kitchen", setting="kitchen", realism="ideal")
    try:
        env.reset(seed=0)
        task = env.task
        rects = np.array(task.dressing_keepout)
        behind = task._retreat_xy() + 0.1 * (task._retreat_xy() - task.cabinet_origin()[:2]) / (
            np.linalg.norm(task._retreat_xy() - task.cabinet_origin()[:2]))
        inside = ((rects[:, 0] <= behind[0]) & (behind[0] <= rects[:, 1])
                  & (rects[:, 2] <= behind[1]) & (behind[1] <= rects[:, 3]))
        assert inside.any()
    finally:
        env.close()


def test_the_arm_is_not_clear_where_its_links_would_meet_the_drawer(env: SimEnv) -> None:
    env.reset(seed=0)
    robot = EnvRobotIO(env)
    obs = robot.observe()
    view = SceneView(obs)
    yaw = float(np.arctan2(*vector_to_pose(obs["tcp_pose"])[1::-1, 0]))
    by_the_front = top_down_pose(np.array([0.4, 0.25, 0.15]), yaw)
    open_table = top_down_pose(np.array([0.3, 0.15, 0.05]), yaw)
    assert not view.arm_clear(by_the_front) and view.arm_clear(open_table)
    assert not robot.act(move_to(by_the_front))[1]["ok"]  # the physics agrees
    env.reset(seed=0)
    assert robot.act(move_to(open_table))[1]["ok"]


def test_a_drawer_place_ignores_what_the_box_shows_beneath_the_drawer(env: SimEnv) -> None:
    env.reset(seed=0)
    _pick_box(env)
    env.step(home())
    io = Episode(EnvRobotIO(env), Limits())
    detection = _floor_detection(env)
    u0, v0, u1, v1 = detection.box
    # a loose box that also takes in the cabinet and table below the drawer's front
    loose = Detection(detection.point, (u0, v0, u1, v1 + 60))
    floor = target_cloud(io.obs, "shoulder", detection.point, detection.box)
    target = Target("drawer", "interior", "shoulder", loose, floor)
    result = place_in(io, HeldObject(BOX_NAME, 0.035, 0.028), target, why="into the drawer")
    assert result.ok, result.message
    assert inside_drawer(env.model, env.data, CABINET_NAME, _box(env),
                         env.scene_state.base_pos)


def test_going_home_from_in_front_of_the_open_drawer_leaves_it_open(env: SimEnv) -> None:
    # the hand as an opening stroke leaves it: pointing into the cabinet, jaws vertical,
    # backed off in front of the handle; the way home must not sweep the drawer shut
    env.reset(seed=0)
    handle = env.data.site("cabinet_handle").xpos - env.scene_state.base_pos
    pose = np.eye(4)
    pose[:3, :3] = np.column_stack([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    pose[:3, 3] = handle - np.array([0.1, 0.0, 0.0])
    status = env.step(move_to(pose))[4]["primitive"]
    assert status["ok"], status
    status = env.step(home())[4]["primitive"]
    assert status["ok"], status
    assert drawer_opening(env.model, env.data, CABINET_NAME) == pytest.approx(OPENING, abs=0.01)
