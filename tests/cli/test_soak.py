"""``agentic-env soak``'s sweep part: a real ``agentic-env sweep`` subprocess SIGKILLed in the
middle, resumed, and the database checked: every episode once, whole."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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
    roles = {p.role for p in resumed.per_process}
    assert {"sweep", "worker"} <= roles, resumed.per_process
    assert sum(p.role == "sweep" for p in resumed.per_process) == 1
    printed = "\n".join(soak._sweep_lines(result))
    assert "0 lost, 0 duplicated" in printed and "PASS" in printed
    assert "    sweep process " in printed and "    worker " in printed
    assert "run 2:" in capsys.readouterr().out


def _run(per_process: tuple[soak.ProcessRSS, ...]) -> soak.SweepRun:
    at = tuple(range(0, 101, 5))
    return soak.SweepRun(0, 100, 60.0, False, 0, 0, len(per_process), "", at,
                         tuple(sum(p.rss_mib[i] for p in per_process if i < len(p.at))
                               for i in range(len(at))),
                         per_process)


def test_per_process_fits_pin_the_growth_on_the_process_that_grew() -> None:
    at = tuple(range(0, 101, 5))
    flat = soak.ProcessRSS(1, "sweep", at, (300.0,) * len(at))
    growing = soak.ProcessRSS(2, "worker", at, tuple(800.0 + 0.5 * x for x in at))
    steady = soak.ProcessRSS(3, "worker", at, (800.0,) * len(at))
    planner = soak.ProcessRSS(4, "other", at[:2], (90.0, 95.0))
    run = _run((flat, growing, steady))
    slopes = {p.pid: fit[2] for p, fit in run.process_fits() if fit is not None}
    assert slopes == pytest.approx({1: 0.0, 2: 50.0, 3: 0.0})
    assert run.fit() is not None and run.fit()[2] == pytest.approx(50.0)
    with_planner = _run((flat, steady, planner))
    assert {p.pid for p, _ in with_planner.process_fits()} == {1, 3}, "others are not fitted"
    assert soak.process_bound(2) * 3 == pytest.approx(soak.RSS_BOUND_MIB)
    sweep = soak.SweepSoak(100, 2, 2, "ideal", (run, run), "ok", 100, *(0,) * 6)
    assert sweep.flat() is False and sweep.flat_per_process() is False
    lines = "\n".join(soak._process_lines(with_planner))
    assert "1 other processes" in lines and "the largest 95 MiB" in lines


def test_a_worker_fit_reads_its_floors_not_the_working_set_it_is_sampled_in() -> None:
    rng = np.random.default_rng(3)
    at = tuple(int(x) for x in np.repeat(np.arange(0, 200, 2), 3))
    # Flat between episodes (600 MiB), up to +150 MiB inside one, sampled at random phases,
    # with the peaks denser late in the run: a raw line through the samples rises.
    swing = rng.uniform(0.0, 150.0, len(at)) * np.linspace(0.3, 1.0, len(at))
    swing[::3] = 0.0  # a sample between episodes in every stored count
    worker = soak.ProcessRSS(2, "worker", at, tuple(600.0 + swing))
    run = soak.SweepRun(0, 200, 60.0, False, 0, 0, 1, "", at, worker.rss_mib, (worker,))
    ((_, fit),) = run.process_fits()
    assert fit is not None and fit[2] == pytest.approx(0.0, abs=1e-9)
    assert run.fit() is not None and run.fit()[2] > 10.0, "the raw samples' line rises"
    leaking = soak.ProcessRSS(3, "worker", at, tuple(600.0 + 0.3 * np.asarray(at) + swing))
    run = soak.SweepRun(0, 200, 60.0, False, 0, 0, 1, "", at, leaking.rss_mib, (leaking,))
    ((_, fit),) = run.process_fits()
    assert fit is not None and fit[2] == pytest.approx(30.0, abs=2.0)
