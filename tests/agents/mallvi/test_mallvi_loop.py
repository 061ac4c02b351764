"""MALLVI's control loop: Reflector verdicts drive retries within a bound; the ablations.

The robot is a stub and the Actor is replaced by a recorder, so these tests check the loop's
decisions only (the sim episodes are in test_mallvi_episode.py).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from agentic_env.agents.base import AgentSetup, TaskContext, agent_entry, make_agent
from agentic_env.agents.mallvi import actor as actor_module
from agentic_env.agents.mallvi import agent as agent_module
from agentic_env.agents.mallvi.actor import ActorReport
from agentic_env.agents.mallvi.memory import SceneMemory
from agentic_env.agents.models.base import Completion, ModelQuery, Usage
from agentic_env.agents.models.context import ModuleContext, ModuleFailedError
from agentic_env.agents.models.registry import ModelRouter, parse_model_spec, parse_module_map
from agentic_env.contract.spaces import Workspace
from agentic_env.errors import InvalidConfigError
from agentic_env.robot.constants import HOME_JOINT_POSITIONS

MOVES = [{"kind": "place", "source": "lemon-1", "destination": "bowl"},
         {"kind": "place", "source": "ball-1", "destination": "blue-bin"}]
#: The scripted Descriptor's answer.
DESCRIPTION = {"objects": [{"name": "lemon-1", "description": "a yellow lemon",
                            "position": "near left"},
                           {"name": "bowl", "description": "a white bowl",
                            "position": "near right"}]}


class StubRobot:
    workspace = Workspace()

    def observe(self) -> dict[str, np.ndarray]:
        return {"shoulder_rgb": np.zeros((8, 8, 3), np.uint8),
                "wrist_rgb": np.zeros((8, 8, 3), np.uint8),
                "joint_positions": HOME_JOINT_POSITIONS.copy()}  # a retry needs no move home

    def act(self, action: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        raise AssertionError("the stubbed Actor sends no primitives")


class Roles:
    """Scripted Descriptor, Decomposer and Reflector verdicts (popped in order; then
    ``True``)."""

    name = "scripted"

    def __init__(self, verdicts: list[bool]) -> None:
        self.verdicts = list(verdicts)
        self.modules: list[str] = []

    def complete(self, query: ModelQuery) -> Completion:
        self.modules.append(query.module)
        if query.module == "descriptor":
            answer: dict[str, Any] = DESCRIPTION
        elif query.module == "decomposer":
            answer = {"subtasks": MOVES}
        elif query.module == "reflector":
            complete = self.verdicts.pop(0) if self.verdicts else True
            answer = {"task_complete": complete, "confidence": 0.9}
        else:
            raise AssertionError(f"unexpected {query.module} query")
        return Completion(json.dumps(answer), Usage())


class Attempts(list):
    """Moves the stubbed Actor attempted, with its ``ok``; ``outcomes`` scripts the ``ok``s
    (then ``True``)."""

    outcomes: list[bool]


@pytest.fixture
def attempts(monkeypatch: pytest.MonkeyPatch) -> Attempts:
    """Replace the Actor by a recorder of attempted moves."""
    record = Attempts()
    record.outcomes = outcomes = []

    def run(self: Any, move: Any, memory: SceneMemory) -> ActorReport:
        ok = outcomes.pop(0) if outcomes else True
        record.append((str(move), ok))
        return ActorReport(ok, "OK: place done" if ok else "COLLISION: place failed",
                           None if ok else "execution")

    monkeypatch.setattr(actor_module.MoveRunner, "run", run)
    monkeypatch.setattr(agent_module.SceneMemory, "record",
                        classmethod(lambda cls, io, detector, names, scene: cls(scene=scene)))
    return record


def episode(roles: Roles, **options: Any) -> Any:
    agent = make_agent("mallvi", AgentSetup(ModuleContext(ModelRouter(roles)),
                                            options=options))
    return agent.run(StubRobot(), "sort the fruit", TaskContext(""))


def test_a_reflector_false_negative_retries_the_same_move(attempts: Attempts) -> None:
    roles = Roles([False])  # the first move worked, the Reflector says it did not
    report = episode(roles)
    assert [m for m, _ in attempts] == ["move(lemon-1, bowl, 0)", "move(lemon-1, bowl, 0)",
                                        "move(ball-1, blue-bin, 0)"]
    # the description and the decomposition are made once, the description first
    assert roles.modules[:2] == ["descriptor", "decomposer"]
    assert roles.modules.count("decomposer") == roles.modules.count("descriptor") == 1
    assert report.believes_done and report.replans == 1
    reflections = [e for e in report.events if e["kind"] == "reflection"]
    assert [(e["index"], e["attempt"], e["task_complete"]) for e in reflections] == [
        (0, 1, False), (0, 2, True), (1, 1, True)]


def test_a_reflector_false_positive_moves_on(attempts: Attempts) -> None:
    attempts.outcomes[:] = [False]  # the first move failed, the Reflector says done
    report = episode(Roles([True]))
    assert [ok for _, ok in attempts] == [False, True]
    assert report.believes_done
    assert report.failure == "execution"  # the Actor's report is kept in the accounts


def test_retries_are_bounded_then_the_agent_moves_on_or_stops(attempts: Attempts) -> None:
    report = episode(Roles([False] * 10), max_retries=1)
    assert [m for m, _ in attempts] == ["move(lemon-1, bowl, 0)"] * 2 + [
        "move(ball-1, blue-bin, 0)"] * 2
    assert not report.believes_done and report.failure is None
    exhausted = [e for e in report.events if e["kind"] == "retries_exhausted"]
    assert [e["index"] for e in exhausted] == [0, 1]
    attempts.clear()
    report = episode(Roles([False] * 10), max_retries=2, on_exhausted="stop")
    assert [m for m, _ in attempts] == ["move(lemon-1, bowl, 0)"] * 3
    assert report.failure == "reflector" and not report.believes_done


def test_without_the_reflector_each_move_runs_once_on_the_actor_s_word(attempts: Attempts
                                                                        ) -> None:
    attempts.outcomes[:] = [False, True]
    roles = Roles([])
    report = episode(roles, reflector=False)
    assert len(attempts) == 2 and "reflector" not in roles.modules
    assert not report.believes_done


def test_the_single_agent_baseline_plans_once_and_skips_the_roles(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(agent_module, "run_single_agent",
                        lambda hands, ctx, instruction: calls.append(instruction) or True)
    roles = Roles([])
    report = episode(roles, single_agent=True)
    assert calls == ["sort the fruit"] and roles.modules == [] and report.believes_done


def test_options_and_per_role_models_are_checked() -> None:
    entry = agent_entry("mallvi")
    assert entry.check_options({"reflector": False})["single_agent"] is False
    with pytest.raises(InvalidConfigError):
        entry.check_options({"reflector": "no"})
    with pytest.raises(InvalidConfigError):
        make_agent("mallvi", AgentSetup(ModuleContext(ModelRouter(Roles([]))),
                                        options={"on_exhausted": "later"}))
    modules = parse_module_map("decomposer=sim-oracle,reflector=sim-oracle?reflector=0.2")
    assert set(modules) == {"decomposer", "reflector"}
    spec = parse_model_spec("sim-oracle?reflector=0.2&localizer=0.1&thinker=0.05")
    assert dict(spec.error_rates) == {"reflector": 0.2, "localizer": 0.1, "thinker": 0.05}


def test_a_failing_decomposer_ends_the_episode_blamed_on_it() -> None:
    class Mute:
        name = "mute"

        def complete(self, query: ModelQuery) -> Completion:
            if query.module == "descriptor":
                return Completion(json.dumps(DESCRIPTION), Usage())
            return Completion("no idea", Usage())

    agent = make_agent("mallvi", AgentSetup(ModuleContext(ModelRouter(Mute()), retries=1)))
    report = agent.run(StubRobot(), "sort", TaskContext(""))
    assert report.failure == "decomposer" and not report.believes_done


def test_the_memory_resolves_first_positions_and_recalls_the_description() -> None:
    from agentic_env.agents.mallvi.memory import DescribedObject, Remembered, SceneDescription

    scene = SceneDescription((DescribedObject("lemon-1", "a yellow lemon", "near left",
                                              (("left of", "bowl"),)),))
    memory = SceneMemory({"lemon-1": Remembered("lemon-1", (0.4, 0.1, 0.05)),
                          "bowl": Remembered("bowl", (0.3, -0.4, 0.06))}, scene)
    assert memory.resolve("lemon-1") == (0.4, 0.1)
    assert memory.resolve("bowl") == (0.3, -0.4)
    assert memory.resolve("apple-1") is None
    assert memory.recall("lemon-1") == ("- lemon-1: a yellow lemon; at the near left of the "
                                        "table; left of bowl")
    assert memory.recall("bowl") == ""
    assert memory.describe()["positions"][0] == {"name": "lemon-1",
                                                 "position": [0.4, 0.1, 0.05]}


def test_the_descriptor_s_memory_reaches_the_actor_and_its_failure_is_not_fatal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[SceneMemory] = []
    recorded: list[list[str]] = []
    monkeypatch.setattr(actor_module.MoveRunner, "run",
                        lambda self, move, memory: seen.append(memory) or ActorReport(True, "OK"))

    def record(cls: Any, io: Any, detector: Any, names: Any, scene: Any) -> SceneMemory:
        recorded.append(list(names))
        return cls(scene=scene)

    monkeypatch.setattr(agent_module.SceneMemory, "record", classmethod(record))
    monkeypatch.setattr(agent_module.roles, "decompose", lambda ctx, obs, instruction, scene: (
        [agent_module.roles.parse_move(m, "decomposer") for m in MOVES + [
            {"kind": "table", "source": "ball-1"},
            {"kind": "memory", "source": "ball-1", "memory_of": "apple-1"}]], ""))
    report = episode(Roles([]))
    assert seen[0].scene is not None and seen[0].scene.names() == ["lemon-1", "bowl"]
    # the objects the moves name are remembered, never a table spot
    assert recorded == [["lemon-1", "ball-1", "ball-1", "ball-1", "bowl", "blue-bin",
                         "apple-1"]]
    described = next(e for e in report.events if e["kind"] == "description")
    assert described["objects"] == ["lemon-1", "bowl"]

    class MuteDescriptor(Roles):
        def complete(self, query: ModelQuery) -> Completion:
            if query.module == "descriptor":
                return Completion("no idea", Usage())
            return super().complete(query)

    seen.clear()
    report = episode(MuteDescriptor([]))
    assert seen[0].scene is None and report.believes_done
    assert report.failure == "descriptor"


def test_a_failing_localizer_while_remembering_leaves_the_memory_empty(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from agentic_env.agents.models.base import ModelError

    def broken(cls: Any, io: Any, detector: Any, names: Any, scene: Any) -> SceneMemory:
        raise ModuleFailedError("localizer", ModelError("timeout"))

    monkeypatch.setattr(agent_module.SceneMemory, "record", classmethod(broken))
    monkeypatch.setattr(actor_module.MoveRunner, "run",
                        lambda self, move, memory: ActorReport(not memory.objects, "OK"))
    report = episode(Roles([]))
    assert report.failure == "localizer" and report.believes_done
