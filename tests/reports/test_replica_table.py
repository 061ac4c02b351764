"""A profile's Table II row on the calibration replica (``agentic-env modules --replica``):
equal to the paper's by construction, and a loud error for a profile without a row."""

from __future__ import annotations

import re

import pytest

from agentic_env.bench.modules import MODULE_ORDER
from agentic_env.cli.harness import modules_main
from agentic_env.errors import InvalidConfigError
from agentic_env.reports.paper_modules import TABLE_TWO, paper_row
from agentic_env.reports.replica_table import (
    BY_CONSTRUCTION,
    replica_profile,
    replica_row,
    table_two_profiles,
)

_ROW = re.compile(r"^(\w+)\s+(–|[\d.]+)\s+([\d.]+)\s+\S+\s+(\d+)\s")


def _printed(text: str) -> dict[str, tuple[float | None, float, int]]:
    """Module -> (paper, replica, situations) of the printed rows, as rates."""
    out = {}
    for line in text.splitlines():
        match = _ROW.match(line)
        if match and match.group(1) in MODULE_ORDER:
            paper = None if match.group(2) == "–" else float(match.group(2)) / 100
            out[match.group(1)] = (paper, float(match.group(3)) / 100, int(match.group(4)))
    return out


def test_every_table_two_row_has_a_profile() -> None:
    assert list(table_two_profiles()) == [row.model for row in TABLE_TWO]
    assert table_two_profiles()["GPT-4o"] == "gpt-4o"


def test_the_printed_row_equals_table_two(capsys: pytest.CaptureFixture[str]) -> None:
    assert modules_main(["--replica", "--model", "emulated:gpt-4o", "--sample", "0"]) == 0
    text = capsys.readouterr().out
    assert BY_CONSTRUCTION in text and "not a prediction" in text
    printed = _printed(text)
    paper = paper_row("GPT-4o")
    assert list(printed) == list(MODULE_ORDER)
    for module, (shown, replica, n) in printed.items():
        assert shown == pytest.approx(paper.success[module], abs=1e-6)
        assert replica == pytest.approx(paper.success[module], abs=1e-6)
        assert n > 0
    assert "holds" in text or "MISSES" in text


def test_the_exact_means_equal_table_two_for_every_row() -> None:
    for row in TABLE_TWO:
        profile, found = replica_profile(row.model)
        assert found == row
        for cell in replica_row(profile, row, sample_seed=1):
            assert cell.replica == pytest.approx(row.success[cell.module] or 0.0, abs=1e-9)
            assert cell.sampled is not None and 0 <= cell.sampled <= cell.n


def test_an_unknown_profile_fails_loudly(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InvalidConfigError, match=r"profiles with one: .*emulated:gpt-4o"):
        replica_profile("emulated:gpt-3")
    with pytest.raises(InvalidConfigError, match="gpt-5-cap.*has no row"):
        replica_profile("gpt-5-cap")
    assert modules_main(["--replica", "--model", "emulated:gpt-3"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("error: no model profile 'emulated:gpt-3'")
    assert "emulated:gemini-3-flash (Gemini 3 Flash)" in out


_IOU = re.compile(r"^bbox_iou\s+([\d.]+)\s+([\d.]+)\s+\S+\s+(\d+)\s+"
                  r"([\d.]+) \[([\d.]+), ([\d.]+)\]")


def test_the_detector_row_shows_its_bbox_iou_beside_the_papers(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The detector's boxes: the profile's Table II Bbox IoU, the replica's exact mean (equal
    by construction) and a sampled pass with its interval."""
    assert modules_main(["--replica", "--model", "emulated:gemini-3-pro", "--sample", "0"]) == 0
    lines = [_IOU.match(line) for line in capsys.readouterr().out.splitlines()]
    found = [m for m in lines if m]
    assert len(found) == 1
    paper, replica, n, mean, low, high = (float(v) for v in found[0].groups())
    assert paper == pytest.approx(53.7) and replica == pytest.approx(53.7, abs=1e-4)
    assert n > 0 and low <= mean <= high


def test_every_rows_replica_iou_equals_its_table_ii_bbox_iou() -> None:
    for row in TABLE_TWO:
        profile, _ = replica_profile(row.model)
        detector = next(c for c in replica_row(profile, row, ("detector",), sample_seed=3))
        iou = detector.iou
        measured = profile.modules["detector"].box_iou
        assert iou is not None and measured is not None and iou.paper == measured.value
        assert iou.replica == pytest.approx(measured.value, abs=1e-6)
        assert iou.sampled is not None and detector.sampled is not None
        assert 0.0 <= iou.sampled[0] <= detector.sampled / detector.n + 1e-12
    assert all(c.iou is None for c in replica_row(profile, row, ("checker", "goal")))
