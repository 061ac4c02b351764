"""Module benchmark: its labels match ground truth on constructed cases."""

from __future__ import annotations

import numpy as np
import pytest

from agentic_env.bench import modules as module_bench
from agentic_env.bench.modules import (
    box_iou,
    grade_parser,
    holds,
    mask_box,
    point_in_mask,
    simulated_pick_lifts,
)
from agentic_env.experts import primitive_for
from agentic_env.harness.db import ResultStore
from agentic_env.reports.paper_modules import format_module_table


def test_literals_masks_and_boxes():
    facts = {"hand-empty", "on-top-of a b", "clear a"}
    assert holds("(hand-empty)", facts) and holds("( on-top-of  a B )", facts)
    assert not holds("(holding a)", facts) and holds("(not (holding a))", facts)
    assert not holds("(not (clear a))", facts)
    mask = np.zeros((10, 20), bool)
    mask[2:5, 3:9] = True
    assert mask_box(mask) == (3, 2, 9, 5)
    assert mask_box(np.zeros((4, 4), bool)) is None
    assert point_in_mask((3, 2), mask) and not point_in_mask((9, 2), mask)
    assert not point_in_mask((-1, 2), mask) and not point_in_mask((3, 99), mask)
    assert box_iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert box_iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(50 / 150)
    assert box_iou((0, 0, 1, 1), (2, 2, 3, 3)) == 0.0 and box_iou(None, (0, 0, 1, 1)) == 0.0


def _stacking_problem(goal: str, extra: str = "") -> str:
    objects = "red blue green" + (f" {extra}" if extra else "")
    init = " ".join(f"(on-top-of {o} table) (clear {o})" for o in objects.split())
    return f"""(define (problem p) (:domain stacking)
  (:objects {objects} - cube table - object)
  (:init (hand-empty) {init})
  (:goal (and {goal})))"""


def test_parser_grade_executes_the_models_plan_on_the_true_problem():
    from agentic_env.pddl.planning import load_domain

    domain = load_domain("stacking")
    truth = _stacking_problem("(on-top-of red blue) (on-top-of green red)")
    assert grade_parser(domain, truth, domain, truth)[0]
    # A problem that forgets a goal fact plans fine but misses the true goal.
    ok, detail = grade_parser(domain, truth, domain, _stacking_problem("(on-top-of red blue)"))
    assert not ok and "(on-top-of green red)" in detail
    # Hallucinated objects, bad syntax and unsolvable goals fail with the reason.
    ok, detail = grade_parser(domain, truth, domain,
                              _stacking_problem("(on-top-of red pink)", "pink"))
    assert not ok and "pink" in detail
    assert not grade_parser(domain, truth, domain, "(define (problem")[0]
    ok, detail = grade_parser(domain, truth, domain,
                              _stacking_problem("(on-top-of red blue) (on-top-of blue red)"))
    assert not ok and "no plan" in detail


def test_grasp_label_is_the_simulated_outcome_and_leaves_the_env_alone():
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.pddl.planning import PlanStep
    from agentic_env.tasks.symbolic import reference_plan

    env = SimEnv(task="stacking", realism="ideal")
    try:
        env.reset(seed=0)
        step = next(s for s in reference_plan(env.task, env.scene_state)
                    if s.name == "pick")
        action = primitive_for(env.task, PlanStep(step.name, step.args), env.scene_state)
        qpos = env.data.qpos.copy()
        good = np.asarray(action["pose"], dtype=float)  # xyz + quaternion wxyz
        width = float(action["width"][0])
        assert simulated_pick_lifts(env, step.args[0], good, width)
        off = good.copy()
        off[0] += 0.12
        assert not simulated_pick_lifts(env, step.args[0], off, width)
        np.testing.assert_array_equal(env.data.qpos, qpos)
    finally:
        env.close()


@pytest.mark.slow
@pytest.mark.parametrize(("model", "expected"), [("sim-oracle", 1.0),
                                                 ("sim-oracle?checker=1&goal=1", 0.0)])
def test_rollout_labels_match_truth_perfect_and_inverted_oracle(tmp_path, model, expected):
    """The perfect oracle agrees with every label; one that flips every checker and goal
    verdict disagrees with every label, so labels come from the truth, not the oracle."""
    with ResultStore(tmp_path / "m.db") as store:
        count = module_bench.run_module_bench(model, ["stacking"], "lab", [0], store,
                                              ["checker", "goal"])
        rows = store.module_instances()
    assert count == len(rows) > 6
    checker = [r for r in rows if r["module"] == "checker"]
    assert {r["label_json"].count('"holds": true') > 0 for r in checker} == {True, False}
    assert all(r["success"] == bool(expected) for r in rows)
    text = format_module_table(rows)
    assert model in text and "checker SR" in text


def test_a_parser_naming_things_its_own_way_is_graded_as_the_oracles(tmp_path):
    """The graded plan runs on the true problem after the parser's own names (``cell-2``,
    ``left-cube-with-letter-a``, a spice bottle called ``jar``) are bound to scene objects:
    the grade measures the parse, not the spelling."""
    grades = {}
    for model in ("sim-oracle", "sim-oracle?names=described"):
        with ResultStore(tmp_path / "m.db") as store:
            module_bench.run_module_bench(model, ["crossword", "kitchen"], "lab", [2, 3],
                                          store, ["parser"])
            rows = [r for r in store.module_instances() if r["model"] == model]
        grades[model] = [r["success"] for r in rows]
        if model != "sim-oracle":
            answers = " ".join(r["answer_json"] for r in rows)
            assert "slot-1" not in answers and "spice-bottle-1" not in answers
    assert grades["sim-oracle"] == grades["sim-oracle?names=described"] == [1, 1, 1, 1]
