"""Scheduled events in the sim env: the e-stop refuses every motion (primitive and low-level)
until its release, a person moves, removes and adds objects, the operator's words change the
goal, and a trial spec replays its schedule exactly."""

from __future__ import annotations

import numpy as np
import pytest

from agentic_env.contract.actions import home, move_to, top_down_pose
from agentic_env.contract.events import EventSpec, announcement, parse_events
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.tasks.variants import VariantTask

POSE = top_down_pose([0.45, -0.05, 0.22])


def test_an_event_needs_exactly_one_trigger_and_its_fields() -> None:
    with pytest.raises(InvalidConfigError, match="exactly one trigger"):
        EventSpec("estop")
    with pytest.raises(InvalidConfigError, match="exactly one trigger"):
        EventSpec("estop", at_primitive=1, at_time=2.0)
    with pytest.raises(InvalidConfigError, match="needs a body"):
        EventSpec("move_object", at_primitive=1)
    with pytest.raises(InvalidConfigError, match="unknown event fields"):
        parse_events([{"kind": "estop", "at_primitive": 1, "when": 3}])
    spec = EventSpec("say", at_primitive=2, text="stop", goal=("in a b",))
    assert EventSpec.from_dict(spec.to_dict()) == spec
    assert announcement({**spec.to_dict()}) == "operator says: stop"
    assert announcement({"kind": "move_object", "body": "apple-1", "announce": False}) == ""


def test_the_estop_refuses_primitives_until_its_release() -> None:
    env = SimEnv(task="stacking", realism="ideal")
    try:
        env.reset(seed=1, options={"events": [
            {"kind": "estop", "at_primitive": 2},
            {"kind": "estop_release", "at_time": 1.0, "after_previous": True}]})
        assert env.step(move_to(POSE))[4]["primitive"]["ok"]
        q = env.robot.joint_positions().copy()
        info = env.step(home())[4]  # pressed as it starts: stopped, not counted
        assert info["primitive"]["reason"] == "estop" and info["estop"]["active"]
        assert [e["kind"] for e in info["events"]] == ["estop"]
        info = env.step(home())[4]  # sent while it was on: refused and counted
        assert info["primitive"]["reason"] == "estop" and info["estop"]["refused"] == 1
        np.testing.assert_allclose(env.robot.joint_positions(), q, atol=5e-3)  # held
        info = env.wait(1.0)  # the robot waits; the release fires meanwhile
        assert not info["estop"]["active"] and info["events"][-1]["kind"] == "estop_release"
        assert env.step(home())[4]["primitive"]["ok"]
    finally:
        env.close()


def test_the_estop_holds_low_level_motion() -> None:
    env = SimEnv(task="stacking", control_mode="joint_position", realism="ideal")
    try:
        env.reset(seed=1, options={"events": [{"kind": "estop", "at_primitive": 1}]})
        q = env.robot.joint_positions().copy()
        for _ in range(5):
            info = env.step(np.array([*(q + 0.2), 0.04]))[4]
        assert info["estop"] == {"active": True, "refused": 4}
        np.testing.assert_allclose(env.robot.joint_positions(), q, atol=2e-3)
    finally:
        env.close()


def test_a_person_moves_removes_and_adds_objects() -> None:
    env = SimEnv(task="sorting", realism="ideal")
    try:
        env.reset(seed=7000)
        scene = env.scene_state
        on_table = ["ball-1", "banana-1"]
        parked = "marker-1"
        before = {n: scene.body_position(n).copy() for n in [*on_table, parked]}
        env.reset(seed=7000, options={"events": [
            {"kind": "move_object", "at_primitive": 1, "body": "ball-1", "shift": [0.0, 0.05]},
            {"kind": "remove_object", "at_primitive": 1, "body": "banana-1", "announce": False},
            {"kind": "add_object", "at_primitive": 1, "body": parked,
             "position": [0.45, 0.0]}]})
        info = env.step(home())[4]
        assert [e["announced"] for e in info["events"]] == [
            "a person moved ball-1", "", f"a person put {parked} on the table"]
        after = {n: scene.body_position(n) for n in before}
        assert after["ball-1"][1] - before["ball-1"][1] == pytest.approx(0.05, abs=0.01)
        assert after["banana-1"][2] < -0.5  # on the floor
        np.testing.assert_allclose(after[parked][:2], [0.45, 0.0], atol=0.01)
        assert 0.0 < after[parked][2] < 0.05  # resting on the table top
    finally:
        env.close()


def test_the_operators_words_change_the_goal_and_the_trial_replays_them() -> None:
    env = SimEnv(task="sorting", realism="ideal")
    try:
        env.reset(seed=7000, options={"kind": "preference"})
        task, trial = env.task, env.trial
        assert isinstance(task, VariantTask) and trial.variant["kind"] == "preference"
        (say,) = trial.events
        assert task.goal_facts() != list(say["goal"])
        info = env.step(home())[4]
        assert info["events"] == [] and info["instruction"] == trial.instruction
        info = env.step(home())[4]
        assert info["events"][0]["announced"].startswith("operator says: Use the")
        assert env.task.goal_facts() == list(say["goal"])
        env.reset(options={"trial": trial.to_dict()})  # replay: the same variant and events
        assert env.trial == trial and env.task.goal_facts() == list(task.variant.goal)
    finally:
        env.close()
