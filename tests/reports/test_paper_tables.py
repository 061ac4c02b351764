"""A paper's end-to-end table beside the prediction: Wilson intervals and verdicts per row,
the table's parsing, the resampled rates, the shipped Table I sweep and the report's block."""

from __future__ import annotations

import pathlib

import pytest

from agentic_env.errors import InvalidConfigError
from agentic_env.harness.db import Finished, ResultStore
from agentic_env.harness.episode import EpisodeResult
from agentic_env.harness.paper_tables import PaperTable, compare, parse_paper_table
from agentic_env.harness.sweep import load_sweep, model_label, parse_sweep
from agentic_env.oracle.profile import load_profile
from agentic_env.reports.report import write_report

TABLE_ONE = pathlib.Path(__file__).resolve().parents[2] / "sweeps" / "paper" / \
    "table1-single-vlm.yaml"

TABLE = {"id": "t", "source": "Paper Table I", "where": {"task": "sorting"},
         "rows": [{"label": "A", "model": "sim-oracle", "success": 0.75, "time_s": 300,
                   "tokens": 60000},
                  {"label": "A + D", "model": "sim-oracle",
                   "modules": {"detector": "sim-oracle?detector=0.5"}, "success": 0.0,
                   "time_s": None, "tokens": None}]}


def _episode(model: str, success: bool, sim_s: float = 0.0, model_s: float = 0.0,
             tokens: int = 0, task: str = "sorting") -> dict[str, object]:
    return {"model": model, "task": task, "success": success, "sim_s": sim_s,
            "model_s": model_s, "input_tokens": tokens, "output_tokens": 0}


def test_compare_rows_with_wilson_interval_times_over_successes_and_verdicts() -> None:
    table = PaperTable.from_dict(TABLE)
    label_b = table.rows[1].model_label
    assert label_b == "sim-oracle [detector=sim-oracle?detector=0.5]"
    episodes = ([_episode("sim-oracle", True, 100.0, 200.0, 50000)] * 15
                + [_episode("sim-oracle", False, 10.0, 20.0, 9)] * 5
                + [_episode(label_b, False, 50.0, 50.0, 7)] * 4
                + [_episode("sim-oracle", False, task="stacking")] * 3)
    comparison = compare(table, episodes)
    a, b = comparison.rows
    assert (a.n, a.successes) == (20, 15)
    # Wilson 95 % for 15/20: [0.5313, 0.8881]
    assert (a.ci_low, a.ci_high) == pytest.approx((0.5313, 0.8881), abs=1e-4)
    assert a.agrees and a.label == "agree"
    assert a.time_s == pytest.approx(300.0)  # sim_s + model_s over the successes
    assert a.tokens == pytest.approx(50000)
    assert a.time_all_s == pytest.approx((15 * 300 + 5 * 30) / 20)
    assert (b.n, b.successes, b.time_s, b.tokens) == (4, 0, None, None)
    assert (b.ci_low, b.label) == (0.0, "agree")
    assert comparison.mmrv == 0.0 and comparison.spearman == pytest.approx(1.0)
    # a paper rate outside the interval disagrees; a row with no episodes has no data
    far = compare(PaperTable.from_dict({**TABLE, "rows": [{**TABLE["rows"][0],
                                                           "success": 0.3}]}), episodes)
    assert far.rows[0].label == "disagree"
    empty = compare(table, [])
    assert [c.label for c in empty.rows] == ["no data", "no data"]
    assert empty.spearman is None and empty.mmrv is None


@pytest.mark.parametrize(("change", "message"), [
    ({"colour": 1}, "unknown key"),
    ({"rows": []}, "non-empty list"),
    ({"rows": [{"label": "A", "model": "m", "success": 75}]}, r"rate in \[0, 1\]"),
    ({"rows": [{"label": "A", "success": 0.5}]}, "needs 'model'"),
    ({"rows": [TABLE["rows"][0], TABLE["rows"][0]]}, "same models"),
])
def test_bad_tables_say_what_is_wrong(change: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidConfigError, match=message):
        PaperTable.from_dict({**TABLE, **change})


