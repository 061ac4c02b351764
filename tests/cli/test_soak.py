"""``agentic-env soak``'s sweep part: a real ``agentic-env sweep`` subprocess SIGKILLed in the
middle, resumed, and the database checked: every episode once, whole; and each part's summary
figures recorded as a measurement (a real MCP part; the others' figures stubbed), which the
report shows and a run again replaces."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from agentic_env.bench.store import report_command
from agentic_env.cli.bench import soak
from agentic_env.cli.harness import report_main
from agentic_env.harness.db import ResultStore


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


def _rows(db: Path) -> list[dict]:
    with ResultStore(db) as store:
        assert store.episodes() == []  # the soak's figures are measurements, not episodes
        return store.measurements()


def _report(db: Path, out: Path) -> str:
    assert report_main([str(db), "--out", str(out)]) == 0
    return (out / "report.md").read_text()


def test_the_mcp_part_is_recorded_and_a_run_again_replaces_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "soak.db"
    argv = ["--episodes", "0", "--calls", "100", "--sweep-episodes", "0", "--db", str(db)]
    assert soak.main(argv) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[0].startswith("MCP server: 100 calls")
    assert printed[-1] == f"measurements recorded in {db}; report: {report_command(db)}"
    (row,) = _rows(db)
    assert row["bench"] == "soak" and row["params"] == {"part": "mcp", "calls": 100, "seed": 0}
    figures = row["figures"]
    assert (figures["runs"], figures["per"], figures["unit"]) == (100, 1000, "calls")
    assert figures["crashes"] == 0 and figures["lost"] == 0 and figures["rss_end_mib"] > 0
    assert soak.main(argv) == 0
    assert [r["key"] for r in _rows(db)] == [row["key"]]
    text = _report(db, tmp_path / "report")
    assert "### soak:" in text and "| MCP server | 100 calls | " in text
    assert " per 1,000 calls | 0 | 0 | – |" in text


def _sweep_soak() -> soak.SweepSoak:
    """A 200-episode sweep part killed at 100: the sweep process flat, a worker growing 5 MiB
    per 100 episodes (within its share of the bound)."""
    runs = []
    for start, killed in ((0, True), (100, False)):
        at = tuple(range(start, start + 101, 2))
        sweep = soak.ProcessRSS(1 + start, "sweep", at, (300.0,) * len(at))
        worker = soak.ProcessRSS(2 + start, "worker", at, tuple(800.0 + 0.05 * x for x in at))
        tracker = soak.ProcessRSS(3 + start, "other", at[:3], (20.0, 25.0, 22.0))
        runs.append(soak.SweepRun(start, start + 100, 600.0, killed, -9 if killed else 0, 0, 3,
                                  "(none)", at, tuple(1100.0 + 0.05 * x for x in at),
                                  (sweep, worker, tracker)))
    return soak.SweepSoak(200, 2, 2, "realistic", (runs[0], runs[1]), "ok", 200, *(0,) * 6)


def test_each_part_is_recorded_with_its_summary_figures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    episodes = soak.SoakFigures(10, 380.0, 400.0, 1.5, 100, 0, 0)
    monkeypatch.setattr(soak, "soak_episodes", lambda n, database, agent: episodes)
    monkeypatch.setattr(soak, "soak_sweep", lambda *args, **kwargs: _sweep_soak())
    db = tmp_path / "soak.db"
    assert soak.main(["--episodes", "10", "--calls", "0", "--sweep-episodes", "200",
                      "--max-actions", "2", "--db", str(db)]) == 0
    worker, sweep = _rows(db)
    assert worker["params"] == {"part": "episodes", "episodes": 10, "agent": "agenticlab"}
    assert worker["figures"] == {**asdict(episodes), "unit": "episodes"}
    assert sweep["params"] == {"part": "sweep", "episodes": 200, "workers": 2, "kill_at": 0.5,
                               "max_actions": 2, "realism": "realistic"}
    figures = sweep["figures"]
    assert figures["intact"] is True and figures["flat"] is True
    assert figures["flat_per_process"] is True and figures["integrity"] == "ok"
    assert figures["process_bound_mib"] == pytest.approx(soak.process_bound(2))
    first = figures["runs"][0]
    assert first["killed"] and first["exit_code"] == -9 and first["slope_mib"] == pytest.approx(5)
    assert [(p["role"], p["samples"]) for p in first["per_process"]] == [("sweep", 51),
                                                                         ("worker", 51)]
    assert first["per_process"][1]["slope_mib"] == pytest.approx(5.0)
    assert (first["others"], first["others_largest_mib"]) == (1, 25.0)
    assert "at" not in first and "rss_mib" not in first, "the summary, not the samples"
    text = _report(db, tmp_path / "report")
    assert "| sweep worker | 10 episodes (agenticlab) | 380 -> 400 | +1.5 per 100 episodes |" \
        in text
    assert ("| sweep killed and resumed | 200 episodes, realistic, 2 workers, max_actions 2, "
            "kill at 50 % | run 1: 1101 -> 1105; run 2: 1106 -> 1110 | runs +5.0, +5.0 per 100 "
            "episodes (bound 20: PASS); per process at most +5.0 (share 6.7: PASS) | 0 stored "
            "as errors | 0 lost, 0 duplicated, 0 extra, 0 unparsable, 0 orphan calls | "
            "integrity ok, 200/200 stored: PASS |") in text
