"""Open-loop replay of a recorded episode from its TrialSpec."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from support.dataset_helpers import collected_dataset

from agentic_env.cli.datasets import replay_demo_main
from agentic_env.datasets.replay import replay_episode
from agentic_env.errors import InvalidConfigError


def test_joint_position_replay_reproduces_the_episode(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, _, _ = collected_dataset()
    assert replay_demo_main([str(root), "--episodes", "0", "--json", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "FAITHFUL" in out and "outcome reproduced in 1/1" in out
    report = json.loads((tmp_path / "r.json").read_text())[0]
    assert report["recorded_success"] and report["replayed_success"]
    assert report["initial_state_error"] == 0.0  # the trial spec rebuilds the start bitwise
    assert report["max_joint_error"] < 1e-3  # float32 targets: close, not bitwise
    assert report["max_tcp_error"] < 1e-3
    assert report["disturbances_skipped"] == 0


def test_ee_delta_replay_reports_its_drift() -> None:
    root, _, _ = collected_dataset()
    report = replay_episode(root, 1, mode="ee_delta")
    assert report.frames > 100
    assert math.isfinite(report.max_joint_error) and report.max_joint_error > 0.0
    assert report.initial_state_error == 0.0


def test_replay_rejects_bad_arguments() -> None:
    root, _, _ = collected_dataset()
    with pytest.raises(InvalidConfigError, match="valid: joint_position, ee_delta"):
        replay_episode(root, 0, mode="torque")
    with pytest.raises(InvalidConfigError, match="out of range"):
        replay_episode(root, 5)
