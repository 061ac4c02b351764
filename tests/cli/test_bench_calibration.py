"""``agentic-env bench-calibration --write`` rewrites only its block of ``world.toml``."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from agentic_env.cli.bench import calibration
from agentic_env.errors import InvalidConfigError
from agentic_env.sim.realism import WORLD_FILE


def test_the_calibration_block_is_replaced_and_the_rest_kept(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    world = tmp_path / "world.toml"
    world.write_text(WORLD_FILE.read_text())
    monkeypatch.setattr(calibration, "WORLD_FILE", world)
    block = ('[calibration]\nsource = "test"\n\n[calibration.wrist]\nsource = "test"\n'
             "translation_std_mm = [1.0, 2.0, 3.0]\n")
    calibration.write_block(block)
    data = tomllib.loads(world.read_text())
    assert data["calibration"]["wrist"]["translation_std_mm"] == [1.0, 2.0, 3.0]
    assert "shoulder" not in data["calibration"]
    original = tomllib.loads(WORLD_FILE.read_text())
    assert data["kinect"] == original["kinect"] and data["contact"] == original["contact"]
    calibration.write_block(block)  # idempotent: the markers survive a rewrite
    assert tomllib.loads(world.read_text()) == data
    world.write_text("[kinect]\n")
    with pytest.raises(InvalidConfigError, match="restore them"):
        calibration.write_block(block)
