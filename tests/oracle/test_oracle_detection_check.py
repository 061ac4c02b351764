"""The sim-oracle's answer to AgenticLab's check of a detection another detector made: does
the marked point lie on the named target, at the grasp module's error rate."""

from __future__ import annotations

import json

import numpy as np

from agentic_env.agents.models.base import ModelQuery
from agentic_env.oracle import SimOracle
from agentic_env.oracle.naming import thing_geoms


def _check(oracle: SimOracle, env, target: str, pixel: tuple[int, int], **extra) -> str:
    height, width = env.segmentation("shoulder").shape
    fields = {"target": target, "part": "object", "camera": "shoulder",
              "image_size": [height, width], "point": list(pixel), "box": None, **extra}
    answer = json.loads(oracle.complete(ModelQuery("grasp", "detection_check", "",
                                                   fields=fields)).text)
    return answer["evaluation"]["action"]


def _pixel_of(env, name: str) -> tuple[int, int]:
    rows, cols = np.nonzero(np.isin(env.segmentation("shoulder"), thing_geoms(env, name)))
    middle = len(rows) // 2
    return int(cols[middle]), int(rows[middle])


def test_a_mark_on_the_target_is_accepted_and_one_elsewhere_rejected(sorting_env) -> None:
    env = sorting_env
    target, other = [n for n in env.task.pddl_objects()
                     if np.isin(env.segmentation("shoulder"), thing_geoms(env, n)).sum() > 50][:2]
    oracle = SimOracle(env)
    assert _check(oracle, env, target, _pixel_of(env, target)) == "ACCEPT_DETECTION"
    assert _check(oracle, env, target, _pixel_of(env, other)) == "REJECT_DETECTION"
    assert _check(oracle, env, target, (-5, 3)) == "REJECT_DETECTION"


def test_the_verdict_errs_at_the_grasp_modules_rate(sorting_env) -> None:
    env = sorting_env
    target = next(n for n in env.task.pddl_objects()
                  if np.isin(env.segmentation("shoulder"), thing_geoms(env, n)).sum() > 50)
    oracle = SimOracle(env, {"grasp": 0.3}, seed=2)
    n = 400
    rejected = sum(_check(oracle, env, target, _pixel_of(env, target), i=i)
                   == "REJECT_DETECTION" for i in range(n))
    assert abs(rejected - 0.3 * n) < 3.3 * np.sqrt(n * 0.3 * 0.7) + 1
