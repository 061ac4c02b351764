"""Place skills report ``BLOCKED``, without moving, when the goal is occupied."""

from __future__ import annotations

import numpy as np
import pytest

from agentic_env.agents.runtime import Episode, Limits
from agentic_env.agents.skills import SkillCode, place_at
from agentic_env.agents.skills.grounding import HeldObject
from agentic_env.agents.skills.result import SkillResult
from agentic_env.agents.skills.scene import SceneView, at_home
from agentic_env.contract.actions import move_to, top_down_pose
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.robot_io import EnvRobotIO


@pytest.fixture
def io(sorting_env: SimEnv) -> Episode:
    return Episode(EnvRobotIO(sorting_env), Limits())


def test_a_place_on_an_occupied_spot_is_blocked(sorting_env: SimEnv, io: Episode) -> None:
    obstacles = SceneView(io.obs).obstacles().points
    inside = np.all((obstacles[:, :2] > (0.3, -0.4)) & (obstacles[:, :2] < (0.75, 0.4)), axis=1)
    occupied = obstacles[inside][np.argmax(obstacles[inside, 2])]  # the top of something
    result = place_at(io, HeldObject("cube", 0.03, 0.03), occupied)
    assert result.code is SkillCode.BLOCKED and "where cube would go" in result.message
    outside = place_at(io, HeldObject("cube", 0.03, 0.03), np.array([-0.6, -0.8]))
    assert outside.code is SkillCode.BAD_ARGS and "outside the workspace" in outside.message
    assert io.report.actions == 0


def test_a_table_without_room_for_the_held_object_is_blocked(io: Episode) -> None:
    result = place_at(io, HeldObject("tray", 0.03, 0.6))
    assert result.code is SkillCode.BLOCKED and not result.ok
    assert result.message == "no free spot on the table is visible" and io.report.actions == 0


def test_with_the_arm_in_the_view_the_table_is_looked_at_again_from_home(
        io: Episode) -> None:
    io.act(move_to(top_down_pose(np.array([0.5, 0.0, 0.15]), 0.0)), "hover over the table")
    result = place_at(io, HeldObject("tray", 0.03, 0.6))  # fits nowhere, seen or not
    assert result.code is SkillCode.BLOCKED
    assert io.report.actions == 2 and at_home(io.obs)  # the hover, then home to look again


def test_primitive_failures_map_onto_skill_codes() -> None:
    status = {"ok": False, "reason": "unreachable", "message": "no IK solution"}
    result = SkillResult.from_status(status, "place of cube")
    assert result.code is SkillCode.UNREACHABLE
    assert result.message == "place of cube failed: no IK solution"
    assert SkillResult.from_status({"ok": True}, "pick of cube").ok
    assert SkillResult.from_status({"ok": False, "reason": "safety_fault"}, "x").code is (
        SkillCode.ESTOP)
