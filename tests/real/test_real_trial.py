"""Paired trials: the same trial spec and agent in sim and on the real path (twin drivers),
scored by the operator rubric with the sim's formula, stored in one results database and
reported side by side with Pearson r and MMRV."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("serial")

from agentic_env.cli import setup_sheet  # noqa: E402
from agentic_env.cli import trial as trial_cli  # noqa: E402
from agentic_env.cli.real import trial_report_main  # noqa: E402
from agentic_env.contract.trial import TrialSpec  # noqa: E402
from agentic_env.harness import trial  # noqa: E402
from agentic_env.harness.db import Finished, ResultStore  # noqa: E402
from agentic_env.harness.episode import EpisodeSpec  # noqa: E402
from agentic_env.pddl.planning import PlanStep  # noqa: E402
from agentic_env.real.twin import make_twin_env  # noqa: E402
from agentic_env.reports import trial_report  # noqa: E402


def scripted(answers: list[str]) -> Callable[[str], str]:
    """An operator who gives these answers in order."""
    remaining: Iterator[str] = iter(answers)
    return lambda _prompt: next(remaining)


@pytest.fixture(scope="module")
def stacking_trial(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("trial")
    assert setup_sheet.main(["--task", "stacking", "--seed", "0", "--out", str(folder)]) == 0
    return folder / "trial.json"


def test_pearson_and_mmrv() -> None:
    assert trial_report.mmrv([0.2, 0.5, 0.9], [0.3, 0.4, 0.8]) == 0.0
    # items 0 and 1 swap order: each one's worst violation is |0.6 - 0.2|
    assert trial_report.mmrv([0.1, 0.5, 0.9], [0.6, 0.2, 0.9]) == pytest.approx(0.8 / 3)
    sim, real = [0.1, 0.4, 0.5, 1.0], [0.0, 0.5, 0.4, 0.9]
    x, y = np.array(sim) - np.mean(sim), np.array(real) - np.mean(real)
    expected = (x @ y) / np.sqrt((x @ x) * (y @ y))
    assert trial_report.pearson(sim, real) == pytest.approx(expected)
    assert trial_report.pearson([1.0], [1.0]) is None
    assert trial_report.pearson([1.0, 1.0], [0.0, 1.0]) is None


def test_rubric_uses_the_sims_progress_formula() -> None:
    reference = [PlanStep("pick", ("a", "table")), PlanStep("place-on-object", ("a", "b")),
                 PlanStep("pick", ("c", "table")), PlanStep("place-on-object", ("c", "a"))]
    answers = trial.RubricAnswers(success=False, done=(True, True, False, False), n_extra=1)
    score = trial.rubric_score(answers, reference, goal_checker_error=True)
    assert (score.n_done, score.n_extra, score.n_required) == (2, 1, 4)
    assert score.score == pytest.approx((2 - 1) / 4 - 0.1)


def test_declined_primitive_ends_the_real_episode(stacking_trial: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    reference_steps = 12  # the stacking seed-0 reference plan
    answers = ["", "n", "n", *["n"] * reference_steps, "0"]
    code = trial_cli.main([str(stacking_trial), "--backend", "real", "--twin", "--db", str(db),
                       "--out", str(tmp_path / "real"), "--confirm-each-step"],
                      ask=scripted(answers))
    assert code == 0
    assert (tmp_path / "real" / "setup_sheet.png").exists()
    with ResultStore(db) as store:
        (row,) = store.episodes()
    assert row["key"].endswith(trial.REAL_KEY_SUFFIX) and row["worker"] == "twin"
    assert not row["success"] and row["score"] == 0.0 and row["n_required"] == reference_steps
    assert row["failure"] == "execution" and "declined" in row["failure_detail"]
    assert row["actions"] == 0


@pytest.mark.slow
def test_paired_trial_in_sim_and_on_the_twin(stacking_trial: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    assert trial_cli.main([str(stacking_trial), "--backend", "sim", "--db", str(db),
                       "--out", str(tmp_path / "sim")]) == 0
    spec = TrialSpec.load(stacking_trial)
    episode = trial.episode_spec(spec, "agenticlab", "sim-oracle", 40, "full")
    env, twin = make_twin_env(task=spec.task, trial=spec)
    world = twin.world.env
    answers = ["", "y", *["y"] * 12, "0"]
    result = trial.run_real_trial(spec, episode, env, scripted(answers), tmp_path / "real",
                                  oracle_env=world)
    try:  # the operator said yes: the twin's world must agree (the harness's privilege)
        assert world.task.evaluate(world.scene_state).success
    finally:
        world.close()
    assert result.success and result.score == 1.0 and result.actions > 0
    with ResultStore(db) as store:
        store.record(Finished(episode.key() + trial.REAL_KEY_SUFFIX, result,
                                    result.wall_s, "twin"))
        pairs = trial_report.pair_episodes(store.episodes())
    assert len(pairs) == 1 and pairs[0].sim["key"] == EpisodeSpec.from_dict(
        episode.to_dict()).key()
    text = trial_report.render_report(pairs)
    sim = pairs[0].sim
    assert (f"| stacking | lab | 0 | sim-oracle | {'yes' if sim['success'] else 'no'} | "
            f"{sim['score']:.2f} | yes | 1.00 |") in text
    assert trial_report_main([str(db), "--out", str(tmp_path / "report.md")]) == 0
    assert (tmp_path / "report.md").read_text() == text


def test_a_toy_agent_registered_here_runs_the_twin_backed_real_trial(
        stacking_trial: Path, tmp_path: Path) -> None:
    from support.toy_agent import TOY_FAILURE, make_toy

    from agentic_env.agents.base import register_agent, unregister_agent

    register_agent("toy", make_toy, failure_sources=(TOY_FAILURE,))
    try:
        spec = TrialSpec.load(stacking_trial)
        episode = trial.episode_spec(spec, "toy", "sim-oracle", 40, "full")
        env, twin = make_twin_env(task=spec.task, trial=spec)
        answers = ["", "n", *["n"] * 12, "0"]
        result = trial.run_real_trial(spec, episode, env, scripted(answers), tmp_path / "real",
                                      oracle_env=twin.world.env)
        twin.world.env.close()
    finally:
        unregister_agent("toy")
    assert result.spec.agent == "toy" and not result.success
    assert result.actions == 1 and result.failure == TOY_FAILURE
    assert "home ok" in result.failure_detail and result.n_required == 12


def test_an_estop_trial_on_the_twin_refuses_motion_until_the_twin_releases_it(
        tmp_path: Path) -> None:
    """The paired intervention trial: the e-stop is fed by the twin arm's safety status."""
    from agentic_env.harness.real_events import twin_hands

    folder = tmp_path / "sheet"
    assert setup_sheet.main(["--task", "stacking", "--seed", "0", "--kind", "estop",
                             "--out", str(folder)]) == 0
    spec = TrialSpec.load(folder / "trial.json")
    assert [e["kind"] for e in spec.events] == ["estop", "estop_release"]
    episode = trial.episode_spec(spec, "planner-executor", "sim-oracle", 40, "full")
    assert episode.kind == "estop" and episode.events == ()
    env, twin = make_twin_env(task=spec.task, trial=spec)
    world = twin.world.env
    answers = ["", "y", *["y"] * 12, "0"]
    try:
        result = trial.run_real_trial(spec, episode, env, scripted(answers), tmp_path / "real",
                                      oracle_env=world, hands=twin_hands(env, twin))
        assert world.task.evaluate(world.scene_state).success
    finally:
        world.close()
    assert result.success and result.actions > 0, result.failure_detail
    measures = result.intervention
    assert measures is not None and measures["events"] == ["estop", "estop_release"]
    assert measures["estop_refused"] == 0 and measures["kind"] == "estop"
    assert env.safety_fault is None  # the release cleared the latched emergency stop


