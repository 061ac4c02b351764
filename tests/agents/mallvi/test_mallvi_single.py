"""MALLVI's single-agent baseline runs open loop from the first image, and keeps track of what
its own moves did: an object a move set down is where the hand put it, its first points leave
what it stood on, and it joins what it was set down on or in."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest

from agentic_env.agents.mallvi.single import SUPPORT_CLEARANCE, FirstView
from agentic_env.agents.models.base import ModelQuery
from agentic_env.agents.skills import Detection, Target
from agentic_env.agents.skills.holding import HeldObject
from agentic_env.contract.actions import top_down_pose
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.runner import run_episode
from agentic_env.oracle import SimOracle

#: A stacking layout whose green cube stands on the purple one: the plan puts it on the
#: table, the yellow cube on the purple one, then the green cube on the yellow one.
TOWER_SEED = 4400
#: Half the edge of the task's cubes, m.
HALF_CUBE = 0.02


@pytest.fixture
def tower() -> Iterator[SimEnv]:
    env = SimEnv("stacking", realism="ideal")
    env.reset(seed=TOWER_SEED)
    yield env
    env.close()


def planned_pixels(env: SimEnv) -> dict[str, Detection]:
    """Each object of the sim-oracle's single-agent plan as it points at it in the first
    image (pick and place ends alike)."""
    height, width = env.observe()["shoulder_rgb"].shape[:2]
    query = ModelQuery("single_agent", "single_agent", "",
                       fields={"image_size": [height, width]})
    plan = json.loads(SimOracle(env).complete(query).text)["plan"]
    seen = {}
    for move in plan:
        for end, point, box in (("source", "pick_point", "pick_box"),
                                ("destination", "place_point", "place_box")):
            if move[point] is not None:
                seen[move[end]] = Detection(tuple(move[point]), tuple(move[box]))
    return seen


def pick(view: FirstView, target: Target) -> np.ndarray:
    """Tell ``view`` the hand took ``target`` (a cube) 1 cm below the top of its points, as
    the hand measures a cube; the grasp pose."""
    points = target.cloud.points
    grasp = top_down_pose(np.r_[points[:, :2].mean(axis=0), points[:, 2].max() - 0.01], 0.3)
    view.picked(target, grasp, HeldObject(target.name, 2 * HALF_CUBE - 0.01, 0.029))
    return grasp


def test_a_set_down_object_is_where_the_hand_put_it_and_leaves_its_support(
        tower: SimEnv) -> None:
    view, seen = FirstView(tower.observe()), planned_pixels(tower)
    green = view.target("green-cube-1", seen["green-cube-1"], whole=False)
    under = view.target("purple-cube-1", seen["purple-cube-1"], whole=True)
    assert green is not None and under is not None
    green_bottom = tower.scene_state.body_position("green-cube-1")[2] - HALF_CUBE
    assert under.cloud.points[:, 2].max() > green_bottom + 0.01  # the touching cube's side

    grasp = pick(view, green)
    taken = view.moved["green-cube-1"]
    assert len(taken) > 0.5 * len(green.cloud)
    assert taken.points[:, 2].min() >= green_bottom + SUPPORT_CLEARANCE - 1e-9
    assert view.target("green-cube-1", seen["green-cube-1"], whole=False) is None  # in hand
    release = top_down_pose(grasp[:3, 3] + [0.0, 0.12, -0.04], 0.3 + np.pi / 2)
    view.set_down("green-cube-1", grasp, release, None)

    moved = view.target("green-cube-1", seen["green-cube-1"], whole=False)
    assert moved is not None and moved.detection.box is None  # its first box is stale
    motion = release @ np.linalg.inv(grasp)
    np.testing.assert_allclose(moved.cloud.points,
                               taken.points @ motion[:3, :3].T + motion[:3, 3], atol=1e-9)
    # the purple cube under it in the first image is bare now: its top is its own
    bare = view.target("purple-cube-1", seen["purple-cube-1"], whole=True)
    assert bare is not None
    assert bare.cloud.points[:, 2].max() < green_bottom + 0.005


def test_what_a_move_set_down_on_an_object_becomes_part_of_it(tower: SimEnv) -> None:
    view, seen = FirstView(tower.observe()), planned_pixels(tower)
    yellow = view.target("yellow-cube-1", seen["yellow-cube-1"], whole=False)
    purple = view.target("purple-cube-1", seen["purple-cube-1"], whole=True)
    assert yellow is not None and purple is not None
    grasp = pick(view, yellow)
    on_top = tower.scene_state.body_position("purple-cube-1") + [0.0, 0.0, 3 * HALF_CUBE]
    view.set_down("yellow-cube-1", grasp, top_down_pose(on_top, 0.3), "purple-cube-1")

    stacked = view.target("purple-cube-1", seen["purple-cube-1"], whole=True)
    placed = view.target("yellow-cube-1", None, whole=False)
    assert stacked is not None and placed is not None
    assert len(stacked.cloud) == len(purple.cloud) + len(placed.cloud)
    assert stacked.cloud.points[:, 2].max() == placed.cloud.points[:, 2].max()
    assert placed.cloud.points[:, 2].max() > purple.cloud.points[:, 2].max() + 0.01
    pick(view, placed)  # taken off again
    again = view.target("purple-cube-1", seen["purple-cube-1"], whole=True)
    assert again is not None and len(again.cloud) == len(purple.cloud)


@pytest.mark.slow
def test_the_perfect_single_agent_follows_its_own_moves() -> None:
    # the green cube is picked again where the first move put it, and goes onto the yellow
    # cube where the second move put that (from the first image alone: 2 of 6 cubes stacked)
    result = run_episode(EpisodeSpec("stacking", seed=TOWER_SEED, agent="mallvi",
                                     agent_options=(("single_agent", True),),
                                     realism="ideal"), video=False)
    assert result.success, result.failure_detail
    assert {c.module for c in result.calls} == {"single_agent"}
