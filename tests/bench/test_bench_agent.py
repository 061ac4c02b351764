"""bench-agent's bookkeeping: table rows, and crashes recorded by the harness's pool (and in
the results database) instead of aborting the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_env.bench.agent import format_rows, run_all, summarise
from agentic_env.harness.db import ResultStore
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec


def test_summary_row_averages_episodes() -> None:
    spec = EpisodeSpec("sorting", realism="ideal")
    results = [EpisodeResult(spec, True, 1.0, 1.0, actions=4, replans=0, wall_s=10.0),
               EpisodeResult(spec, False, 0.5, 0.25, actions=8, replans=2, wall_s=20.0)]
    row = summarise("sorting / oracle", results)
    assert row["success"] == 0.5 and row["score"] == pytest.approx(0.625)
    assert row["actions"] == 6.0 and row["replans"] == 1.0 and row["wall_s"] == 15.0
    assert row["calls"] == 0.0
    assert "50%" in format_rows([row]).splitlines()[1]


def test_a_crashing_episode_becomes_an_error_result_in_its_place(tmp_path: Path) -> None:
    crash = EpisodeSpec("sorting", agent="no-such-agent", realism="ideal")
    other = EpisodeSpec("sorting", seed=1, agent="no-such-agent-either", realism="ideal")
    db = tmp_path / "bench_agent.db"
    results = run_all([crash, other], workers=1, db=db)
    assert [r.spec for r in results] == [crash, other]
    assert not results[0].success and results[0].failure == "error"
    assert "unknown agent 'no-such-agent'" in results[0].error
    with ResultStore(db) as store:  # recorded as the sweep runner records a crash
        rows = store.episodes()
    assert [(r["key"], r["failure"]) for r in rows] == [(crash.key(), "error"),
                                                         (other.key(), "error")]


def test_seeds_and_settings_are_parsed_with_errors_that_name_valid_values() -> None:
    from agentic_env.cli.bench.agent import main, parse_seeds, parse_settings
    from agentic_env.errors import InvalidConfigError

    assert parse_seeds("5000:3") == range(5000, 5003) and parse_seeds("2") == range(2)
    assert parse_settings("kitchen, outdoor") == ["kitchen", "outdoor"]
    with pytest.raises(InvalidConfigError, match="START:COUNT"):
        parse_seeds("a:b")
    with pytest.raises(InvalidConfigError, match="unknown moon; valid: .*kitchen"):
        parse_settings("lab,moon")
    assert main(["--agent", "no-such-agent"]) == 2
    assert main(["--agent-option", "colour=red"]) == 2
    with pytest.raises(SystemExit):
        main(["--instruction-categories", "poetic"])
