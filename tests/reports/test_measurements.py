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


def test_the_speed_benchmarks_figures_make_their_tables(tmp_path: Path) -> None:
    from agentic_env.bench import real
    from agentic_env.bench.robosuite import world_figures
    from agentic_env.bench.sweep import HarnessBench

    result = {"resolution": [640, 480], "control_hz": 20, "steps": 60, "rounds": 2,
              "simulators": {"ideal": {"steps_per_s": 16.4, "reset_s": 0.9},
                             "realistic": {"steps_per_s": 13.1, "reset_s": 1.2},
                             "robosuite": {"steps_per_s": 3.3, "reset_s": 3.0,
                                           "version": "1.5.2"}},
              "per_round": [{"ideal": 5.0, "realistic": 4.0}, {"ideal": 6.0, "realistic": 4.5}],
              "ratio_to_robosuite": {"ideal": 5.5, "realistic": 4.25}}
    harness = HarnessBench(episodes=4, direct_s=40.0, pool1_s=48.0, pool2_s=30.0,
                           per_minute_1=5.0, per_minute_2=8.0, scaling=1.6, overhead_s=2.0,
                           inside_overhead_s=0.25)
    samples = {real.SIM: [20.0, 30.0], real.REAL: [60.0, 60.0], real.CAPTURE: [50.0, 50.0],
               real.FITTING: [8.0, 8.0], real.READ: [0.5, 0.5]}
    db = tmp_path / "speed.db"
    record_measurements(db, [
        *(measurement("bench-robosuite", {"world": world, "steps": 60, "rounds": 2, "seed": 0},
                      figures, 90.0) for world, figures in world_figures(result).items()),
        measurement("bench-sweep", {"sweep": "ci", "episodes": 4}, harness.figures(), 118.0),
        measurement("bench-real", {"repeats": 2, "seed": 0},
                    real.latency_figures(samples, (640, 360)), 3.0)])
    with ResultStore(db) as store:
        text = render_markdown("r", measurement_blocks(store.measurements()))
    assert ("| ideal | 60 x 2, seed 0 | 640x480 at 20 Hz | 16.4 | 0.90 | 3.3 (1.5.2) | 5.50x | "
            "5.00 6.00 | – |") in text
    assert "| realistic | 60 x 2, seed 0 | 640x480 at 20 Hz | 13.1 | 1.20 | " in text
    assert "| 4.25x | 4.00 4.50 | >= 5: MISS |" in text
    assert harness.overhead_pct == 20.0
    assert "| ci | 4 | 10.00 | 5.00 | 8.00 | 1.60x | 2.00 (20.0 %) | 0.250 | 118.0 |" in text
    assert ("| 640x360 | 2, seed 0 | 25.0 / 29.5 | 60.0 / 60.0 | 2.40x | 50.0 | 8.0 | 0.5 | "
            "8.5 (0.34x) | 3.0 |") in text


def test_a_row_missing_figures_still_renders() -> None:
    """An older or partial row (figures renamed since) shows dashes, not an error."""
    rows = [{"bench": bench, "params": params, "figures": {}, "run_s": 1.0, "finished_at": "t"}
            for bench, params in (("bench", {}), ("bench-robosuite", {}), ("bench-sweep", {}),
                                  ("bench-real", {}), ("soak", {"part": "mcp"}),
                                  ("soak", {"part": "sweep"}))]
    blocks = measurement_blocks(rows)
    tables = [b for b in blocks if isinstance(b, Table)]
    assert len(tables) == 5 and all(len(r) == len(t.headers) for t in tables for r in t.rows)
