"""The named-object manipulator: one rule for what is held after a failure, one place
dispatch, failures blamed on the detector, the grasp judgement or the robot, and a real pick
and place into a bin by name."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.runtime import Episode, Limits, Manipulator, Place, detector_for
from agentic_env.agents.runtime import manipulator as manipulator_module
from agentic_env.agents.skills import SkillCode, SkillResult
from agentic_env.agents.skills.holding import HeldObject
from agentic_env.contract.spaces import Workspace
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.robot_io import EnvRobotIO


class Pads:
    """A robot whose gripper opening is ``width`` (m) and that sends nothing."""

    def __init__(self, width: float) -> None:
        self.width = width
        self.workspace = Workspace()

    def observe(self) -> dict[str, np.ndarray]:
        return {"gripper_width": np.array([self.width], np.float32)}

    def act(self, action: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        raise AssertionError("nothing is sent in these tests")


def _holding(width_now: float) -> Manipulator:
    """A manipulator that picked ``peach-1`` with the pads 4 cm apart and now reads
    ``width_now``."""
    robot = Pads(0.04)
    hands = Manipulator(Episode(robot, Limits()), lambda *args: None, np.random.default_rng(0))
    hands._picked(SkillResult(SkillCode.OK, "picked", {"held": HeldObject("peach-1", 0.03,
                                                                          0.03)}), None)
    robot.width = width_now
    hands.episode.observe()
    return hands


@pytest.mark.parametrize(("width", "held"), [(0.041, True), (0.034, True), (0.07, False),
                                             (0.001, False)])
def test_a_failed_place_keeps_the_object_only_while_the_pads_still_grip_it(
        width: float, held: bool) -> None:
    """As wide as after the pick (stopped before the release), squeezed by a blocked
    descent, opened for the release, or shut (it slipped out): one rule for every agent."""
    hands = _holding(width)
    result = hands._after_place(SkillResult(SkillCode.COLLISION, "blocked on the way down"),
                                "execution")
    assert hands.holding("peach-1") is held and result.data["still_held"] is held
    assert result.data["blame"] == "execution"


def _no_search(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each search the manipulator starts (a pick's or a locate's), finding
    nothing."""
    searches: list[str] = []
    for name in ("pick", "locate"):
        monkeypatch.setattr(manipulator_module.skills, name,
                            lambda *args, _name=name, **kwargs: searches.append(_name)
                            or SkillResult(SkillCode.NOT_FOUND, "not seen"))
    return searches


