"""The catalogue sheet command writes one small PNG with a tile per named object."""

from __future__ import annotations

from pathlib import Path

import imageio.v2 as imageio

from agentic_env.cli import catalogue_sheet
from agentic_env.tasks.appearance import appearances


def test_catalogue_sheet_writes_a_small_grid_of_every_object(tmp_path: Path) -> None:
    out = tmp_path / "sheet.png"
    assert catalogue_sheet.main(["--task", "stacking", "--tile", "64", "--columns", "4",
                                 "--out", str(out)]) == 0
    sheet = imageio.imread(out)
    rows = -(-len(appearances("stacking")) // 4)
    assert sheet.shape[1] == 4 * (64 + 12) + 12
    assert sheet.shape[0] == rows * (16 + 64 + 72) + 12
    assert out.stat().st_size < 1_000_000
    assert (sheet[..., :3] < 128).mean() > 0.01  # objects and captions were drawn
