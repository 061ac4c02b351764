"""The report's measurements section: a compact table per measurement benchmark with the
figures the command prints, a benchmark it does not know as JSON, nothing when the database
holds no measurements; beside episodes, both sections."""

from __future__ import annotations

from pathlib import Path

from agentic_env.bench.grasp import PickResult, figures
from agentic_env.bench.store import in_process, measurement, record_measurements
from agentic_env.harness.db import ResultStore
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.reports.blocks import Heading, Table
from agentic_env.reports.measurements import measurement_blocks
from agentic_env.reports.report import build_blocks, render_markdown

CALIBRATION = {"translation_bias_mm": [0.1, -0.2, 0.3], "translation_std_mm": [1.0, 2.0, 3.0],
               "rotation_bias_deg": [0.01, 0.02, -0.03], "rotation_std_deg": [0.1, 0.2, 0.3],
               "mean_residual_translation_mm": 0.5, "mean_residual_rotation_deg": 0.05,
               "mean_residual_reprojection_px": 0.2, "frame": "flange", "sensors": True}
COLLECT = {"task": "stacking", "setting": "lab", "resolution": "640x360", "depth": False,
           "codec": "h264", "crf": 23, "workers": 2, "episodes": 3, "attempts": 4,
           "frames": 900, "frames_per_episode": 300.0, "wall_s": 36.0, "frames_per_s": 25.0,
           "frames_per_s_per_worker": 12.5, "mb_per_episode": 1.5,
           "video_mb_per_episode": 1.25, "parquet_mb_per_episode": 0.25, "kb_per_frame": 5.1}
PICKS = [PickResult(0, "blue-cube-1", True, "", 0.04, 0.03),
         PickResult(0, "rubber-duck-1", False, "grasp slipped", 0.06, 0.05),
         PickResult(1, "blue-cube-2", False, "no detection", 0.0, 0.0)]


def _stored(tmp_path: Path) -> list[dict]:
    db = tmp_path / "m.db"
    grasp = figures(PICKS, {"0 rubber-duck-1": "contact", "1 blue-cube-2": "no detection"})
    record_measurements(db, [
        measurement("bench-grasp", {"task": "sorting", "world": "realistic", "layouts": 2,
                                    "seed": 0, "camera": "shoulder"}, grasp, 3.0),
        measurement("bench-calibration", {"camera": "wrist", "sessions": 2, "views": 12,
                                          "seed": 0}, CALIBRATION, 9.0),
        measurement("bench-collect", {"task": "stacking", "setting": "lab", "world": "realistic"},
                    COLLECT, 36.0),
        measurement("bench-new", {"n": 1}, {"speed_hz": 5.0}, 1.0)])
    with ResultStore(db) as store:
        return store.measurements()


def test_the_grasp_figures_count_failures_by_their_source() -> None:
    grasp = figures(PICKS, {"0 rubber-duck-1": "contact"})
    assert (grasp["picks"], grasp["lifted"]) == (3, 1)
    assert grasp["per_kind"] == {"blue-cube": {"picks": 2, "lifted": 1},
                                 "rubber-duck": {"picks": 1, "lifted": 0}}
    assert grasp["by_cause"] == {"contact": 1, "no detection": 1}
    assert grasp["grasp_ms_max"] == 60.0
    assert figures([])["grasp_ms_mean"] is None and figures([])["success_rate"] == 0.0


def test_each_benchmark_gets_a_table_of_its_figures(tmp_path: Path) -> None:
    blocks = measurement_blocks(_stored(tmp_path))
    headings = [b.text.split(":")[0] for b in blocks if isinstance(b, Heading) and b.level == 3]
    assert headings == ["bench-calibration", "bench-collect", "bench-grasp", "bench-new"]
    assert all(len(t.rows) == 1 and len(t.rows[0]) == len(t.headers)
               for t in blocks if isinstance(t, Table))
    text = render_markdown("r", blocks)
    assert ("| sorting | realistic | 2 from 0 | shoulder | 1/3 (33 %) | blue-cube 1/2, "
            "rubber-duck 0/1 | 33 / 40 / 60 | contact 1, no detection 1 | 3.0 |") in text
    assert ("| wrist -> flange | 2 x 12 from 0 | +0.10 -0.20 +0.30 | 1.00 2.00 3.00 | "
            "+0.010 +0.020 -0.030 | 0.100 0.200 0.300 | 0.50 mm, 0.050 deg, 0.200 px | "
            "sensor models | 9.0 |") in text
    assert ("| stacking/lab | realistic | 640x360 h264 | 2 | 3 (4 tried) | 900 | 25.0 (12.5) | "
            "1.50 (1.25 / 0.25) | 5.1 | 36.0 |") in text
    assert '| {"n": 1} | {"speed_hz": 5.0} | 1.0 |' in text


def test_no_measurements_no_section_and_beside_episodes_both(tmp_path: Path) -> None:
    assert measurement_blocks([]) == []
    spec = EpisodeSpec("sorting", realism="ideal")
    with ResultStore(tmp_path / "e.db") as store:
        store.record(in_process(EpisodeResult(spec, True, 1.0, 1.0, wall_s=2.0), 2.5))
        episodes = store.episodes()
    text = render_markdown("r", build_blocks(episodes, [], [], tmp_path,
                                             measurements=_stored(tmp_path)))
    assert "1 episodes: success 1/1" in text and "## Measurements" in text
    only = render_markdown("r", build_blocks([], [], [], tmp_path,
                                             measurements=_stored(tmp_path)))
    assert "holds measurements, no episodes" in only and "## Episodes" not in only
    assert "## Measurements" not in render_markdown("r", build_blocks(episodes, [], [],
                                                                       tmp_path))
