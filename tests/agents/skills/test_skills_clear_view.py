"""Clearing the shoulder camera's view of one target: in the kitchen's variant B the spice
bottle stands in the open drawer, raised, where the hand at home hides its top from the
shoulder camera while hiding almost nothing of the table. Parking is chosen by what it
shows of that target (the rays through its box), not of the whole workspace, so the arm
moves aside and the bottle is seen whole."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace

import numpy as np
import pytest

from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.agents.perception import target_cloud
from agentic_env.agents.runtime import Episode, Limits
from agentic_env.agents.runtime.detector import detect
from agentic_env.agents.skills import Detection, plan_grasps
from agentic_env.agents.skills.locate import (
    blocked_share,
    clear_view_pose,
    detection_rays,
    locate,
)
from agentic_env.agents.skills.scene import SceneView, at_home
from agentic_env.contract.actions import move_to
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.oracle import SimOracle
from agentic_env.tasks.kitchen.task import KitchenConfig, KitchenTask

BOTTLE = "spice-bottle-1"

DetectorFn = Callable[[Mapping[str, np.ndarray], str, str, str], "Detection | None"]


def _kitchen_b(realism: str) -> Iterator[tuple[SimEnv, DetectorFn]]:
    env = SimEnv(task=KitchenTask(replace(KitchenConfig(), variant="B")), realism=realism)
    env.reset(seed=0)
    oracle = SimOracle(env)
    models = ModuleContext(ModelRouter(oracle))

    def detector(obs: Mapping[str, np.ndarray], camera: str, name: str,
                 part: str) -> Detection | None:
        return detect(models, obs, camera, name, name.replace("-", " "), part)

    yield env, detector
    oracle.close()
    env.close()


@pytest.fixture
def ideal_kitchen() -> Iterator[tuple[SimEnv, DetectorFn]]:
    """Kitchen variant B (the bottle in the open drawer), seed 0, ideal world."""
    yield from _kitchen_b("ideal")


@pytest.fixture
def realistic_kitchen() -> Iterator[tuple[SimEnv, DetectorFn]]:
    """The same trial in the realistic world."""
    yield from _kitchen_b("realistic")


def test_parking_is_chosen_by_what_it_shows_of_the_target(
        ideal_kitchen: tuple[SimEnv, DetectorFn]) -> None:
    env, detector = ideal_kitchen
    robot = EnvRobotIO(env)
    obs = robot.observe()
    assert at_home(obs)
    seen = detector(obs, "shoulder", BOTTLE, "object")
    assert seen is not None and seen.box is not None
    workspace = robot.workspace
    covered = SceneView(obs).robot_share("shoulder", seen.box)
    assert covered > 0.1, covered  # the hand at home stands in front of the bottle's top
    # the whole workspace gains nothing from parking: only the target's rays tell
    assert clear_view_pose(obs, workspace) is None
    ends = detection_rays(obs, seen)
    assert ends is not None
    blocked_home = blocked_share(obs, obs["joint_positions"], ends)
    parking = clear_view_pose(obs, workspace, seen)
    assert parking is not None
    points_home = len(target_cloud(obs, "shoulder", seen.point, seen.box))
    obs, status = robot.act(move_to(parking))
    assert status["ok"], status
    assert blocked_share(obs, obs["joint_positions"], ends) < blocked_home
    parked = detector(obs, "shoulder", BOTTLE, "object")
    assert parked is not None and parked.box is not None
    assert SceneView(obs).robot_share("shoulder", parked.box) < covered
    assert len(target_cloud(obs, "shoulder", parked.point, parked.box)) > points_home


def test_locate_parks_the_arm_that_hides_the_target_in_the_realistic_world(
        realistic_kitchen: tuple[SimEnv, DetectorFn]) -> None:
    env, detector = realistic_kitchen
    io = Episode(EnvRobotIO(env), Limits())
    home_view = detector(io.obs, "shoulder", BOTTLE, "object")
    assert home_view is not None
    home_cloud = target_cloud(io.obs, "shoulder", home_view.point, home_view.box)
    result = locate(io, detector, BOTTLE)
    assert result.ok, result.message
    assert result.data["tried"] == ["the shoulder view",
                                    "the shoulder view with the arm parked aside"]
    target = result.data["target"]
    assert target.camera == "shoulder" and len(target.cloud) > len(home_cloud)
    # grasps planned in that view close across the bottle (4 cm wide), not on its edge
    candidates, _, _ = plan_grasps(io, target, 0.0, np.random.default_rng(0))
    truth = env.scene_state.body_position(BOTTLE)
    assert candidates
    assert np.linalg.norm(candidates[0].pose[:2, 3] - truth[:2]) < 0.01
