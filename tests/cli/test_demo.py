"""The README's main job: the demo puts every cube in the bin and writes its pictures and video."""

from __future__ import annotations

import json
from pathlib import Path

import imageio.v2 as imageio
import pytest

from agentic_env import cli
from agentic_env.cli import demo


def test_demo_succeeds_and_writes_pictures_and_video(tmp_path: Path) -> None:
    assert demo.main(["--out", str(tmp_path), "--seed", "1", "--fps", "5"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["success"] and summary["progress"] == 1.0
    assert [p["name"] for p in summary["primitives"]] == ["pick", "place"] * 3
    for camera in ("shoulder", "wrist"):
        rgb = imageio.imread(tmp_path / f"{camera}_rgb.png")
        depth = imageio.imread(tmp_path / f"{camera}_depth.png")
        assert rgb.shape == depth.shape == (360, 640, 3)
        assert rgb.std() > 10 and depth.std() > 10  # real content, not blank
    reader = imageio.get_reader(tmp_path / "demo.mp4")
    frames = sum(1 for _ in reader)
    reader.close()
    # one frame per 1/5 s of simulated time, plus the first
    assert frames == pytest.approx(summary["sim_time"] * 5, abs=3)


def test_cli_lists_commands_and_rejects_unknown_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 0
    assert "demo" in capsys.readouterr().out
    assert cli.main(["fly"]) == 2
    assert "unknown command 'fly'" in capsys.readouterr().err
