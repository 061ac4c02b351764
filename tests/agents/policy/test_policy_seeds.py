"""A policy is never evaluated on a layout it was trained on: the checkpoint records its
demonstrations' seeds, and the harness refuses such a trial before the episode runs."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from support.tiny_policy import SEED

from agentic_env.agents.base import AgentSetup, make_agent
from agentic_env.agents.models.base import Completion, ModelQuery
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.agents.policy.checkpoint import CHECKPOINT_FILES
from agentic_env.agents.policy.seeds import TRAIN_CONFIG, training_seeds
from agentic_env.cli import run
from agentic_env.contract.seeds import DEMONSTRATION_SEED_START, read_seeds, write_seeds
from agentic_env.errors import InvalidConfigError

BOTH_RANGES = r"0-999999 and collect demonstrations from 1000000-1999999"


def _checkpoint(folder: Path, seeds: list[int] | None) -> Path:
    """A ``pretrained_model`` folder as far as the seed check reads it (the weights are
    never loaded: the check comes first)."""
    folder.mkdir(parents=True)
    for name in CHECKPOINT_FILES:
        (folder / name).write_text("{}")
    if seeds is not None:
        write_seeds(folder, seeds, source="test")
    return folder


class _NoModel:
    """The policy queries no model."""

    name = "none"

    def complete(self, query: ModelQuery) -> Completion:
        raise AssertionError(f"the policy asked {query.module}")


def _check(checkpoint: Path, seed: int) -> None:
    """The policy agent's check of trial ``seed`` (what the harness asks before an episode)."""
    agent = make_agent("policy", AgentSetup(models=ModuleContext(ModelRouter(_NoModel())),
                                            options={"checkpoint": str(checkpoint)}))
    agent.check_trial("stacking", seed)


def test_the_trained_checkpoint_records_its_datasets_seeds(
        tiny_policy: tuple[Path, Path]) -> None:
    dataset, checkpoint = tiny_policy
    assert read_seeds(dataset / "meta") == (SEED,)
    assert training_seeds(checkpoint) == (SEED,)
    _check(checkpoint, 0)
    with pytest.raises(InvalidConfigError, match="outside the evaluation range"):
        _check(checkpoint, SEED)


def test_a_run_on_a_training_layout_is_refused_before_the_episode(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A checkpoint trained before the ranges were reserved (on seeds 5 and 6)."""
    checkpoint = _checkpoint(tmp_path / "old", [5, 6])
    out = tmp_path / "runs"
    argv = ["--task", "stacking", "--agent", "policy", "--agent-option",
            f"checkpoint={checkpoint}", "--out", str(out), "--no-video", "--quiet"]
    assert run.main([*argv, "--seed", "6"]) == 2
    error = capsys.readouterr().err
    assert f"evaluation seed(s) 6 are layouts the checkpoint {checkpoint} was trained on" in error
    assert "evaluate on " + BOTH_RANGES in error
    assert not out.exists()  # no trace: nothing ran
    assert run.main([*argv, "--seed", str(DEMONSTRATION_SEED_START)]) == 2
    assert "outside the evaluation range 0-999999" in capsys.readouterr().err


def test_a_lerobot_train_checkpoint_is_checked_against_its_dataset(tmp_path: Path) -> None:
    """``lerobot-train`` saves ``train_config.json``; its ``dataset.root`` records the seeds."""
    dataset = tmp_path / "dataset"
    write_seeds(dataset / "meta", [3, DEMONSTRATION_SEED_START], source="dataset")
    checkpoint = _checkpoint(tmp_path / "run" / "checkpoints" / "last" / "pretrained_model", None)
    (checkpoint / TRAIN_CONFIG).write_text(json.dumps({"dataset": {"root": str(dataset)}}))
    assert training_seeds(checkpoint) == (3, DEMONSTRATION_SEED_START)
    _check(tmp_path / "run", 4)  # a training run's folder resolves to its last checkpoint
    with pytest.raises(InvalidConfigError, match=BOTH_RANGES):
        _check(tmp_path / "run", 3)


def test_a_checkpoint_without_seeds_runs_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    checkpoint = _checkpoint(tmp_path / "old", None)
    with caplog.at_level(logging.WARNING):
        _check(checkpoint, 5)
    assert f"the checkpoint {checkpoint} records no demonstration seeds" in caplog.text
    _check(tmp_path / "missing", 5)  # no checkpoint: the agent reports it when it runs
    with pytest.raises(InvalidConfigError, match="outside the evaluation range"):
        _check(tmp_path / "missing", DEMONSTRATION_SEED_START)


def test_train_policy_collects_from_the_demonstration_range_only(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentic_env.cli import policy

    assert policy._parser().parse_args([]).seed_start == DEMONSTRATION_SEED_START
    argv = ["--task", "stacking", "--dataset", str(tmp_path / "dataset"), "--out",
            str(tmp_path / "policy")]
    assert policy.main([*argv, "--seed-start", "1000"]) == 2  # the start of old
    error = capsys.readouterr().err
    assert "error: demonstration seed(s) 1000" in error
    assert "outside the demonstration range 1000000-1999999 (evaluations use 0-999999)" in error
    assert not (tmp_path / "policy").exists()
