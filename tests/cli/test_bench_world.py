"""``agentic-env bench-world``'s table: the realistic world's own failures and recoveries per
agent and task, from episode results of both worlds."""

from __future__ import annotations

from agentic_env.cli.bench.world import format_table, recovered, world_table
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec


def _result(seed: int, realism: str, success: bool, *, replans: int = 0, n_extra: int = 0,
            failure: str | None = None) -> EpisodeResult:
    spec = EpisodeSpec("stacking", "kitchen", seed=seed, realism=realism)
    return EpisodeResult(spec, success=success, progress=float(success), score=float(success),
                         replans=replans, n_extra=n_extra, failure=failure)


def test_the_world_is_blamed_only_for_what_succeeds_in_the_ideal_world() -> None:
    results = [
        _result(1, "ideal", True), _result(1, "realistic", False, failure="execution"),
        _result(2, "ideal", False, failure="grasp"), _result(2, "realistic", False,
                                                             failure="grasp"),
        _result(3, "ideal", True), _result(3, "realistic", True, n_extra=2),
    ]
    (row,) = world_table(results)
    assert (row["ideal_success"], row["realistic_success"], row["broken_by_world"]) == (2, 1, 1)
    assert (row["ideal_recovered"], row["realistic_recovered"]) == (0, 1)
    assert row["realistic_failure_sources"] == {"execution": 1, "grasp": 1}
    text = format_table([row])
    assert "execution 1, grasp 1" in text and text.splitlines()[-1].startswith("agenticlab")


def test_a_recovery_is_a_success_that_needed_more_than_the_plan() -> None:
    assert recovered(_result(1, "realistic", True, replans=1))
    assert not recovered(_result(1, "realistic", True))
    assert not recovered(_result(1, "realistic", False, n_extra=3))
