"""Every tool of every tool set called with valid arguments in a real scene (the sim, the
sim-oracle as the tools' perception), its result checked, plus the malformed cases."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest

from agentic_env.experts import expert_actions
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.tools.backends import open_episode
from agentic_env.harness.tools.episode import ToolEpisode
from agentic_env.oracle.tool_reference import primitive_call


@pytest.fixture
def alrm() -> Iterator[ToolEpisode]:
    episode = open_episode(EpisodeSpec(task="sorting", seed=3,
                                       realism="ideal"), "alrm", perception="sim-oracle")
    yield episode
    episode.close()


def test_compute_grasp_finds_a_grasp_of_every_object(alrm: ToolEpisode) -> None:
    objects = alrm.call("get_objects", {}).data["objects"]
    assert len(objects) == 4
    for name in objects:
        pose = alrm.call("get_pose", {"name": name})
        grasp = alrm.call("compute_grasp", {"name": name})
        assert grasp.ok, grasp.render()
        assert np.linalg.norm(np.subtract(grasp.data["position"][:2],
                                          pose.data["position"][:2])) < 0.03
        assert 0.0 < grasp.data["width"] <= 0.085 and abs(grasp.data["yaw"]) <= math.pi
        assert 0.0 < grasp.data["position"][2] < pose.data["position"][2] + 0.03
    assert alrm.call("compute_grasp", {"name": "orange"}).render() == (
        "NOT_FOUND: Object orange not found")
    assert alrm.call("compute_grasp", {}).code.value == "BAD_ARGS"
    assert alrm.context.actions == 0  # planning a grasp moves nothing


def test_every_alrm_tool_with_valid_arguments(alrm: ToolEpisode) -> None:
    objects = list(alrm.call("get_objects", {}).data["objects"])
    places = alrm.call("get_reference_names", {}).render()
    assert places == "OK: Reference names: white-bin, blue-bin, bowl, table"
    assert alrm.call("place", {"target": "bowl"}).code.value == "BLOCKED"  # holds nothing
    assert alrm.call("pick", {"name": "no-such-thing"}).code.value == "NOT_FOUND"
    picked = alrm.call("pick", {"name": objects[0]})
    assert picked.ok, picked.render()
    assert alrm.call("pick", {"name": objects[1]}).code.value == "BLOCKED"  # hand is full
    placed = alrm.call("place", {"target": "white-bin"})
    assert placed.ok and "white bin" in placed.render(), placed.render()
    assert alrm.call("move_to", {"x": 0.4, "y": 0.0, "z": 0.3}).ok
    assert alrm.call("move_to", {"x": 2.0, "y": 0.0, "z": 0.3}).code.value == "BAD_ARGS"
    tcp = alrm.io.observe()["tcp_pose"]
    assert np.allclose(tcp[:3], [0.4, 0.0, 0.3], atol=0.01)
    assert alrm.call("move_to_home_pos", {}).ok
    assert alrm.call("open_drawer", {"name": "bowl"}).render() == "NOT_FOUND: Drawer bowl not found"


def test_the_alrm_drawer_tools_open_and_close_the_kitchen_drawer() -> None:
    episode = open_episode(EpisodeSpec(task="kitchen", seed=2,
                                       realism="ideal"), "alrm", perception="sim-oracle")
    try:
        opened = episode.call("open_drawer", {"name": "top-drawer"})
        assert opened.ok, opened.render()
        closed = episode.call("close_drawer", {"name": "top-drawer"})
        assert closed.ok, closed.render()
    finally:
        episode.close()


def test_every_primitives_tool_with_valid_arguments() -> None:
    episode = open_episode(EpisodeSpec(task="sorting", seed=3, realism="ideal"))
    try:
        env = episode.judge.env
        pick, place = (primitive_call(action) for action, _ in zip(
            expert_actions(env.task, env.scene_state), range(2), strict=False))
        assert episode.call("get_instruction", {}).data["instruction"] == episode.instruction
        assert episode.call("get_robot_state", {}).ok
        for name in ("open_gripper", "close_gripper", "home"):
            assert episode.call(name, {}).ok, name
        assert episode.call(*pick).ok and episode.call(*place).ok
        assert episode.call("move_to", {"x": 0.4, "y": 0.0, "z": 0.3}).ok
        drawer = episode.call("open_drawer", {"x": 0.4, "y": 0.0, "z": 0.1})
        assert not drawer.ok and drawer.code.value != "BAD_ARGS"  # sorting has no drawer
        assert episode.call("close_drawer", {"x": 0.4, "y": 0.0, "z": 0.1}).code.value != (
            "BAD_ARGS")
        assert episode.call("pick", {"x": 0.4}).code.value == "BAD_ARGS"
        finished = episode.call("finish", {"success": False, "summary": "done testing"})
        assert finished.ok and episode.finished
        assert episode.call("home", {}).code.value == "BLOCKED"
    finally:
        episode.close()


def test_every_planner_tool_with_valid_arguments() -> None:
    episode = open_episode(EpisodeSpec(task="sorting", seed=3, realism="ideal"), "planner",
                           perception="sim-oracle")
    try:
        assert episode.call("reflect", {"text": "the lemon goes in a bin"}).ok
        assert episode.call("check_events", {}).render() == "OK: no events"
        seen = episode.call("act", {"action": "perceive", "params": ["table"]})
        assert seen.ok and "7 objects seen" in seen.render(), seen.render()
        snapshot = episode.call("get_state_snapshot", {}).render()
        assert snapshot.startswith("OK: time:") and "lemon" in snapshot
        for action, params in (("move_arm", ["observe"]), ("speak", ["hello"]),
                               ("listen", []), ("move_arm", ["home"])):
            result = episode.call("act", {"action": action, "params": params})
            assert result.ok, (action, result.render())
        assert episode.call("act", {"action": "fly", "params": []}).code.value == "BAD_ARGS"
    finally:
        episode.close()
