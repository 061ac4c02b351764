"""MALLVI in the simulator: the sim-oracle answers each role from the truth (errors injected
per role), the Descriptor's memory carries a "put it back" move, whole episodes succeed."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest

from agentic_env.agents.base import AgentReport, AgentSetup, TaskContext, make_agent
from agentic_env.agents.models.base import Completion, ModelQuery, Usage
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.harness.runner import run_episode
from agentic_env.oracle import SimOracle
from agentic_env.oracle.mallvi import reference_moves, subtask_truth


@pytest.fixture
def sorting() -> Iterator[SimEnv]:
    env = SimEnv("sorting", realism="ideal")
    env.reset(seed=5000)
    yield env
    env.close()


def ask(oracle: SimOracle, module: str, **fields: object) -> dict:
    return json.loads(oracle.complete(ModelQuery(module, module, "", fields=fields)).text)


def test_the_oracle_answers_each_role_from_the_truth(sorting: SimEnv) -> None:
    oracle = SimOracle(sorting)
    moves = ask(oracle, "decomposer")["subtasks"]
    assert moves == reference_moves(sorting) and len(moves) == 4
    first = moves[0]
    assert ask(oracle, "thinker", phase="place", destination=first["destination"]
               )["place_mode"] == "in"
    verdict = ask(oracle, "reflector", source=first["source"],
                  destination=first["destination"])
    assert verdict["task_complete"] is False  # nothing has moved yet
    seen = ask(oracle, "localizer", target=first["source"], camera="shoulder",
               image_size=[480, 640])
    assert seen["found"] and len(seen["point"]) == 2
    plan = ask(oracle, "single_agent", image_size=[480, 640])["plan"]
    assert [p["source"] for p in plan] == [m["source"] for m in moves]
    assert all(p["pick_point"] and p["place_mode"] == "in" for p in plan)


def test_injected_role_errors_flip_or_corrupt_answers(sorting: SimEnv) -> None:
    oracle = SimOracle(sorting, {"reflector": 1.0, "decomposer": 1.0, "thinker": 1.0})
    truth = reference_moves(sorting)
    first = truth[0]
    assert ask(oracle, "reflector", source=first["source"],
               destination=first["destination"])["task_complete"] is True
    assert ask(oracle, "decomposer")["subtasks"] != truth
    assert ask(oracle, "thinker", phase="place", destination="bowl")["place_mode"] == "on"
    assert not subtask_truth(sorting, first["source"], first["destination"])


def test_the_oracle_describes_the_scene_truthfully(sorting: SimEnv) -> None:
    objects = {o["name"]: o for o in ask(SimOracle(sorting), "descriptor")["objects"]}
    assert set(objects) == set(sorting.task.pddl_objects())  # the simulator's ids
    assert objects["bowl"]["category"] == "container"
    lemon = sorting.scene_state.body_position("lemon-1")
    words = objects["lemon-1"]["position"].split()
    assert words[1] == ("left" if lemon[1] > 0.12 else "right" if lemon[1] < -0.12
                        else "centre")
    # each object's nearest neighbour lies where its relation says
    for name, described in objects.items():
        ((relation, other),) = [(r["relation"], r["object"]) for r in described["relations"]]
        dx, dy = (sorting.scene_state.body_position(name)
                  - sorting.scene_state.body_position(other))[:2]
        expected = {"left of": dy > 0 and abs(dy) > abs(dx),
                    "right of": dy < 0 and abs(dy) > abs(dx),
                    "behind": dx > 0 and abs(dx) >= abs(dy),
                    "in front of": dx < 0 and abs(dx) >= abs(dy)}
        assert expected[relation], (name, relation, other)


def test_an_injected_descriptor_error_misses_an_object_or_turns_a_relation(
        sorting: SimEnv) -> None:
    truth = ask(SimOracle(sorting), "descriptor")["objects"]
    errors = set()
    for seed in range(6):
        wrong = SimOracle(sorting, {"descriptor": 1.0}, seed=seed)
        objects = ask(wrong, "descriptor")["objects"]
        changed = [o for o in objects if o not in truth]
        errors.add(len(objects) < len(truth))
        if len(objects) == len(truth) - 1:
            assert not changed  # one object missed, the others as they are
        else:
            (turned,) = changed
            before = next(o for o in truth if o["name"] == turned["name"])
            assert turned["relations"][0]["object"] == before["relations"][0]["object"]
            assert turned["relations"][0]["relation"] != before["relations"][0]["relation"]
    assert errors == {True, False}  # both kinds of error occur


class Decomposer:
    """A Decomposer that answers with the given moves."""

    name = "scripted-decomposer"

    def __init__(self, *moves: dict[str, object]) -> None:
        self.moves = list(moves)

    def complete(self, query: ModelQuery) -> Completion:
        return Completion(json.dumps({"subtasks": self.moves}), Usage())


def run_moves(env: SimEnv, decomposer: Decomposer, instruction: str) -> AgentReport:
    """A MALLVI episode in ``env`` with the scripted Decomposer and the sim-oracle's roles."""
    oracle = SimOracle(env)
    try:
        agent = make_agent("mallvi", AgentSetup(ModuleContext(ModelRouter(
            oracle, {"decomposer": decomposer}))))
        return agent.run(EnvRobotIO(env), instruction, TaskContext(""))
    finally:
        oracle.close()


#: Moves the lemon into the bowl and then back where it was.
PUT_BACK = Decomposer({"kind": "place", "source": "lemon-1", "destination": "bowl",
                       "rotation_deg": 0},
                      {"kind": "memory", "source": "lemon-1", "rotation_deg": 0})


