"""bench-agent's bookkeeping: table rows, and crashes recorded instead of aborting the run."""

from __future__ import annotations

import pytest

from agentic_env.agents.episode import EpisodeResult, EpisodeSpec
from agentic_env.cli.bench.agent import _run, format_rows, summarise


def test_summary_row_averages_episodes() -> None:
    spec = EpisodeSpec("sorting")
    results = [EpisodeResult(spec, True, 1.0, 1.0, actions=4, replans=0, wall_s=10.0),
               EpisodeResult(spec, False, 0.5, 0.25, actions=8, replans=2, wall_s=20.0)]
    row = summarise("sorting / oracle", results)
    assert row["success"] == 0.5 and row["score"] == pytest.approx(0.625)
    assert row["actions"] == 6.0 and row["replans"] == 1.0 and row["wall_s"] == 15.0
    assert "50%" in format_rows([row]).splitlines()[1]


def test_a_crashing_episode_becomes_an_error_result() -> None:
    result = _run(EpisodeSpec("sorting", agent="no-such-agent"))
    assert not result.success and result.failure == "error"
    assert "unknown agent 'no-such-agent'" in result.error
