"""Sweep files: grid expansion, defaults, validation messages, the shipped CI sweep."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from agentic_env.errors import InvalidConfigError
from agentic_env.harness.sweep import (
    DEFAULT_EPISODE_FN,
    disturbance_label,
    load_sweep,
    model_label,
    parse_sweep,
)

CI_SWEEP = pathlib.Path(__file__).resolve().parents[2] / "sweeps" / "ci.yaml"


def test_grid_is_the_cartesian_product_in_declared_order():
    sweep = parse_sweep({"name": "g", "grid": {
        "tasks": ["sorting", "stacking"], "settings": ["lab", "kitchen"],
        "models": ["sim-oracle", {"model": "sim-oracle",
                                  "modules": {"detector": "sim-oracle?detector=0.2"}}],
        "verification": ["full", "goal", "none"],
        "disturbances": ["none", "move_target",
                         [{"kind": "move_place_location", "primitive": "place",
                           "occurrence": -1}, "lighting_change"]],
        "instruction_categories": [None, "lexical"], "seeds": {"start": 5, "count": 2}},
        "episode": {"max_actions": 12}})
    assert sweep.name == "g" and sweep.episode_fn == DEFAULT_EPISODE_FN
    assert len(sweep.specs) == 2 * 2 * 2 * 3 * 3 * 2 * 2
    first, second = sweep.specs[0], sweep.specs[1]
    assert (first.task, first.setting, first.model, first.verification, first.seed) == (
        "sorting", "lab", "sim-oracle", "full", 5)
    assert second.seed == 6 and second.instruction_category is None
    assert all(s.max_actions == 12 for s in sweep.specs)
    assert len({s.key() for s in sweep.specs}) == len(sweep.specs)
    labels = {disturbance_label(s) for s in sweep.specs}
    assert labels == {"none", "move_target@pick#1",
                      "move_place_location@place#last+lighting_change@pick#1"}
    composed = [s for s in sweep.specs if s.modules]
    assert composed and model_label(composed[0]) == (
        "sim-oracle [detector=sim-oracle?detector=0.2]")
    # Disturbance dicts are complete, so the env receives exactly what the key hashes.
    moved = next(s for s in sweep.specs if disturbance_label(s) == "move_target@pick#1")
    assert moved.disturbance_dicts() == [
        {"kind": "move_target", "magnitude": 0.0, "occurrence": 1, "primitive": "pick"}]


def test_defaults_duplicates_and_seed_forms():
    sweep = parse_sweep({"grid": {"tasks": ["kitchen", "kitchen"], "seeds": 3}})
    assert [s.seed for s in sweep.specs] == [0, 1, 2]
    spec = sweep.specs[0]
    assert (spec.setting, spec.agent, spec.model, spec.verification, spec.disturbances) == (
        "lab", "agenticlab", "sim-oracle", "full", ())
    assert [s.seed for s in parse_sweep({"grid": {"tasks": ["kitchen"],
                                                  "seeds": [4, 2, 4]}}).specs] == [4, 2]


def test_a_list_of_grids_is_their_union_in_order_each_configuration_once(tmp_path):
    grids = [{"tasks": ["sorting", "stacking"], "models": ["sim-oracle"], "seeds": 2},
             {"tasks": ["reorientation", "sorting"],
              "models": ["sim-oracle", "sim-oracle?checker=0.1"], "seeds": 2}]
    sweep = parse_sweep({"name": "u", "grid": grids})
    cells = [(s.task, s.model, s.seed) for s in sweep.specs]
    assert cells == [
        ("sorting", "sim-oracle", 0), ("sorting", "sim-oracle", 1),
        ("stacking", "sim-oracle", 0), ("stacking", "sim-oracle", 1),
        ("reorientation", "sim-oracle", 0), ("reorientation", "sim-oracle", 1),
        ("reorientation", "sim-oracle?checker=0.1", 0),
        ("reorientation", "sim-oracle?checker=0.1", 1),
        # (sorting, sim-oracle) is the first entry's already
        ("sorting", "sim-oracle?checker=0.1", 0), ("sorting", "sim-oracle?checker=0.1", 1)]
    # --seeds replaces every entry's seeds
    file = tmp_path / "u.yaml"
    file.write_text(yaml.safe_dump({"name": "u", "grid": grids}))
    assert {s.seed for s in load_sweep(file, {"start": 7, "count": 1}).specs} == {7}
    assert len(load_sweep(file, 1).specs) == 5


@pytest.mark.parametrize(("data", "message"), [
    ({"grid": {"settings": ["lab"]}}, "'tasks' is required"),
    ({"grid": {"tasks": ["sortin"]}}, "valid: crossword, kitchen"),
    ({"grid": {"tasks": ["sorting"], "settings": ["moon"]}}, "valid: kitchen, lab, outdoor"),
    ({"grid": {"tasks": ["sorting"], "verification": ["all"]}}, "valid: none, goal, full"),
    ({"grid": {"tasks": ["sorting"], "seed": [1]}}, "unknown key(s) seed; valid: tasks"),
    ({"grid": {"tasks": ["sorting"], "disturbances": ["earthquake"]}}, "valid: move_target"),
    ({"grid": {"tasks": ["sorting"], "disturbances": [{"kind": "occluder", "when": 2}]}},
     "fields: kind, primitive"),
    ({"grid": {"tasks": ["sorting"], "models": [{"model": "x", "modules": {"eyes": "y"}}]}},
     "valid: parser, checker"),
    ({"grid": {"tasks": ["sorting"], "seeds": "many"}}, "give a list of ints"),
    ({"grid": {"tasks": ["sorting"], "models": ["sim-oracle?checker=1.5"]}}, "in [0, 1]"),
    ({"grid": {"tasks": ["sorting"], "models": ["sim-oracel"]}}, "did you mean"),
    ({"grid": {"tasks": ["sorting"]}, "episode": {"max_steps": 3}}, "valid: max_actions"),
    ({"grid": {"tasks": ["sorting"]}, "episode_fn": "pkg.fn"}, "'module:function'"),
    ({"grid": {"tasks": "sorting"}}, "non-empty list"),
    ({"grid": [{"tasks": ["sorting"]}, "stacking"]}, "or a list of such mappings"),
    ({"grid": [{"tasks": ["sorting"]}, {"task": ["stacking"]}]}, "unknown key(s) task"),
])
def test_bad_sweeps_name_the_valid_values(data, message):
    with pytest.raises(InvalidConfigError) as info:
        parse_sweep(data)
    assert message in str(info.value)


def test_load_sweep_errors(tmp_path):
    with pytest.raises(InvalidConfigError, match="does not exist"):
        load_sweep(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("grid: [unclosed\n")
    with pytest.raises(InvalidConfigError, match="not valid YAML"):
        load_sweep(bad)


def test_shipped_ci_sweep_is_small_and_covers_the_ablation_and_injected_error():
    sweep = load_sweep(CI_SWEEP)
    assert sweep.name == "ci" and 8 <= len(sweep.specs) <= 40
    assert {s.task for s in sweep.specs} == {"sorting", "stacking"}
    assert {s.verification for s in sweep.specs} == {"full", "goal"}
    assert any("checker=" in s.model for s in sweep.specs)


def test_seeds_override_replaces_the_files_seeds():
    from agentic_env.cli.harness import _seeds_override

    full = load_sweep(CI_SWEEP)
    small = load_sweep(CI_SWEEP, _seeds_override("1"))
    assert {s.seed for s in small.specs} == {0}
    assert {s.key() for s in small.specs} == {s.key() for s in full.specs if s.seed < 1}
    assert {s.seed for s in load_sweep(CI_SWEEP, _seeds_override("40:3")).specs} == {40, 41, 42}
    with pytest.raises(InvalidConfigError, match="START:COUNT"):
        _seeds_override("a:b")


@pytest.mark.parametrize("path", sorted((pathlib.Path(__file__).resolve().parents[2] / "sweeps")
                                        .glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_sweep_parses(path: pathlib.Path) -> None:
    assert load_sweep(path).specs
