"""``agentic-env bench-robosuite``: both worlds against a robosuite interpreter's figures (a
stand-in interpreter here: robosuite is no dependency of the project)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_env.bench import robosuite as bench_robosuite
from agentic_env.cli.bench import robosuite


def _interpreter(tmp_path: Path, output: str, status: int = 0) -> Path:
    """An executable that ignores its arguments and prints ``output``."""
    path = tmp_path / "python"
    path.write_text(f"#!/bin/sh\necho '{output}'\nexit {status}\n")
    path.chmod(0o755)
    return path


def test_it_prints_both_worlds_against_robosuite_and_writes_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = _interpreter(tmp_path, json.dumps({"steps_per_s": 0.5, "reset_s": 3.0,
                                              "version": "9.9"}))
    out = tmp_path / "bench.json"
    status = robosuite.main(["--robosuite-python", str(fake), "--steps", "2", "--rounds", "1",
                             "--out", str(out), "--db", str(tmp_path / "bench.db")])
    printed = capsys.readouterr().out
    result = json.loads(out.read_text())
    assert set(result["simulators"]) == {"ideal", "realistic", "robosuite"}
    for realism in ("ideal", "realistic"):
        figures = result["simulators"][realism]
        assert figures["steps_per_s"] > 0 and figures["reset_s"] > 0
        assert result["ratio_to_robosuite"][realism] == pytest.approx(
            figures["steps_per_s"] / 0.5)
    assert "robosuite 9.9 Lift (Panda)" in printed and "realistic / robosuite" in printed
    assert status == (0 if result["ratio_to_robosuite"]["realistic"] >= 5 else 1)


def test_a_failing_robosuite_interpreter_says_how_to_install_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench_robosuite, "_own_steps",
                        lambda realism, steps, seed: {"steps_per_s": 1.0, "reset_s": 0.1})
    fake = _interpreter(tmp_path, "ModuleNotFoundError: robosuite", status=1)
    assert robosuite.main(["--robosuite-python", str(fake), "--out",
                           str(tmp_path / "x.json"), "--db", str(tmp_path / "x.db")]) == 2
    assert not (tmp_path / "x.db").exists(), "nothing measured, nothing recorded"
    assert "pip install robosuite==1.5.2" in capsys.readouterr().err


def test_one_outlier_round_moves_the_median_ratio_little(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each round's ratio is measured back to back; the figure is their median, so one
    round where robosuite ran 20x faster (a background burst elsewhere) does not decide it,
    as keeping each simulator's best round would."""
    own = iter([10.0, 5.0, 10.0, 5.0, 10.0, 5.0])  # ideal, realistic per round
    robosuite_rates = iter([2.0, 40.0, 2.0])
    monkeypatch.setattr(bench_robosuite, "_own_steps", lambda realism, steps, seed: {
        "steps_per_s": next(own), "reset_s": 0.1})
    monkeypatch.setattr(bench_robosuite, "_robosuite_steps", lambda python, steps, seed: {
        "steps_per_s": next(robosuite_rates), "reset_s": 3.0})
    result = bench_robosuite.run(tmp_path / "python", steps=2, rounds=3, seed=0)
    assert [r["realistic"] for r in result["per_round"]] == [2.5, 0.125, 2.5]
    assert result["ratio_to_robosuite"] == {"ideal": 5.0, "realistic": 2.5}
    assert result["simulators"]["robosuite"]["steps_per_s"] == 2.0
    # the outlier round's own rates say which side it came from
    assert result["steps_per_round"][1] == {"ideal": 10.0, "realistic": 5.0,
                                            "robosuite": 40.0}
