"""``AgenticEnv/Tabletop-v0``'s success check: the vectorised check over body ids looked up at
reset gives the answer of the plain rule (named bodies, one cube at a time) everywhere, also
after the bin moves within an episode.

Cubes are put at a pose with ``set_free_body_pose`` and ``mj_forward`` (no physics), so each
case tests the geometry rule alone.
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np
import pytest

from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.sim.state import SceneState
from agentic_env.tasks.tabletop import TabletopTask

SMALL = SceneConfig(shoulder_camera=azure_kinect_color(64, 36),
                    wrist_camera=realsense_d405(64, 36))


def _plain_rule(task: TabletopTask, scene: SceneState) -> list[bool]:
    """The success rule written out by name, cube by cube."""
    answers = []
    for cube in task.cubes:
        relative = scene.body_position(cube.name) - scene.body_position(task.config.bin.name)
        half_x, half_y = task.config.bin.inner_size
        answers.append(bool(abs(relative[0]) <= half_x and abs(relative[1]) <= half_y
                            and 0.0 < relative[2] < task.config.bin.wall_height))
    return answers


@pytest.fixture
def env(make_sim_env: Callable[..., SimEnv]) -> SimEnv:
    env = make_sim_env(task="tabletop", scene=SMALL)
    env.reset(seed=3)
    return env


def test_check_matches_the_plain_rule_inside_outside_and_on_every_edge(env: SimEnv) -> None:
    task, scene = env.task, env.scene_state
    assert isinstance(task, TabletopTask)
    half_x, half_y = task.config.bin.inner_size
    height = task.config.bin.wall_height
    offsets = [(0.0, 0.0, 0.02), (half_x, 0.0, 0.02), (half_x + 1e-4, 0.0, 0.02),
               (0.0, -half_y, 0.02), (0.0, -half_y - 1e-4, 0.02), (0.0, 0.0, height + 1e-4),
               (0.0, 0.0, -1e-4), (0.3, 0.3, 0.02), (-half_x, half_y, height - 1e-4)]
    seen = set()
    for start in range(len(offsets)):
        floor = task.bin_floor(scene)
        for index, cube in enumerate(task.cubes):
            offset = np.asarray(offsets[(start + index) % len(offsets)])
            scene.set_free_body_pose(cube.name, floor + offset, 0.0)
        mujoco.mj_forward(env.model, env.data)
        expected = _plain_rule(task, scene)
        evaluation = task.evaluate(scene)
        assert [task.cube_in_bin(scene, cube) for cube in task.cubes] == expected
        assert list(evaluation.terms.values()) == [float(flag) for flag in expected]
        assert evaluation.success == all(expected)
        seen.update(expected)
    assert seen == {True, False}


def test_check_follows_the_bin_when_it_moves_within_an_episode(env: SimEnv) -> None:
    task, scene = env.task, env.scene_state
    assert isinstance(task, TabletopTask)
    floor = task.bin_floor(scene)
    for cube in task.cubes:
        scene.set_free_body_pose(cube.name, floor + [0.0, 0.0, 0.02], 0.0)
    mujoco.mj_forward(env.model, env.data)
    assert task.evaluate(scene).success
    env.model.body(task.config.bin.name).pos[:2] += 0.3  # e.g. a fixture-shift disturbance
    mujoco.mj_forward(env.model, env.data)
    assert np.allclose(task.bin_floor(scene), floor + [0.3, 0.3, 0.0])
    assert _plain_rule(task, scene) == [False] * len(task.cubes)
    assert task.evaluate(scene).progress == 0.0
