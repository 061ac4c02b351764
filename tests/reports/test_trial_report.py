"""The sim-vs-real trial report's MMRV is the one of :mod:`agentic_env.stats`, with the
report's "n/a" where there is nothing to order."""

from __future__ import annotations

import pytest

from agentic_env import stats
from agentic_env.reports import trial_report


def _rows(sim: float, real: float, seed: int) -> list[dict]:
    base = {"task": "stacking", "setting": "lab", "seed": seed, "model": "sim-oracle",
            "actions": 4, "failure": None}
    return [{**base, "key": f"k{seed}", "success": sim == 1.0, "score": sim},
            {**base, "key": f"k{seed}:real", "success": real == 1.0, "score": real}]


@pytest.mark.parametrize(("sim", "real"), [
    ([0.1, 0.5, 0.9], [0.6, 0.2, 0.9]),          # items 0 and 1 swap order
    ([1.0, 0.0, 1.0, 1.0], [0.5, 1.0, 0.0, 1.0]),  # ties on the sim side
    ([0.0, 0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.5, 0.25]),
])
def test_the_reports_mmrv_is_the_stats_one(sim: list[float], real: list[float]) -> None:
    expected = stats.mmrv(sim, real)
    assert trial_report.mmrv(sim, real) == expected
    rows = [row for i, pair in enumerate(zip(sim, real, strict=True)) for row in _rows(*pair, i)]
    text = trial_report.render_report(trial_report.pair_episodes(rows))
    assert f"{len(sim)} paired trials" in text and f"MMRV: {expected:.3f}." in text


def test_one_pair_has_no_mmrv() -> None:
    assert trial_report.mmrv([0.5], [0.5]) is None
    text = trial_report.render_report(trial_report.pair_episodes(_rows(1.0, 0.0, 0)))
    assert "1 paired trials" in text and "MMRV: n/a." in text