@pytest.mark.slow
def test_the_descriptor_memory_puts_an_object_back_where_it_was(sorting: SimEnv) -> None:
    start = sorting.scene_state.body_position("lemon-1").copy()
    report = run_moves(sorting, PUT_BACK, "put the lemon in the bowl, then put it back")
    reflections = [e for e in report.events if e["kind"] == "reflection"]
    assert [e["task_complete"] for e in reflections] == [True, True]
    back = reflections[-1]["place_point"]
    memory = next(e for e in report.events if e["kind"] == "memory")
    remembered = next(o for o in memory["positions"] if o["name"] == "lemon-1")["position"]
    assert "- lemon-1 (item): lemon; at the " in memory["description"]  # the Descriptor's
    assert back == pytest.approx(remembered[:2])
    end = sorting.scene_state.body_position("lemon-1")
    assert np.linalg.norm(end[:2] - start[:2]) < 0.04
    assert report.believes_done and report.failure is None


@pytest.mark.slow
@pytest.mark.parametrize("task", ["sorting", "stacking"])
def test_a_whole_episode_succeeds_with_the_perfect_oracle(task: str) -> None:
    result = run_episode(EpisodeSpec(task, seed=5001, agent="mallvi", realism="ideal"), video=False)
    assert result.success, result.failure_detail
    assert {c.module for c in result.calls} >= {"descriptor", "decomposer", "localizer",
                                                 "thinker", "reflector"}
    # every Reflector verdict is stored with the simulator's truth of its move
    verdicts = [(c.verdict, c.truth) for c in result.calls if c.module == "reflector"]
    assert len(verdicts) >= 2 and all(v == t and t is not None for v, t in verdicts)
    assert all(c.truth is None for c in result.calls if c.module != "reflector")


def oracle_moves(task: str, seed: int) -> list[dict]:
    env = SimEnv(task, realism="ideal")
    try:
        env.reset(seed=seed)
        return ask(SimOracle(env), "decomposer")["subtasks"]
    finally:
        env.close()


def test_the_oracle_decomposes_turns_and_drawer_moves() -> None:
    # the bottle out of the open drawer, the snack pack in, then close it
    kitchen = oracle_moves("kitchen", 7100)
    assert [(m["source"], m["destination"], m["from_drawer"]) for m in kitchen] == [
        ("spice-bottle-1", "table", "top-drawer"), ("blue-snack-pack-1", "top-drawer", None),
        ("top-drawer", "closed", None)]
    (turn,) = oracle_moves("reorientation", 7102)  # the mug's handle to point away
    assert turn["source"] == turn["destination"] == "orange-mug-1"
    assert turn["pose"] == "handle-away-from-robot" and abs(turn["rotation_deg"]) > 30


@pytest.mark.slow
def test_a_turn_about_the_vertical_turns_the_object_where_it_stands() -> None:
    env = SimEnv("stacking", realism="ideal")
    env.reset(seed=5000)
    try:
        start = env.scene_state.body_position("blue-cube-1").copy()
        before = env.scene_state.body_rotation("blue-cube-1")[:2, 0].copy()
        report = run_moves(env, Decomposer({"kind": "turn", "source": "blue-cube-1",
                                            "destination": "blue-cube-1",
                                            "rotation_deg": 30}),
                           "turn the blue cube 30 degrees clockwise")
        after = env.scene_state.body_rotation("blue-cube-1")[:2, 0]
        end = env.scene_state.body_position("blue-cube-1")
    finally:
        env.close()
    turned = np.degrees(np.arctan2(after[1], after[0]) - np.arctan2(before[1], before[0]))
    assert (turned + 30.0 + 45.0) % 90.0 - 45.0 == pytest.approx(0.0, abs=8.0)  # a cube
    assert np.linalg.norm(end[:2] - start[:2]) < 0.02
    (reflection,) = [e for e in report.events if e["kind"] == "reflection"]
    assert reflection["task_complete"] and report.believes_done


@pytest.mark.slow
@pytest.mark.parametrize(("task", "seed", "moves"), [
    ("reorientation", 7100, ["move(red-box-1, red-box-1, 90, on-side)"]),
    ("kitchen", 7108, ["move(top-drawer, open, 0)", "move(spice-bottle-1, top-drawer, 0)",
                       "move(top-drawer, closed, 0)"]),
    ("kitchen", 7100, ["move(spice-bottle-1, table, 0) out of top-drawer",
                       "move(blue-snack-pack-1, top-drawer, 0)",
                       "move(top-drawer, closed, 0)"]),
])
def test_turns_and_drawer_moves_run_through_the_skills(task: str, seed: int,
                                                       moves: list[str]) -> None:
    events: list[dict] = []
    result = run_episode(EpisodeSpec(task, seed=seed, agent="mallvi", realism="ideal"), video=False,
                         on_agent_event=lambda env, event: events.append(event))
    assert result.success, result.failure_detail
    (decomposition,) = [e for e in events if e["kind"] == "decomposition"]
    assert decomposition["subtasks"] == moves
    primitives = {e["primitive"] for e in events if e["kind"] == "primitive" and e["ok"]}
    if task == "kitchen":
        drawer = {"open_drawer" for m in moves if ", open," in m} | {"close_drawer"}
        assert drawer <= primitives
    else:
        assert any(e["kind"] == "object_estimate" for e in events)  # the turn skills
    verdicts = [(c.verdict, c.truth) for c in result.calls if c.module == "reflector"]
    assert len(verdicts) >= len(moves) and all(v == t is not None for v, t in verdicts)
