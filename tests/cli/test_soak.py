"""``agentic-env soak``'s sweep part: a real ``agentic-env sweep`` subprocess SIGKILLed in the
middle, resumed, and the database checked: every episode once, whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_env.cli.bench import soak


def test_sweep_file_runs_every_combination_once_in_turn() -> None:
    grid = soak.sweep_file(2 * soak.ROUND * len(soak.MODELS), 8, "realistic")["grid"]
    combos = [(g["tasks"][0], g["agents"][0], g["models"][0], g["seeds"][0]) for g in grid]
    assert len(set(combos)) == len(combos)
    assert [c[0] for c in combos[:5]] == list(soak.TASKS)
    assert {c[1] for c in combos[:soak.ROUND]} == set(soak.AGENTS)
    assert {g["realism"][0] for g in grid} == {"realistic"}


def test_killed_sweep_resumes_with_nothing_lost(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    result = soak.soak_sweep(4, tmp_path, workers=1, kill_at=0.5, max_actions=2,
                             realism="ideal", poll_s=0.1, sample_s=0.5)
    killed, resumed = result.runs
    assert killed.killed and killed.exit_code == -9 and killed.survivors == 0
    assert 2 <= killed.stored_end < 4, "the kill came after 2 episodes, before the end"
    assert not resumed.killed and resumed.exit_code == 0 and resumed.stored_end == 4
    assert f"{killed.stored_end} already done" in resumed.summary
    assert result.intact(), result
    assert (result.lost, result.duplicated, result.unparsable, result.orphan_calls) == (0,) * 4
    assert len(resumed.at) == len(resumed.rss_mib) > 0 and max(resumed.rss_mib) > 0
    printed = "\n".join(soak._sweep_lines(result))
    assert "0 lost, 0 duplicated" in printed and "PASS" in printed
    assert "run 2:" in capsys.readouterr().out