def test_a_pick_of_what_the_pads_still_grip_is_not_made_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan step retried after the checker judged a good pick failed: the object hangs in
    the hand (the gripper's width says so), no camera sees it on the table, so the pick
    succeeds without a search or a motion instead of failing on the detector."""
    searches = _no_search(monkeypatch)
    hands = _holding(0.04)
    for pick in (lambda: hands.pick("peach-1"),
                 lambda: hands.pick_ranked("peach-1", lambda *args: [0])):
        result = pick()
        assert result.ok and result.data["already_held"], result.render()
        assert "blame" not in result.data and result.data["held"].name == "peach-1"
    assert searches == [] and hands.episode.report.actions == 0
    assert hands.holding("peach-1")
    assert [e["kind"] for e in hands.episode.report.events] == ["already_held"] * 2


@pytest.mark.parametrize("width", [0.001, 0.07])
def test_a_pick_after_the_pads_shut_or_opened_searches_for_the_object(
        monkeypatch: pytest.MonkeyPatch, width: float) -> None:
    """Pads shut (it slipped out) or opened (let go): the object is no longer held and is
    looked for on the table."""
    searches = _no_search(monkeypatch)
    hands = _holding(width)
    result = hands.pick("peach-1")
    assert searches == ["pick"] and result.data["blame"] == "detector"
    assert not hands.holding()


def test_a_turning_pick_is_kept_only_for_the_pose_it_was_made_for(
        monkeypatch: pytest.MonkeyPatch) -> None:
    searches = _no_search(monkeypatch)
    hands = _holding(0.04)
    grip = object.__new__(manipulator_module.turn.TurningGrip)
    hands._picked(SkillResult(SkillCode.OK, "picked", {
        "held": HeldObject("peach-1", 0.03, 0.03)}), None, grip, "upright")
    assert hands.pick_to_turn("peach-1", "upright").data["already_held"]
    assert not hands.pick_to_turn("peach-1", "on-side").ok and searches == ["locate"]


@pytest.mark.parametrize(("mode", "skill"), [
    (Place.IN, "place_in"), (Place.SLOT, "place_in_slot"), (Place.ON, "place_on"),
    (Place.ON_LOOSE, "place_on"), (Place.TABLE, "place_at")])
def test_each_place_mode_reaches_its_skill(monkeypatch: pytest.MonkeyPatch, mode: Place,
                                           skill: str) -> None:
    hands = _holding(0.04)
    calls: list[tuple[str, dict[str, Any]]] = []
    target = object.__new__(manipulator_module.Target)
    object.__setattr__(target, "name", "bowl")
    monkeypatch.setattr(Manipulator, "locate", lambda self, name, part="object", **kw:
                        SkillResult(SkillCode.OK, "seen", {"target": target}))
    for name in ("place_in", "place_in_slot", "place_on", "place_at"):
        monkeypatch.setattr(manipulator_module.skills, name,
                            lambda *args, _name=name, **kwargs: calls.append((_name, kwargs))
                            or SkillResult(SkillCode.OK, "placed"))
    monkeypatch.setattr(manipulator_module, "SceneView", lambda obs: None)
    result = hands.place("peach-1", mode, None if mode is Place.TABLE else "bowl")
    assert result.ok and [name for name, _ in calls] == [skill]
    if skill == "place_on":
        assert calls[0][1]["align_faces"] is (mode is Place.ON)
    assert not hands.holding()


def test_a_container_not_seen_in_depth_is_the_detectors_failure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A place into a container whose box held none of its points (``NOT_FOUND``) blames the
    detector, as a pick of a target not found does; another failed place, the robot."""
    hands = _holding(0.04)
    target = object.__new__(manipulator_module.Target)
    object.__setattr__(target, "name", "bin")
    monkeypatch.setattr(manipulator_module, "SceneView", lambda obs: None)
    for code, blame in ((SkillCode.NOT_FOUND, "detector"), (SkillCode.COLLISION, "execution")):
        monkeypatch.setattr(manipulator_module.skills, "place_in",
                            lambda *args, _code=code, **kwargs: SkillResult(_code, "failed"))
        assert hands.place("peach-1", Place.IN, target).data["blame"] == blame


def test_a_target_nobody_sees_is_the_detectors_failure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    hands = Manipulator(Episode(Pads(0.085), Limits()), lambda *args: None,
                        np.random.default_rng(0))
    monkeypatch.setattr(manipulator_module.skills, "locate", lambda *args, **kwargs:
                        SkillResult(SkillCode.NOT_FOUND, "bowl is in no view"))
    result = hands.place("peach-1", Place.IN, "bowl")
    assert result.code is SkillCode.NOT_FOUND and result.data["blame"] == "detector"


def test_a_named_object_is_picked_and_put_in_the_named_bowl(
        sorting: tuple[SimEnv, ModuleContext]) -> None:
    env, models = sorting
    episode = Episode(EnvRobotIO(env), Limits())
    hands = Manipulator(episode, detector_for(models, lambda name: name.replace("-", " ")),
                        np.random.default_rng(0))
    picked = hands.pick("blue-cube-1")
    assert picked.ok and hands.holding("blue-cube-1"), picked.render()
    placed = hands.place("blue-cube-1", Place.IN, "bowl")
    assert placed.ok, placed.render()
    assert env.task.in_container(env.scene_state, "blue-cube-1", "bowl")
    assert not hands.holding() and episode.report.actions == 2


def test_a_retried_place_into_a_container_avoids_the_spot_that_failed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A place that touched the container's wall is not sent to the same spot again."""
    hands = _holding(0.04)
    target = object.__new__(manipulator_module.Target)
    object.__setattr__(target, "name", "bowl")
    monkeypatch.setattr(Manipulator, "locate", lambda self, name, part="object", **kw:
                        SkillResult(SkillCode.OK, "seen", {"target": target}))
    monkeypatch.setattr(manipulator_module, "SceneView", lambda obs: None)
    avoided: list[Any] = []
    pose = np.eye(4)
    pose[:2, 3] = (0.3, -0.35)

    def place_in(*args: Any, avoid: Any = None, **kwargs: Any) -> SkillResult:
        avoided.append(avoid)
        return SkillResult(SkillCode.COLLISION, "the finger met the wall", {"pose": pose})

    monkeypatch.setattr(manipulator_module.skills, "place_in", place_in)
    hands.place("peach-1", Place.IN, "bowl")
    hands.place("peach-1", Place.IN, "bowl")
    assert avoided[0] is None
    np.testing.assert_allclose(avoided[1], [[0.3, -0.35]])