def test_the_table_round_trips_through_a_sweep_and_the_database(tmp_path) -> None:
    sweep = parse_sweep({"grid": {"tasks": ["sorting"]}, "paper_table": TABLE})
    assert sweep.paper_table == PaperTable.from_dict(TABLE)
    with ResultStore(tmp_path / "r.db") as store:
        store.set_meta("paper_table", sweep.paper_table.to_dict())
        assert parse_paper_table(store.meta("paper_table")) == sweep.paper_table
    assert parse_sweep({"grid": {"tasks": ["sorting"]}}).paper_table is None


def test_shipped_table_one_sweep_predicts_every_row_from_table_ii_only() -> None:
    sweep = load_sweep(TABLE_ONE)
    table = sweep.paper_table
    assert table is not None and len(table.rows) == 8
    labels = {model_label(spec) for spec in sweep.specs}
    assert labels == {row.model_label for row in table.rows}
    for label in labels:
        specs = [s for s in sweep.specs if model_label(s) == label]
        assert len(specs) >= 20
        assert {(s.task, s.setting, s.agent, s.verification) for s in specs} == {
            ("sorting", "lab", "agenticlab", "full")}
    # no profile a row uses reads a number from an end-to-end table
    names = {spec.removeprefix("emulated:") for row in table.rows
             for spec in (row.model, *dict(row.modules).values())}
    for name in names:
        profile = load_profile(name)
        numbers = [n for m in profile.modules.values() for n in vars(m).values()
                   if n is not None]  # a module's unmeasured box IoU
        assert all("table I," not in n.source and "Table I " not in n.assumption
                   for n in numbers), name
    assert "never used to set" in TABLE_ONE.read_text()


def test_report_shows_the_table_block_for_a_small_database(tmp_path) -> None:
    sweep = parse_sweep({"grid": {"tasks": ["sorting"], "models": [
        "sim-oracle", {"model": "sim-oracle", "modules": {"detector":
                                                          "sim-oracle?detector=0.5"}}],
        "seeds": 3}, "paper_table": {**TABLE, "trials": 4}})
    db = tmp_path / "results.db"
    with ResultStore(db) as store:
        store.set_meta("paper_table", sweep.paper_table.to_dict())
        for spec in sweep.specs:
            won = spec.modules == () and spec.seed < 2
            result = EpisodeResult(spec=spec, success=won, progress=1.0 if won else 0.0,
                                   score=1.0 if won else 0.0, wall_s=1.0, sim_s=40.0,
                                   input_tokens=1000, output_tokens=200,
                                   failure=None if won else "detector")
            store.record(Finished(key=spec.key(), result=result, run_s=0.1, worker="test"))
    text = write_report(db, tmp_path / "report").markdown.read_text()
    assert "## Paper Table I beside the simulation's prediction" in text
    # the paper's 3 of 4 against 2 of 3 simulated; 0 of 4 against 0 of 3
    assert "| A | 75.0 % | 2/3 = 66.7 % [" in text
    assert "| A + D | 0.0 % | 0/3 = 0.0 % [0.0 %, 56.1 %] | +0 [" in text
    assert "| 1.00 | agree (not shown equivalent: the interval allows ±" in text
    assert "against the paper's 4 trials per row" in text
    assert "Spearman's ρ = 1.00 [" in text and "MMRV = 0.00 [" in text
    assert "First failing module per row" in text and "| A + D | 3 | 3 |" in text


def test_paper_tables_resample_the_rate_the_point_uses(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    from agentic_env.harness import paper_tables

    seen: list[object] = []

    def spy(sim: object, paper: object, statistics: object) -> list[None]:
        seen.append(paper)
        return [None, None]

    monkeypatch.setattr(paper_tables, "bootstrap_rank_intervals", spy)
    table = paper_tables.PaperTable.from_dict({"id": "t", "source": "T", "trials": 9, "rows": [
        {"label": "a", "model": "m1", "success": 0.944},
        {"label": "b", "model": "m2", "success": 0.5}]})
    episodes = [{"model": m, "success": i < 5} for m in ("m1", "m2") for i in range(9)]
    paper_tables.compare(table, episodes)
    assert seen == [[(pytest.approx(0.944 * 9), 9), (4.5, 9)]]
