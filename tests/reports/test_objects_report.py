"""The report's objects table on a crafted results database: per agent and model, objects
placed / objects per object set with the Wilson interval."""

from __future__ import annotations

import pathlib

from agentic_env.harness.db import Finished, ResultStore
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec, ObjectOutcome
from agentic_env.reports.blocks import Heading, Para, Table
from agentic_env.reports.objects import object_blocks, object_table, placed_cell
from agentic_env.reports.report import build_blocks, write_report
from agentic_env.stats import wilson_interval


def _outcome(name: str, group: str, placed: bool, at_start: bool = False) -> ObjectOutcome:
    return ObjectOutcome(name, group, name.rsplit("-", 1)[0], placed=placed,
                         met_at_start=at_start, facts=(f"in {name} bowl",), met=int(placed))


def _database(tmp_path: pathlib.Path) -> pathlib.Path:
    db = tmp_path / "results.db"
    episodes = [
        ("sim-oracle", 0, (_outcome("apple-1", "fruit", True), _outcome("ball-1", "toys", True),
                           _outcome("marker-1", "tools", False))),
        ("sim-oracle", 1, (_outcome("lemon-1", "fruit", False),
                           _outcome("plum-1", "fruit", True, at_start=True))),
        ("gemini/gemini-3-flash", 0, (_outcome("apple-1", "fruit", True),)),
        ("gemini/gemini-3-flash", 1, ()),  # an episode without outcomes
    ]
    with ResultStore(db) as store:
        for model, seed, objects in episodes:
            spec = EpisodeSpec("sorting", seed=seed, model=model, realism="ideal")
            result = EpisodeResult(spec, success=all(o.placed for o in objects),
                                   progress=0.5, score=0.5, objects=objects)
            store.record(Finished(spec.key(), result, 1.0, "test:1"))
    return db


def test_placed_cell_shows_the_count_rate_and_wilson_interval() -> None:
    low, high = wilson_interval(2, 3)
    assert placed_cell(2, 3) == f"2/3 67 % [{100 * low:.0f}, {100 * high:.0f}]"
    assert placed_cell(0, 0) == "–"


def test_the_table_counts_objects_per_configuration_and_object_set(
        tmp_path: pathlib.Path) -> None:
    with ResultStore(_database(tmp_path)) as store:
        rows = store.episodes()
    table = object_table(rows)
    assert isinstance(table, Table)
    assert table.headers == ("agent", "model", "fruit", "toys", "tools", "all")
    by_model = {row[1]: row for row in table.rows}
    oracle = by_model["sim-oracle"]
    assert oracle[0] == "agenticlab"
    # plum met its goal from the start: not counted
    assert oracle[2:] == (placed_cell(1, 2), placed_cell(1, 1), placed_cell(0, 1),
                          placed_cell(2, 4))
    assert by_model["gemini/gemini-3-flash"][2:] == (placed_cell(1, 1), "–", "–",
                                                     placed_cell(1, 1))
    heading, note, _ = object_blocks(rows)
    assert isinstance(heading, Heading) and heading.text == "Objects by object set"
    assert isinstance(note, Para)
    assert "held from the start" in note.text and "1 of 1 still held" in note.text


def test_the_report_shows_the_table_only_when_objects_are_stored(
        tmp_path: pathlib.Path) -> None:
    files = write_report(_database(tmp_path), tmp_path / "report")
    markdown = files.markdown.read_text()
    assert "## Objects by object set" in markdown
    assert "| agenticlab | sim-oracle | 1/2 50 %" in markdown
    assert object_blocks([]) == []
    blocks = build_blocks([], [], [], tmp_path)
    assert not any(isinstance(b, Heading) and b.text == "Objects by object set"
                   for b in blocks)
