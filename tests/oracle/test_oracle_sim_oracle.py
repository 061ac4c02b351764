"""The sim-oracle answers every module from ground truth, in the JSON a real VLM must give."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agentic_env.agents.models.base import ModelQuery
from agentic_env.agents.perception import lift_pixel
from agentic_env.errors import InvalidConfigError
from agentic_env.oracle import SimOracle
from agentic_env.oracle.agenticlab import describe
from agentic_env.pddl.planning import load_domain, simulate, solve
from agentic_env.tasks.symbolic import reference_plan


@pytest.fixture(scope="module")
def sorting_env():
    from agentic_env.envs.sim_env import SimEnv

    env = SimEnv("sorting")
    obs, info = env.reset(seed=0)
    yield env, obs
    env.close()


def _answer(oracle: SimOracle, module: str, **fields) -> dict:
    return json.loads(oracle.complete(ModelQuery(module, module, "", fields=fields)).text)


def test_parser_problem_solves_to_the_reference_plan(sorting_env) -> None:
    env, _ = sorting_env
    oracle = SimOracle(env)
    domain = load_domain("sorting")
    answer = _answer(oracle, "parser", instruction="sort", domain=domain)
    plan = solve(answer["updated_domain"], answer["problem_pddl"])
    assert simulate(domain, answer["problem_pddl"], plan).goal_reached
    assert len(plan) == len(reference_plan(env.task, env.scene_state))
    names = {o["name"] for o in answer["objects_identified"]}
    assert names == set(env.task.pddl_objects())
    oracle.close()


def test_checker_verdicts_follow_the_true_facts(sorting_env) -> None:
    env, _ = sorting_env
    oracle = SimOracle(env)
    item = next(n for n, t in env.task.pddl_objects().items() if t == "item")
    good = _answer(oracle, "checker", conditions=["(hand-empty)", f"(not (holding {item}))"])
    assert good["success"] and good["failed_conditions"] == []
    bad = _answer(oracle, "checker", conditions=["(hand-empty)", f"(holding {item})"])
    assert not bad["success"] and bad["failed_conditions"] == [f"(holding {item})"]
    oracle.close()


def test_detector_points_at_the_target(sorting_env) -> None:
    env, obs = sorting_env
    oracle = SimOracle(env)
    for name, kind in env.task.pddl_objects().items():
        answer = _answer(oracle, "detector", target=name, camera="shoulder",
                         image_size=list(obs["shoulder_rgb"].shape[:2]))
        assert answer["found"], name
        u, v = answer["point"]
        x0, y0, x1, y1 = answer["box"]
        assert x0 <= u < x1 and y0 <= v < y1
        point = lift_pixel(obs, "shoulder", (u, v))
        true = env.scene_state.body_position(name)
        reach = 0.03 if kind == "item" else 0.15  # a point on a bin lies on its wall or floor
        assert np.linalg.norm(point[:2] - true[:2]) < reach, name
    missing = _answer(oracle, "detector", target="unicorn-1", camera="shoulder",
                      image_size=list(obs["shoulder_rgb"].shape[:2]))
    assert missing == {"found": False, "point": None, "box": None,
                       "reasoning": "no unicorn is visible"}
    oracle.close()


def test_injected_errors_flip_verdicts_at_the_set_rate(sorting_env) -> None:
    env, _ = sorting_env
    always = SimOracle(env, {"checker": 1.0, "goal": 1.0}, seed=1)
    assert not _answer(always, "checker", conditions=["(hand-empty)"])["success"]
    assert _answer(always, "goal", goal=[])["success"] is True  # the goal is not met
    sometimes = SimOracle(env, {"checker": 0.3}, seed=2)
    flips = sum(not _answer(sometimes, "checker", conditions=["(hand-empty)"])["success"]
                for _ in range(400))
    assert 90 <= flips <= 150
    with pytest.raises(InvalidConfigError, match="modules are parser"):
        SimOracle(env, {"vision": 0.1})


def test_grasp_verdict_rejects_a_grasp_below_the_table(sorting_env) -> None:
    env, _ = sorting_env
    oracle = SimOracle(env)
    item = next(n for n, t in env.task.pddl_objects().items() if t == "item")
    pose = np.eye(4)
    pose[:3, :3] = np.diag([1.0, -1.0, -1.0])
    pose[:3, 3] = env.scene_state.body_position(item)
    pose[2, 3] = 0.04
    ok = _answer(oracle, "grasp", target=item, pose=pose.tolist(), width=0.03)
    assert ok["evaluation"]["action"] == "EXECUTE_GRASP"
    pose[2, 3] = 0.005
    low = _answer(oracle, "grasp", target=item, pose=pose.tolist(), width=0.03)
    assert low["evaluation"]["action"] == "REJECT_GRASP"
    assert low["evaluation"]["collision_check"]["overlaps_with_surface"]


def test_describe_strips_instance_numbers() -> None:
    assert describe("red-cube-1") == "red cube"
    assert describe("blue-bin") == "blue bin"
