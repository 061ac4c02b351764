"""ALRM's trace judge: the panel rule, the panel's model specs and what a panel lacks, the
success rate, the offline judge from the truth (any order the task allows; with and without
injected errors) and bounded re-asks of malformed judge answers."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from agentic_env.agents.alrm.judge import (
    PANEL_SIZE,
    build_judge,
    combine_scores,
    disagreement_rate,
    disagrees,
    judge_query,
    judge_trace,
    judge_with_panel,
    panel_notes,
    panel_seats,
    parse_judges,
    success_rate,
)
from agentic_env.agents.models import Completion, MalformedResponseError, ModelQuery, Usage
from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.oracle import SimOracle, judge_factory
from agentic_env.oracle.judge import OracleJudge, truth_score
from agentic_env.tasks.kitchen import KitchenConfig, KitchenTask

TASK = "Put the lemon in the bowl, then the banana on the plate."
TRUTH = ["Pick up the lemon and place it in the bowl.",
         "Pick up the banana and place it on the plate."]


class Scripted:
    """A backend answering a fixed list of texts, recording the prompts it got."""

    name = "scripted"

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)
        self.prompts: list[str] = []

    def complete(self, query: ModelQuery) -> Completion:
        self.prompts.append(query.prompt)
        return Completion(self.texts.pop(0), Usage())


@pytest.mark.parametrize(("scores", "combined"), [
    ((2, 2, 0), 2.0), ((0, 1, 0), 0.0), ((1, 1, 1), 1.0), ((0, 1, 2), 1.0), ((2, 0, 1), 1.0),
    ((2,), 2.0), ((2, 1), 1.5), ((2, 2, 1, 1), 1.5), ((2, 2, 2, 0, 0), 2.0),
])
def test_majority_vote_and_mean_when_no_majority(scores: tuple[int, ...],
                                                 combined: float) -> None:
    assert combine_scores(scores) == combined


@pytest.mark.parametrize("scores", [(), (3, 2, 2), (-1,)])
def test_invalid_scores_are_refused(scores: tuple[int, ...]) -> None:
    with pytest.raises(InvalidConfigError, match="0, 1 or 2"):
        combine_scores(scores)


def test_success_rate_is_the_score_sum_over_twice_the_episodes() -> None:
    assert success_rate([2, 1, 0, 1.5]) == pytest.approx(4.5 / 8)
    assert success_rate([2.0] * 5) == 1.0
    with pytest.raises(InvalidConfigError):
        success_rate([])


@pytest.mark.parametrize(("executed", "score"), [
    (TRUTH, 2),
    (["pick up the LEMON and place it in the bowl", "Look around.", TRUTH[1]], 2),
    (["Pick up lemon and place it in a bowl!", "pick_up the banana and place it on the plate"],
     2),
    (TRUTH[:1], 1),
    (TRUTH[::-1], 2),  # no ordering given: any order solves the task
    (["Pick up the lemon and place it on the plate."], 0),
    ([], 0),
])
def test_truth_score(executed: list[str], score: int) -> None:
    assert truth_score(TRUTH, executed) == score


DRAWER_TRUTH = ["Open the top drawer.", "Pick up the lemon and place it in the top drawer.",
                "Pick up the pear and place it in the top drawer.", "Close the top drawer."]
#: The drawer's orderings: open before anything goes in, close after (subtask_dependencies).
DRAWER_AFTER = [(), (0,), (0,), (0, 1, 2)]


@pytest.mark.parametrize(("order", "score"), [
    ((0, 1, 2, 3), 2),
    ((0, 2, 1, 3), 2),  # the two items the other way round: a valid order
    ((0, 1, 3, 2), 1),  # the pear after the drawer was closed
    ((1, 0, 2, 3), 1),  # the lemon before the drawer was open, and closed too early
    ((3, 1, 2, 0), 1),  # nothing went in an open drawer: only the opening counts
    ((1, 2), 0),
])
def test_truth_score_accepts_the_orders_the_task_allows(order: tuple[int, ...],
                                                        score: int) -> None:
    executed = [DRAWER_TRUTH[i] for i in order]
    assert truth_score(DRAWER_TRUTH, executed, DRAWER_AFTER) == score


def test_orderings_must_point_to_earlier_subtasks() -> None:
    with pytest.raises(InvalidConfigError, match="earlier subtasks"):
        truth_score(TRUTH, TRUTH, [(), (1,)])
    with pytest.raises(InvalidConfigError, match="earlier subtasks"):
        truth_score(TRUTH, TRUTH, [()])


def test_the_offline_judge_reads_the_orderings_from_the_query() -> None:
    swapped = [DRAWER_TRUTH[i] for i in (0, 1, 3, 2)]
    judge = OracleJudge()
    assert judge_trace(judge, TASK, DRAWER_TRUTH, swapped).score == 2
    assert judge_trace(judge, TASK, DRAWER_TRUTH, swapped, after=DRAWER_AFTER).score == 1


def test_the_query_shows_the_task_and_both_sequences() -> None:
    query = judge_query(TASK, TRUTH, TRUTH[:1])
    assert query.module == "judge"
    assert TASK in query.prompt
    assert f"1. {TRUTH[0]}\n2. {TRUTH[1]}" in query.prompt
    assert "## Executed subtasks\n1. Pick up the lemon" in query.prompt
    assert judge_query(TASK, TRUTH, []).prompt.count("(none)") == 1
    assert query.fields["executed"] == TRUTH[:1]
    assert "after" not in query.fields


def test_the_query_marks_the_orderings() -> None:
    query = judge_query(TASK, DRAWER_TRUTH, [], DRAWER_AFTER)
    assert "1. Open the top drawer.\n2. Pick up the lemon and place it in the top drawer. " \
           "(after 1)" in query.prompt
    assert "4. Close the top drawer. (after 1, 2, 3)" in query.prompt
    assert query.fields["after"] == [[], [0], [0], [0, 1, 2]]


def test_offline_panel_without_errors_scores_the_truth() -> None:
    judges = [build_judge(f"sim-oracle?seed={seed}", oracle_factory=judge_factory)
              for seed in range(3)]
    assert all(isinstance(judge, OracleJudge) for judge in judges)
    for executed, expected in ((TRUTH, 2.0), (TRUTH[1:], 1.0), ([], 0.0)):
        panel = judge_with_panel(judges, TASK, TRUTH, executed)
        assert panel.score == expected
        assert [verdict.score for verdict in panel.verdicts] == [expected] * 3
    assert [verdict.judge for verdict in panel.verdicts] == [
        f"sim-oracle?judge=0&seed={seed}" for seed in range(3)]


def test_an_always_wrong_judge_never_gives_the_true_score() -> None:
    judge = build_judge("sim-oracle?judge=1&seed=4", oracle_factory=judge_factory)
    scores = {judge_trace(judge, TASK, TRUTH, TRUTH).score for _ in range(20)}
    assert scores == {0, 1}


def test_the_majority_of_three_unreliable_judges_beats_one() -> None:
    rng = np.random.default_rng(0)
    judges = [OracleJudge(error_rate=0.2, seed=seed) for seed in (1, 2, 3)]
    episodes = [TRUTH[: int(rng.integers(3))] for _ in range(150)]
    truths = [float(truth_score(TRUTH, executed)) for executed in episodes]
    panels = [judge_with_panel(judges, TASK, TRUTH, executed) for executed in episodes]
    single = sum(p.verdicts[0].score == t for p, t in zip(panels, truths, strict=True))
    panel = sum(p.score == t for p, t in zip(panels, truths, strict=True))
    assert 0.7 < single / len(episodes) < 0.9
    assert panel > single
    assert success_rate(truths) == pytest.approx(sum(truths) / 300)


def test_malformed_answers_are_re_asked_then_accepted() -> None:
    judge = Scripted("I think it went well.", json.dumps({"score": 3, "reasoning": "great"}),
                     json.dumps({"score": 1, "reasoning": "only the lemon"}))
    verdict = judge_trace(judge, TASK, TRUTH, TRUTH[:1])
    assert (verdict.score, verdict.reasoning, verdict.attempts) == (1, "only the lemon", 3)
    assert "YOUR PREVIOUS ANSWER WAS REJECTED" in judge.prompts[1]
    assert "$.score" in judge.prompts[2]


def test_re_asks_are_bounded() -> None:
    judge = Scripted("no", "still no", json.dumps({"score": 2, "reasoning": "fine"}))
    with pytest.raises(MalformedResponseError, match="2 attempts"):
        judge_trace(judge, TASK, TRUTH, TRUTH, retries=1)
    assert len(judge.prompts) == 2


def test_judge_specs() -> None:
    with pytest.raises(InvalidConfigError, match="judge"):
        build_judge("sim-oracle?judge=1.5")
    with pytest.raises(InvalidConfigError):
        OracleJudge(error_rate=-0.1)


def test_a_panel_is_a_list_of_judge_specs() -> None:
    panel = "gemini/gemini-3-pro, openai/gpt-5.2,anthropic/claude-opus-4.5"
    assert parse_judges(panel) == ("gemini/gemini-3-pro", "openai/gpt-5.2",
                                   "anthropic/claude-opus-4.5")
    assert panel_seats(parse_judges(panel)) == list(parse_judges(panel))
    assert panel_seats(("openai/gpt-5.2",)) == ["openai/gpt-5.2"] * PANEL_SIZE
    assert panel_notes(parse_judges(panel)) == []
    with pytest.raises(InvalidConfigError, match="separated by commas.*sim-oracle"):
        parse_judges("openai/gpt-5.2,,gemini/gemini-3-pro")
    with pytest.raises(InvalidConfigError, match="more than once"):
        parse_judges("openai/gpt-5.2,openai/gpt-5.2,gemini/gemini-3-pro")
    with pytest.raises(InvalidConfigError, match="did you mean 'sim-oracle'"):
        parse_judges("sim-orcale,openai/gpt-5.2")


def test_what_a_panel_lacks_is_said() -> None:
    alone = panel_notes(("openai/gpt-5.2",))
    assert len(alone) == 1 and "asked 3 times is not a panel" in alone[0]
    assert "split vote is averaged" in panel_notes(("openai/gpt-5.2", "gemini/gemini-3-pro"))[0]
    tested = panel_notes(("openai/gpt-5.2", "gemini/x", "anthropic/y"),
                         under_test=("gemini/x",))
    assert tested == ["judge gemini/x is also a model under test; ALRM's judges are distinct "
                      "from the models they assess"]
    assert panel_notes(("sim-oracle?judge=0.2",), under_test=("sim-oracle?judge=0.2",)) == []


def test_judge_and_world_disagreement() -> None:
    assert not disagrees(2.0, True) and not disagrees(1.0, False) and not disagrees(0.0, False)
    assert disagrees(2.0, False) and disagrees(1.5, True)
    assert disagreement_rate([(2.0, True), (2.0, False), (0.0, False), (1.0, True)]) == 0.5
    with pytest.raises(InvalidConfigError):
        disagreement_rate([])


def test_the_sim_oracle_answers_judge_queries(make_sim_env: Callable[..., SimEnv]) -> None:
    small = SceneConfig(shoulder_camera=azure_kinect_color(64, 36),
                        wrist_camera=realsense_d405(64, 36))
    env = make_sim_env(task=KitchenTask(replace(KitchenConfig(), variant="A")), scene=small)
    env.reset(seed=0)
    assert judge_trace(SimOracle(env), TASK, TRUTH, TRUTH[:1]).score == 1
    wrong = SimOracle(env, error_rates={"judge": 1.0}, seed=2)
    assert judge_trace(wrong, TASK, TRUTH, TRUTH[:1]).score in (0, 2)
