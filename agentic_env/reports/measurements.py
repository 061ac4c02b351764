"""The report's measurements section: what the measurement benchmarks recorded.

``bench``, ``bench-grasp``, ``bench-calibration``, ``bench-collect``, ``bench-robosuite``,
``bench-sweep``, ``bench-real`` and ``soak`` run no episodes of a spec; each records its
figures into the results database as measurements
(:class:`~agentic_env.harness.db.Measurement`, one per benchmark and parameters;
:mod:`agentic_env.bench.store`). :func:`measurement_blocks` shows them as one compact table
per benchmark, the figures the command prints; a benchmark this module does not know gets
its parameters and figures as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from agentic_env.reports.blocks import Block, Cell, Heading, Para, Table
from agentic_env.text import safe_text

#: Characters of a JSON cell of an unknown benchmark's row.
_JSON_CELL = 200


def _num(value: Any, digits: int = 1) -> str:
    return "–" if value is None else f"{float(value):.{digits}f}"


def _axes(values: Any, digits: int, signed: bool = True) -> str:
    """A per-axis figure (x, y, z) as numbers (with their sign when ``signed``)."""
    if not isinstance(values, list | tuple):
        return "–"
    sign = "+" if signed else ""
    return " ".join(f"{float(v):{sign}.{digits}f}" for v in values)


def _grasp(row: dict[str, Any]) -> tuple[Cell, ...]:
    p, f = row["params"], row["figures"]
    kinds = ", ".join(f"{kind} {cell['lifted']}/{cell['picks']}"
                      for kind, cell in (f.get("per_kind") or {}).items())
    causes = ", ".join(f"{cause} {n}" for cause, n in (f.get("by_cause") or {}).items())
    return (str(p.get("task")), str(p.get("world")),
            f"{p.get('layouts')} from {p.get('seed')}", str(p.get("camera")),
            f"{f.get('lifted')}/{f.get('picks')} ({100 * float(f.get('success_rate') or 0):.0f} %)",
            kinds or "–",
            f"{_num(f.get('grasp_ms_mean'), 0)} / {_num(f.get('grasp_ms_median'), 0)} / "
            f"{_num(f.get('grasp_ms_max'), 0)}",
            causes or "–")


def _calibration(row: dict[str, Any]) -> tuple[Cell, ...]:
    p, f = row["params"], row["figures"]
    residuals = (f"{_num(f.get('mean_residual_translation_mm'), 2)} mm, "
                 f"{_num(f.get('mean_residual_rotation_deg'), 3)} deg, "
                 f"{_num(f.get('mean_residual_reprojection_px'), 3)} px")
    return (f"{p.get('camera')} -> {f.get('frame', '?')}",
            f"{p.get('sessions')} x {p.get('views')} from {p.get('seed')}",
            _axes(f.get("translation_bias_mm"), 2),
            _axes(f.get("translation_std_mm"), 2, signed=False),
            _axes(f.get("rotation_bias_deg"), 3), _axes(f.get("rotation_std_deg"), 3, False),
            residuals, "sensor models" if f.get("sensors") else "exact renders")


def _collect(row: dict[str, Any]) -> tuple[Cell, ...]:
    p, f = row["params"], row["figures"]
    return (f"{p.get('task')}/{p.get('setting')}", str(p.get("world")),
            f"{f.get('resolution')} {f.get('codec')}"
            + (" + depth" if f.get("depth") else ""),
            str(f.get("workers")), f"{f.get('episodes')} ({f.get('attempts')} tried)",
            str(f.get("frames")),
            f"{_num(f.get('frames_per_s'))} ({_num(f.get('frames_per_s_per_worker'))})",
            f"{_num(f.get('mb_per_episode'), 2)} ({_num(f.get('video_mb_per_episode'), 2)} / "
            f"{_num(f.get('parquet_mb_per_episode'), 2)})",
            _num(f.get("kb_per_frame")))


def _at(figures: Any, *keys: str) -> Any:
    """``figures[k1][k2]...``, ``None`` where a level is missing (an older row)."""
    for key in keys:
        if not isinstance(figures, dict):
            return None
        figures = figures.get(key)
    return figures


def _ms_ratio(ms: Any, ratio: Any, digits: int = 2) -> str:
    return f"{_num(ms, digits)} ({_num(ratio, 3)})"


def _bench(row: dict[str, Any]) -> tuple[Cell, ...]:
    p, f = row["params"], row["figures"]
    counts = p.get("counts") or {}
    control, observation = f.get("control_loop") or {}, f.get("observation") or {}
    high, world = f.get("observation_high_resolution") or {}, f.get("realistic_world") or {}
    timing, success = f.get("pick_timing") or {}, f.get("pick_success") or {}
    imports, targets = f.get("import") or {}, f.get("targets") or []
    resolution = "/".join(sorted(set((observation.get("cameras") or {}).values()))) or "?"

    def cost(case: dict[str, Any]) -> str:
        return (f"{_num(case.get('cost_ratio'), 3)} ({_num(case.get('realistic_ms'))} vs "
                f"{_num(case.get('ideal_ms'))} ms)")

    heavy = ", ".join(imports.get("heavy_modules_loaded") or [])
    wall = timing.get("mean_wall_s")
    return (f"{'quick' if p.get('quick') else 'full'}, seed {p.get('seed')}: "
            f"{counts.get('periods')} periods, {counts.get('picks')} picks",
            _num(control.get("overhead_ratio"), 3),
            f"{_num(control.get('send_rate_hz'), 0)} ({_num(control.get('env_step_rate_hz'))})",
            f"{resolution}: " + _ms_ratio(observation.get("env_ms"),
                                          observation.get("overhead_ratio")),
            _ms_ratio(high.get("env_ms"), high.get("overhead_ratio")),
            cost(world), cost(world.get("moving") or {}),
            f"{_num(timing.get('realtime_factor'))}x "
            f"({_num(None if wall is None else 1e3 * wall, 0)} ms)",
            f"{success.get('succeeded')}/{success.get('picks')}",
            _num(imports.get("best_s"), 3) + (f" ({heavy} loaded)" if heavy else ""),
            f"{sum(bool(t.get('pass')) for t in targets)}/{len(targets)}")


def _verdict(passed: Any) -> str:
    return "n/a" if passed is None else "PASS" if passed else "MISS"


def _robosuite(row: dict[str, Any]) -> tuple[Cell, ...]:
    p, f = row["params"], row["figures"]
    target = f.get("target")
    rounds = " ".join(f"{float(r):.2f}" for r in f.get("ratio_per_round") or [])
    return (str(p.get("world")), f"{p.get('steps')} x {p.get('rounds')}, seed {p.get('seed')}",
            f"{f.get('resolution')} at {f.get('control_hz')} Hz",
            _num(f.get("steps_per_s")), _num(f.get("reset_s"), 2),
            f"{_num(f.get('robosuite_steps_per_s'))} ({f.get('robosuite_version')})",
            f"{_num(f.get('ratio_to_robosuite'), 2)}x", rounds or "–",
            "–" if target is None else f">= {float(target):g}: {_verdict(f.get('passed'))}")


def _sweep(row: dict[str, Any]) -> tuple[Cell, ...]:
    p, f = row["params"], row["figures"]
    return (str(p.get("sweep")), str(p.get("episodes")),
            _num(f.get("direct_s_per_episode"), 2), _num(f.get("per_minute_1"), 2),
            _num(f.get("per_minute_2"), 2), f"{_num(f.get('scaling'), 2)}x",
            f"{_num(f.get('overhead_s'), 2)} ({_num(f.get('overhead_pct'))} %)",
            _num(f.get("inside_overhead_s"), 3))


def _slope(value: Any) -> str:
    return "–" if value is None else f"{float(value):+.1f}"


def _soak(row: dict[str, Any]) -> tuple[Cell, ...]:
    p, f = row["params"], row["figures"]
    if p.get("part") != "sweep":
        unit = f.get("unit", "runs")
        label = "sweep worker" if p.get("part") == "episodes" else "MCP server"
        size = f"{f.get('runs')} {unit}" + (f" ({p['agent']})" if p.get("agent") else "")
        return (label, size, f"{_num(f.get('rss_start_mib'), 0)} -> "
                f"{_num(f.get('rss_end_mib'), 0)}",
                f"{_slope(f.get('slope_mib'))} per {int(f.get('per') or 0):,} {unit}",
                str(f.get("crashes")), str(f.get("lost")), "–")
    runs = f.get("runs") or []
    rss = "; ".join(f"run {i}: {_num(r.get('rss_first_mib'), 0)} -> "
                    f"{_num(r.get('rss_last_mib'), 0)}" for i, r in enumerate(runs, 1))
    slopes = ", ".join(_slope(r.get("slope_mib")) for r in runs)
    worst = [q["slope_mib"] for r in runs for q in r.get("per_process") or []
             if q.get("slope_mib") is not None]
    kill = 100 * float(f.get("kill_at") or 0)
    return ("sweep killed and resumed",
            f"{f.get('episodes')} episodes, {f.get('realism')}, {f.get('workers')} workers, "
            f"max_actions {f.get('max_actions')}, kill at {kill:.0f} %",
            rss or "–",
            f"runs {slopes or '–'} per 100 episodes (bound {_num(f.get('rss_bound_mib'), 0)}: "
            f"{_verdict(f.get('flat'))}); per process at most "
            f"{_slope(max(worst) if worst else None)} (share "
            f"{_num(f.get('process_bound_mib'))}: {_verdict(f.get('flat_per_process'))})",
            f"{f.get('errors')} stored as errors",
            f"{f.get('lost')} lost, {f.get('duplicated')} duplicated, {f.get('extra')} extra, "
            f"{f.get('unparsable')} unparsable, {f.get('orphan_calls')} orphan calls",
            f"integrity {f.get('integrity')}, {f.get('stored')}/{f.get('episodes')} stored: "
            f"{_verdict(f.get('intact'))}")


def _real(row: dict[str, Any]) -> tuple[Cell, ...]:
    p, f = row["params"], row["figures"]

    def path(name: str, p95: bool = False) -> str:
        mean = _num(_at(f, "paths", name, "mean_ms"))
        return f"{mean} / {_num(_at(f, 'paths', name, 'p95_ms'))}" if p95 else mean

    return (str(f.get("resolution")), f"{p.get('repeats')}, seed {p.get('seed')}",
            path("SimEnv.observe", True), path("RealEnv+twin observe", True),
            f"{_num(f.get('overhead_ratio'), 2)}x", path("twin capture (native render)"),
            path("frame fitting (convert, crop, resize)"),
            path("arm state + gripper read (pty)"),
            f"{_num(f.get('pipeline_ms'))} ({_num(f.get('pipeline_ratio'), 2)}x)")


#: Benchmark -> (what it measures, its table's headings, a row's cells).
_KNOWN: dict[str, tuple[str, tuple[str, ...], Callable[[dict[str, Any]], tuple[Cell, ...]]]] = {
    "bench-grasp": (
        "grasp candidates picked on task layouts (privileged detection), per task and world",
        ("task", "world", "layouts", "camera", "lifted", "per kind (lifted/picks)",
         "grasp ms mean / median / max", "failures by cause"), _grasp),
    "bench-calibration": (
        "hand-eye calibration error in simulation (solved − true), per camera: bias (mean) "
        "and spread (std) per axis of the parent frame",
        ("camera -> frame", "sessions x views", "translation bias mm", "translation std mm",
         "rotation bias deg", "rotation std deg", "mean residuals", "images"), _calibration),
    "bench-collect": (
        "scripted-expert demonstrations recorded as a LeRobot dataset",
        ("task/setting", "world", "images", "workers", "episodes", "frames",
         "frames/s (per worker)", "MB/episode (video / parquet)", "kB/frame"), _collect),
    "bench": (
        "the simulated workcell's speed, per run: robot.send against raw mj_step, "
        "env.observe against raw mujoco.Renderer (both cameras RGB-D; ms and ratio), the "
        "realistic world's observation against the ideal one's at 640x480, the pick "
        "primitive's real-time factor, pick success, import time",
        ("run", "send / mj_step", "robot.send Hz (env.step Hz)", "observe ms (/ raw)",
         "1280x720 observe ms (/ raw)", "realistic / ideal, still",
         "realistic / ideal, arm moving", "pick real-time factor (wall)", "pick success",
         "import s", "targets met"), _bench),
    "bench-robosuite": (
        "env steps per second against robosuite's Lift (Panda), two RGB-D cameras, random "
        "actions, per world: median of rounds, each round's ratio measured back to back",
        ("world", "steps x rounds", "images", "steps/s", "reset s",
         "robosuite steps/s (version)", "ratio to robosuite", "ratio per round", "target"),
        _robosuite),
    "bench-sweep": (
        "the harness's throughput, a sweep's episodes run directly and on the pool with 1 "
        "and 2 workers, and its overhead per episode",
        ("sweep", "episodes", "direct s/episode", "episodes/min, 1 worker",
         "episodes/min, 2 workers", "scaling 2 vs 1", "overhead vs direct s/episode (%)",
         "overhead inside the sweep s/episode"), _sweep),
    "bench-real": (
        "observation latency, RealEnv over the MuJoCo twin devices against the sim env (ms, "
        "mean / p95), RealEnv's time split into the twin's capture and its own pipeline",
        ("cameras", "observations", "SimEnv.observe ms", "RealEnv+twin ms",
         "RealEnv / SimEnv", "twin capture ms", "frame fitting ms", "arm + gripper read ms",
         "pipeline ms (x SimEnv)"), _real),
    "soak": (
        "memory and robustness over a long run, per part: resident memory (RSS) and its "
        "slope fitted after a warm-up, crashes, results lost; the sweep part SIGKILLed and "
        "resumed, its database checked",
        ("part", "size", "RSS MiB", "slope MiB", "crashes", "lost", "checks"), _soak),
}


def _json(value: Any) -> str:
    return safe_text(json.dumps(value, sort_keys=True), _JSON_CELL)


def measurement_blocks(rows: Sequence[dict[str, Any]]) -> list[Block]:
    """The measurements section from :meth:`ResultStore.measurements` rows (none: no
    blocks): a table per benchmark, each row ending with its run's wall time (s) and when
    it was stored (UTC)."""
    if not rows:
        return []
    blocks: list[Block] = [
        Heading("Measurements"),
        Para("Figures the measurement benchmarks recorded (not episodes: no spec, no "
             "success verdict), one row per benchmark and parameters; a measurement made "
             "again replaces its row. run s: the wall time of the run that made it.")]
    for bench in sorted({row["bench"] for row in rows}):
        mine = [row for row in rows if row["bench"] == bench]
        tail = ("run s", "measured")
        if bench in _KNOWN:
            what, headers, cells_of = _KNOWN[bench]
            cells = [cells_of(row) for row in mine]
        else:
            what, headers = "figures as recorded", ("parameters", "figures")
            cells = [(_json(row["params"]), _json(row["figures"])) for row in mine]
        blocks += [Heading(f"{bench}: {what}", 3),
                   Table((*headers, *tail),
                         tuple((*c, _num(row["run_s"]), str(row["finished_at"]))
                               for c, row in zip(cells, mine, strict=True)))]
    return blocks