def no_operator(_prompt: str) -> str:
    """A closed standard input."""
    raise EOFError


@pytest.fixture
def toy_agent() -> Iterator[None]:
    from support.toy_agent import TOY_FAILURE, make_toy

    from agentic_env.agents.base import register_agent, unregister_agent

    register_agent("toy", make_toy, failure_sources=(TOY_FAILURE,))
    yield
    unregister_agent("toy")


def test_a_closed_input_leaves_the_episode_stored_unscored(
        stacking_trial: Path, tmp_path: Path, toy_agent: None) -> None:
    db = tmp_path / "db.sqlite"
    asked: list[str] = []

    def operator(prompt: str) -> str:
        asked.append(prompt)
        if len(asked) == 1:
            return ""  # the layout
        with ResultStore(db) as store:  # stored before the rubric's first question
            assert [row["failure"] for row in store.episodes()] == [trial.UNSCORED]
        raise EOFError

    assert trial_cli.main([str(stacking_trial), "--backend", "real", "--twin", "--db", str(db),
                           "--out", str(tmp_path / "real"), "--agent", "toy"],
                          ask=operator) == 0
    with ResultStore(db) as store:
        (row,) = store.episodes()
    assert row["failure"] == trial.UNSCORED and "input ended" in row["failure_detail"]
    assert row["actions"] == 1 and row["n_required"] == 12 and not row["success"]


