"""Per-object outcomes: real short sim-oracle episodes store, per object the goal is about, its
object set and whether its goal facts hold at the end, in agreement with the task's final
facts; the object-set mapping; the crossword's goal terms; the results store's column."""

from __future__ import annotations

import pathlib
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from agentic_env.harness import runner
from agentic_env.harness.db import Finished, ResultStore
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec, ObjectOutcome
from agentic_env.harness.objects import (
    CATEGORY_SETS,
    OBJECT_SETS,
    catalogue_entry,
    goal_truth,
    object_set,
)
from agentic_env.tasks.base import TaskEvaluation
from agentic_env.tasks.catalogue import CATALOGUE, CATEGORIES
from agentic_env.tasks.crossword import CrosswordTask
from agentic_env.tasks.kitchen.props import kitchen_items

#: What the wrapped :func:`object_outcomes` saw: the task's final facts, its goal facts, its
#: facts at the start, and the outcomes it returned.
Seen = dict[str, Any]


def _run(spec: EpisodeSpec, monkeypatch: pytest.MonkeyPatch) -> tuple[EpisodeResult, Seen]:
    """Run ``spec`` with the harness's outcome function wrapped to record the final state."""
    seen: Seen = {}
    inner: Callable[..., tuple[ObjectOutcome, ...]] = runner.object_outcomes

    def recording(task: Any, scene: Any, start_facts: Any = None,
                  evaluation: Any = None) -> tuple[ObjectOutcome, ...]:
        out = inner(task, scene, start_facts, evaluation)
        seen.update(final=set(task.facts(scene)), goal=list(task.goal_facts()),
                    terms=dict(task.evaluate(scene).terms), start=start_facts, outcomes=out,
                    items={n for n, t in task.pddl_objects().items()
                           if t not in ("container", "plate", "slot", "drawer", "pose",
                                        "object")})
        return out

    monkeypatch.setattr(runner, "object_outcomes", recording)
    return runner.run_episode(spec, video=False), seen


def _store_round_trip(result: EpisodeResult, tmp_path: pathlib.Path) -> list[dict[str, Any]]:
    with ResultStore(tmp_path / "results.db") as store:
        store.record(Finished(result.spec.key(), result, 1.0, "test:1"))
        return store.episodes()[0]["objects"]


def _agrees_with_final_facts(result: EpisodeResult, seen: Seen) -> None:
    outcomes = result.objects
    assert outcomes and outcomes == seen["outcomes"]
    subjects = [f.split()[1] for f in seen["goal"] if f.split()[1] in seen["items"]]
    assert [o.name for o in outcomes] == list(dict.fromkeys(subjects))
    for o in outcomes:
        assert set(o.facts) == {f for f in seen["goal"] if f.split()[1] == o.name}
        assert o.met == sum(f in seen["final"] for f in o.facts)
        assert o.placed == all(f in seen["final"] for f in o.facts)
        assert o.placed == all(seen["terms"][f] > 0.5 for f in o.facts)
        assert o.met_at_start == all(f in seen["start"] for f in o.facts)
        assert o.object_set in OBJECT_SETS
    assert result.success == all(o.placed for o in outcomes)


def test_a_sorting_episode_stores_where_each_object_ended(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: pathlib.Path) -> None:
    result, seen = _run(EpisodeSpec("sorting", seed=3, realism="ideal"), monkeypatch)
    assert result.success
    _agrees_with_final_facts(result, seen)
    for o in result.objects:  # catalogue objects: the set is their category's
        assert o.kind is not None and o.object_set == CATEGORY_SETS[CATALOGUE[o.kind].category]
    assert {o.object_set for o in result.objects} >= {"fruit", "toys", "tools"}
    stored = _store_round_trip(result, tmp_path)
    assert [ObjectOutcome.from_dict(o) for o in stored] == list(result.objects)


