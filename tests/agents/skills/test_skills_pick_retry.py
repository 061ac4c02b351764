"""A pick that fails, looks from above and fails again in another way is reported by its
cause, the first failure (its code and sentence, the retry's appended), through the skill
and the manipulator's ranked pick alike; the world budget then names the first cause."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from agentic_env.agents.runtime import Episode, Limits, Manipulator
from agentic_env.agents.runtime import manipulator as manipulator_module
from agentic_env.agents.skills import SkillCode, SkillResult
from agentic_env.agents.skills.result import after_retry, first_cause
from agentic_env.bench.world_budget import classify_failure
from agentic_env.contract.spaces import Workspace

#: The pick skill's module (the package's ``pick`` is the function).
pick_module = importlib.import_module("agentic_env.agents.skills.pick")

#: The first attempt closes on nothing (the calibration put the cube elsewhere) ...
MISSED = SkillResult(SkillCode.GRASP_FAILED, "pick of red-cube failed: the gripper closed "
                     "to 2.0 mm: nothing between the fingers")
#: ... and the retry from the wrist view above it is blocked on its way down.
BLOCKED = SkillResult(SkillCode.COLLISION, "pick of red-cube failed: robot contact between "
                      "the left pad and green-cube")


class Still:
    """A robot whose hand stays top-down 30 cm up and that accepts every move."""

    workspace = Workspace()

    def observe(self) -> dict[str, np.ndarray]:
        return {"tcp_pose": np.array([0.4, 0.0, 0.3, 0.0, 1.0, 0.0, 0.0], np.float32),
                "gripper_width": np.array([0.0], np.float32)}

    def act(self, action: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        return self.observe(), {"ok": True}


def _target(camera: str) -> pick_module.Target:
    target = object.__new__(pick_module.Target)
    object.__setattr__(target, "name", "red-cube")
    object.__setattr__(target, "part", "object")
    object.__setattr__(target, "camera", camera)
    return target


@pytest.fixture
def attempts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Scripted skills: the target is seen from the shoulder, seen again from above, each
    view offers one grasp; the first grasp misses, the second is blocked. The cameras of
    the grasps executed, in order."""
    executed: list[str] = []
    outcomes = iter([MISSED, BLOCKED])

    def execute(io: object, grasp: pick_module.Grasp, why: str) -> SkillResult:
        executed.append(grasp.target.camera)
        return next(outcomes)

    def grasps(io: object, target: pick_module.Target, *args: object) -> Iterator[Any]:
        yield pick_module.Grasp(None, target, None)  # type: ignore[arg-type]

    def seen_above(io: object, detector: object, target: object) -> SkillResult:
        return SkillResult(SkillCode.OK, "seen", {"target": _target("wrist")})

    monkeypatch.setattr(pick_module, "locate", lambda *args, **kwargs: SkillResult(
        SkillCode.OK, "seen", {"target": _target("shoulder")}))
    monkeypatch.setattr(pick_module, "accepted_grasps", grasps)
    monkeypatch.setattr(pick_module, "look_from_above", seen_above)
    monkeypatch.setattr(pick_module, "execute_grasp", execute)
    skills = manipulator_module.skills
    monkeypatch.setattr(skills, "look_from_above", seen_above)
    monkeypatch.setattr(skills, "execute_grasp", execute)
    monkeypatch.setattr(skills, "plan_grasps", lambda io, target, yaw, rng: (
        [object()], None, None))
    return executed


def _reports_the_first_cause(result: SkillResult) -> None:
    assert result.code is SkillCode.COLLISION, result.render()  # the state the retry left
    assert first_cause(result.message) == MISSED.message  # the cause
    assert BLOCKED.message in result.message  # the retry's sentence, appended
    assert result.data["first_code"] == "GRASP_FAILED"
    assert result.data["failures"] == [MISSED.message, BLOCKED.message]
    assert classify_failure("execution", result.message) == "calibration offset"


def test_a_pick_that_fails_again_from_above_reports_its_first_failure(
        attempts: list[str]) -> None:
    io = Episode(Still(), Limits())
    result = pick_module.pick(io, lambda *args: None, "red-cube", np.random.default_rng(0))
    assert attempts == ["shoulder", "wrist"]
    _reports_the_first_cause(result)


def test_a_ranked_pick_that_fails_again_from_above_reports_its_first_failure(
        attempts: list[str]) -> None:
    """MALLVI's path: the manipulator's ranked pick of an already located target; the first
    failure is the robot's, whatever the retry's was."""
    episode = Episode(Still(), Limits())
    hands = Manipulator(episode, lambda *args: None, np.random.default_rng(0))
    result = hands.pick_target(_target("shoulder"), lambda offered, slab, scene: [0],
                               look_closer=True)
    assert attempts == ["shoulder", "wrist"]
    _reports_the_first_cause(result)
    assert result.data["blame"] == "execution" and not hands.holding()
    episode.fail_first("execution", result.message)  # as the agents record it
    assert classify_failure(episode.report.failure, episode.report.failure_detail) == (
        "calibration offset")


def test_a_retry_that_succeeds_is_reported_as_it_is() -> None:
    picked = SkillResult(SkillCode.OK, "pick of red-cube done")
    assert after_retry(MISSED, picked, "from above") is picked
    assert first_cause(MISSED.message) == MISSED.message