def test_answers_that_are_not_a_number_are_asked_a_bounded_number_of_times(
        stacking_trial: Path, tmp_path: Path, toy_agent: None) -> None:
    db = tmp_path / "db.sqlite"
    asked: list[str] = []

    def yes(prompt: str) -> str:  # `yes | agentic-env trial ...`
        asked.append(prompt)
        assert len(asked) < 100
        return "y"

    assert trial_cli.main([str(stacking_trial), "--backend", "real", "--twin", "--db", str(db),
                           "--out", str(tmp_path / "real"), "--agent", "toy"], ask=yes) == 0
    assert len(asked) == 1 + 1 + 12 + trial.RUBRIC_TRIES
    with ResultStore(db) as store:
        (row,) = store.episodes()
    assert row["failure"] == trial.UNSCORED and "not a number" in row["failure_detail"]


def test_a_scored_rubric_replaces_the_unscored_row(
        stacking_trial: Path, tmp_path: Path, toy_agent: None) -> None:
    db = tmp_path / "db.sqlite"
    answers = ["", "n", *["n"] * 12, "oops", "1"]
    assert trial_cli.main([str(stacking_trial), "--backend", "real", "--twin", "--db", str(db),
                           "--out", str(tmp_path / "real"), "--agent", "toy"],
                          ask=scripted(answers)) == 0
    with ResultStore(db) as store:
        (row,) = store.episodes()
        assert len(store.calls()) == 0
    assert row["failure"] != trial.UNSCORED and row["n_extra"] == 1


@pytest.mark.slow  # two whole episodes, one of them with its trace video
def test_the_auto_rubric_runs_the_paired_trial_unattended(stacking_trial: Path,
                                                           tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    for backend in (["sim"], ["real", "--twin", "--rubric", "auto"]):
        assert trial_cli.main([str(stacking_trial), "--backend", *backend, "--db", str(db),
                               "--out", str(tmp_path / backend[0]),
                               "--agent", "planner-executor"], ask=no_operator) == 0
    with ResultStore(db) as store:
        sim, real = store.episodes()
    assert real["failure"] != trial.UNSCORED and real["success"] and real["score"] == 1.0
    assert real["n_done"] == real["n_required"] == 12
    assert trial_report_main([str(db), "--out", str(tmp_path / "report.md")]) == 0
    assert "1 paired trials" in (tmp_path / "report.md").read_text()
    assert trial_cli.main([str(stacking_trial), "--backend", "sim", "--rubric", "auto",
                           "--db", str(db)], ask=no_operator) == 1


def test_a_low_level_agent_refuses_confirmation_per_primitive(
        stacking_trial: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert trial_cli.main([str(stacking_trial), "--backend", "real", "--twin",
                           "--agent", "policy", "--confirm-each-step",
                           "--db", str(tmp_path / "db.sqlite")], ask=no_operator) == 1
    assert "--confirm-each-step confirms primitives" in capsys.readouterr().out
