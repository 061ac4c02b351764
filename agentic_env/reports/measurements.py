"""The report's measurements section: what the measurement benchmarks recorded.

``bench-grasp``, ``bench-calibration`` and ``bench-collect`` run no episodes of a spec; each
records its figures into the results database as measurements
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