def test_an_episode_cut_short_marks_the_objects_left_behind_failed(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    result, seen = _run(EpisodeSpec("sorting", seed=3, realism="ideal", max_actions=2),
                        monkeypatch)
    assert not result.success and result.failure == "limits"
    _agrees_with_final_facts(result, seen)
    failed = [o for o in result.objects if not o.placed]
    assert failed and all(o.met == 0 and not o.met_at_start for o in failed)
    assert sum(o.placed for o in result.objects) == round(result.progress
                                                          * len(result.objects))
    stored = _store_round_trip(result, tmp_path)
    assert [o["placed"] for o in stored] == [o.placed for o in result.objects]


def test_a_stacking_episode_lists_its_cubes_as_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    result, seen = _run(EpisodeSpec("stacking", seed=1, realism="ideal"), monkeypatch)
    _agrees_with_final_facts(result, seen)
    assert {o.object_set for o in result.objects} == {"blocks"}
    assert all(o.name.endswith("-cube-1") for o in result.objects)  # not the plates


def test_every_catalogue_category_has_an_object_set() -> None:
    assert set(CATEGORY_SETS) == set(CATEGORIES)
    assert set(CATEGORY_SETS.values()) < set(OBJECT_SETS)
    assert object_set("sorting", "apple-1") == ("fruit", "apple")
    assert object_set("sorting", "red-cube-1") == ("blocks", "red-cube")
    assert object_set("sorting", "soda-can-1") == ("food", "soda-can")
    assert object_set("crossword", "block-3") == ("blocks", None)
    assert object_set("stacking", "purple-cube-1") == ("blocks", None)
    assert object_set("reorientation", "blue-mug-1") == ("other", None)
    kitchen = {name: object_set("kitchen", name) for name in kitchen_items()}
    assert kitchen["blue-snack-pack-1"] == ("food", "snack-pack")  # a catalogue kind
    assert kitchen["sponge-1"] == ("other", None)
    assert catalogue_entry("tomato-1") is None  # the kitchen's own props: food, by name
    assert {kitchen[name][0] for name in ("tomato-1", "chicken-leg-1", "spice-bottle-1")} == {
        "food"}


def test_a_crossword_block_counts_as_placed_when_its_slot_holds_its_letter() -> None:
    """The crossword scores slots by letter, not by block: its goal facts name the evaluate
    term that scores them, and a block of the same letter in the slot fills it."""

    class _Puzzle:
        def letter(self, number: int) -> str:
            return {1: "C", 2: "A"}[number]

    task = CrosswordTask()
    task._assignment = {"slot-1": "block-1", "slot-2": "block-2"}
    task._letters = {"block-1": "C", "block-2": "A", "block-3": "C"}
    task._puzzle = _Puzzle()  # type: ignore[assignment]
    task.active_slots = lambda: ["slot-1", "slot-2"]  # type: ignore[method-assign]
    assert task.goal_fact_terms() == {"in-slot block-1 slot-1": "slot-1 holds C",
                                      "in-slot block-2 slot-2": "slot-2 holds A"}
    # block-3 (also a C) fills slot-1: block-1's goal is met; slot-2 is empty
    evaluation = TaskEvaluation(False, 0.5, {"slot-1 holds C": 1.0, "slot-2 holds A": 0.0})
    truth = goal_truth(task, None, evaluation)  # type: ignore[arg-type]  # no facts read
    assert truth == {"in-slot block-1 slot-1": True, "in-slot block-2 slot-2": False}


def test_a_database_from_before_object_outcomes_gains_the_column(
        tmp_path: pathlib.Path) -> None:
    path = tmp_path / "old.db"
    result = EpisodeResult(EpisodeSpec("sorting", realism="ideal"), success=True,
                           progress=1.0, score=1.0)
    with ResultStore(path) as store:
        store.record(Finished("old", result, 1.0, "test:1"))
    with sqlite3.connect(path) as conn:  # as a database written before the column
        conn.execute("ALTER TABLE episodes DROP COLUMN objects_json")
    conn.close()
    outcome = ObjectOutcome("apple-1", "fruit", "apple", placed=False, met_at_start=False,
                            facts=("in apple-1 bowl",), met=0)
    with ResultStore(path) as store:
        store.record(Finished("new", EpisodeResult(result.spec, success=False, progress=0.0,
                                                   score=0.0, objects=(outcome,)),
                              1.0, "test:1"))
        old, new = store.episodes()
    assert old["objects"] == [] and "objects_json" not in old
    assert [ObjectOutcome.from_dict(o) for o in new["objects"]] == [outcome]
