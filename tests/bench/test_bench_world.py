"""``agentic-env bench-world``: the realistic world's budget per agent x task x setting, from
episode results of the ideal world, the realistic one and each effect alone; the failure
classifier; the paper's bound and the still-fails line; the world effects of a spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_env.bench.world import effect_specs, episode_record, load_results, world_specs
from agentic_env.bench.world_budget import (
    CAUSES,
    bound_line,
    classify_failure,
    format_budget,
    format_effects,
    recovered,
    still_fails_line,
    world_cells,
    world_of,
)
from agentic_env.cli.bench.world import main, parse_effects
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.harness.runner import run_episode

SLIP = "pick of soda-can failed: the object slipped out of the gripper while lifting"
MISSED = "pick of red-cube failed: the gripper closed to 2.0 mm: nothing between the fingers"
HOLE = "no 3D points of blue-bin at the detected pixel (320, 200) in the shoulder view"


def _result(seed: int, world: str, success: bool, *, task: str = "stacking",
            setting: str = "kitchen", agent: str = "agenticlab", replans: int = 0,
            n_extra: int = 0, failure: str | None = None, detail: str = "") -> EpisodeResult:
    realism = "ideal" if world == "ideal" else "realistic"
    effects = None if world in ("ideal", "realistic") else (world,)
    spec = EpisodeSpec(task, setting, seed=seed, agent=agent, realism=realism,
                       world_effects=effects)
    return EpisodeResult(spec, success=success, progress=float(success), score=float(success),
                         replans=replans, n_extra=n_extra, failure=failure,
                         failure_detail=detail)


@pytest.mark.parametrize(("source", "detail", "cause"), [
    ("detector", "red-cube was not found in the shoulder view, the wrist view from "
                 "(0.40, 0.10)", "no detection"),
    ("detector", HOLE, "depth hole"),
    ("execution", "no point of blue-bin was seen inside its detection box in the shoulder "
                  "camera's depth, so there is no floor to put red-cube on", "depth hole"),
    ("detector", "something stands at (0.45, 0.12) where red-cube would go", "false obstacle"),
    ("detector", "no free spot on the table is visible", "false obstacle"),
    ("execution", MISSED, "calibration offset"),
    ("execution", SLIP, "slip"),
    ("execution", "place of red-cube failed: nothing to place: the gripper reads 1.0 mm and "
                  "is not blocked by an object", "slip"),
    ("execution", "pick of red-cube failed: robot contact between 'wrist_3' and 'bin_wall'",
     "collision"),
    ("execution", "place of cracker-box-1 failed: the TCP did not settle within 3 mm of "
                  "[0.242, 0.418, 0.087] m in 1.0 s (off by 11.8 mm) - blocked?", "collision"),
    ("limits", "40 actions used", "other"),
    ("error", "the episode crashed", "other"),
])
def test_each_failure_sentence_names_its_cause(source: str, detail: str, cause: str) -> None:
    assert classify_failure(source, detail) == cause
    assert cause in CAUSES


def test_the_world_is_blamed_only_for_what_succeeds_in_the_ideal_world() -> None:
    results = [
        _result(1, "ideal", True), _result(1, "realistic", False, failure="execution",
                                           detail=SLIP),
        _result(2, "ideal", False, failure="grasp"), _result(2, "realistic", False,
                                                             failure="grasp"),
        _result(3, "ideal", True), _result(3, "realistic", True, n_extra=2),
        _result(1, "contact", False, failure="execution", detail=SLIP),
        _result(3, "contact", True), _result(1, "sensors", True), _result(3, "sensors", True),
    ]
    (cell,) = world_cells(results)
    assert cell.successes("ideal") == (2, 3) and cell.successes("realistic") == (1, 3)
    assert [r.spec.seed for r in cell.broken("realistic")] == [1]
    assert cell.exposed("realistic") == 2 and cell.causes("realistic") == {"slip": 1}
    assert (cell.recovered("ideal"), cell.recovered("realistic")) == (0, 1)
    text = format_budget([cell], ("sensors", "contact"))
    row = text.splitlines()[2].split()
    assert row[:7] == ["agenticlab", "stacking", "kitchen", "3", "2", "1", "0/1"]
    assert row[7:12] == ["1/2", "50%", "0", "1", "slip"]
    assert text.splitlines()[-1].split()[:2] == ["agenticlab", "all"]
    effects = format_effects([cell], ("sensors", "contact")).splitlines()
    assert effects[0].split()[:3] == ["sensors", "breaks", "0/2"]
    assert "slip 1; in agenticlab/stacking/kitchen 1" in effects[1]


def test_the_bound_is_printed_beside_lab_sorting_only() -> None:
    lab = [_result(seed, world, world == "ideal" or seed < 3, task="sorting", setting="lab",
                   failure=None if seed < 3 else "execution", detail=MISSED)
           for seed in range(4) for world in ("ideal", "realistic")]
    kitchen = [_result(1, world, True, task="sorting") for world in ("ideal", "realistic")]
    cells = world_cells(lab + kitchen)
    rows = format_budget(cells, ()).splitlines()
    assert rows[2].split()[-4:] == ["PASS", "calibration", "offset", "1"]
    assert "PASS" not in rows[3] and "MISS" not in rows[3]
    assert bound_line(cells).endswith("3/4 75% -> PASS")
    worse = world_cells(lab + [_result(9, "ideal", True, task="sorting", setting="lab"),
                               _result(9, "realistic", False, task="sorting", setting="lab",
                                       failure="execution", detail=HOLE)])
    assert bound_line(worse).endswith("3/5 60% -> MISS")
    assert "not measured" in bound_line(world_cells(kitchen))


def test_the_still_fails_line_catches_an_ideal_world_in_disguise() -> None:
    same = world_cells([_result(1, world, True) for world in ("ideal", "realistic")])
    assert "NO (an ideal world in disguise)" in still_fails_line(same)
    broken = world_cells([_result(1, "ideal", True),
                          _result(1, "realistic", False, failure="execution", detail=SLIP)])
    assert still_fails_line(broken).endswith("YES: it breaks 1/1 100% of the ideal world's "
                                             "successes (slip 1)")


def test_a_recovery_is_a_success_that_needed_more_than_the_plan() -> None:
    assert recovered(_result(1, "realistic", True, replans=1))
    assert not recovered(_result(1, "realistic", True))
    assert not recovered(_result(1, "realistic", False, n_extra=3))


def test_the_specs_cover_every_world_and_effect() -> None:
    specs = world_specs(["agenticlab"], ["sorting"], ["lab"], range(5, 7), ("sensors",))
    assert [world_of(s) for s in specs] == ["ideal", "realistic", "sensors"] * 2
    more = world_specs(["agenticlab", "alrm"], ["sorting"], ["lab"], range(5, 6), (),
                       range(5, 8))
    assert [(s.agent, s.seed) for s in more if s.realism == "ideal"] == [
        ("agenticlab", 5), ("agenticlab", 6), ("agenticlab", 7), ("alrm", 5)]
    broke = [_result(1, "ideal", True), _result(1, "realistic", False, detail=SLIP),
             _result(2, "ideal", False), _result(2, "realistic", False),
             _result(3, "ideal", True), _result(3, "realistic", True)]
    assert [(world_of(s), s.seed) for s in effect_specs(broke, ("sensors", "contact"))] == [
        ("sensors", 1), ("contact", 1)]
    assert parse_effects("all") == ("sensors", "calibration", "contact")
    assert parse_effects("none") == () and parse_effects("contact,sensors") == ("contact",
                                                                                "sensors")
    with pytest.raises(InvalidConfigError, match="valid: all, none, sensors, calibration"):
        parse_effects("grip")


def test_world_effects_are_checked_stored_only_when_set_and_keep_old_keys() -> None:
    plain = EpisodeSpec("sorting", seed=3, realism="ideal")
    assert "world_effects" not in plain.to_dict()
    assert plain.key() == "eb5ee5b2ebf7934e"  # its key before world effects existed
    alone = EpisodeSpec("sorting", seed=3, realism="realistic", world_effects=("contact",))
    assert alone.to_dict()["world_effects"] == ["contact"]
    assert EpisodeSpec.from_dict(alone.to_dict()) == alone
    assert alone.key() != EpisodeSpec("sorting", seed=3, realism="realistic").key()
    with pytest.raises(InvalidConfigError, match="valid: sensors, calibration, contact"):
        EpisodeSpec("sorting", realism="realistic", world_effects=("grip",))
    with pytest.raises(InvalidConfigError, match="realism='realistic'"):
        EpisodeSpec("sorting", world_effects=("sensors",), realism="ideal")


def test_a_results_file_prints_the_same_budget(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    results = [_result(1, "ideal", True, task="sorting", setting="lab"),
               _result(1, "realistic", False, task="sorting", setting="lab",
                       failure="execution", detail=MISSED),
               _result(1, "calibration", False, task="sorting", setting="lab",
                       failure="execution", detail=MISSED)]
    path = tmp_path / "world.json"
    path.write_text(json.dumps({"episodes": [episode_record(r) for r in results]}))
    assert [r.spec for r in load_results(path)] == [r.spec for r in results]
    assert main(["--results", str(path)]) == 0
    out = capsys.readouterr().out
    assert format_budget(world_cells(results), ("calibration",)) in out
    assert "0/1 0% -> MISS" in out and "calibration  breaks 1/1 100%" in out
    assert main(["--results", str(tmp_path / "nope.json")]) == 2


def test_the_harness_builds_the_world_with_the_specs_effects() -> None:
    seen: set[frozenset[str]] = set()

    def look(env: SimEnv, _event: dict[str, object]) -> None:
        assert env.world is not None
        seen.add(env.world.effects)

    spec = EpisodeSpec("reorientation", seed=52000, realism="realistic",
                       world_effects=("contact",), max_actions=1)
    result = run_episode(spec, on_agent_event=look)
    assert result.error is None and result.actions == 1 and seen == {frozenset({"contact"})}


def test_a_run_records_its_episodes_for_the_report(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """One reorientation trial in both worlds: two episodes in the results database, and the
    last line names the report command that reads it."""
    from agentic_env.harness.db import ResultStore

    db = tmp_path / "world.db"
    assert main(["--seeds", "7:1", "--settings", "lab", "--tasks", "reorientation",
                 "--agents", "agenticlab", "--effects", "none", "--workers", "1",
                 "--out", str(tmp_path / "world.json"), "--db", str(db)]) == 0
    with ResultStore(db) as store:
        rows = store.episodes()
    assert len(rows) == 2 and {row["task"] for row in rows} == {"reorientation"}
    assert capsys.readouterr().out.strip().splitlines()[-1].endswith(f"agentic-env report {db}")
