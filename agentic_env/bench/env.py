"""Performance and reliability benchmark of the simulated workcell (``agentic-env bench``).

Measures, in one run, each figure beside its baseline on the same compiled model (the
1280x720 observation figure needs a second model, compiled with those cameras):

1. **Control loop.** :meth:`SimRobot.send` (the physics + control path every env step runs)
   against raw ``mujoco.mj_step(model, data, nstep=n_substeps)`` on a copy of the same state,
   as an overhead ratio; also ``env.step`` in ``joint_position`` mode, with its observation
   stubbed out and with the normal observation (both for information).
2. **Observation.** ``env.observe()`` (both cameras, RGB + depth) against bare
   ``mujoco.Renderer`` calls for the same cameras and resolutions, at the default resolution
   and at 1280x720, the Azure Kinect colour mode (for information); and the realistic
   world's ``env.observe()`` against the ideal world's at 640x480, interleaved, with the scene
   still and with the arm moving every step (one control period towards random joint targets
   before each observation, untimed: no view repeats the previous one, the case a
   low-level agent makes); and the agents' depth post-processing of both cameras' realistic
   depth against the ideal world's observation.
3. **Pick primitive.** Wall time of ``env.executor.execute`` on the expert's pick actions
   (no observation render) and its real-time factor, sim duration / wall time.
4. **Pick success.** Ground-truth success rate of the expert's first pick over random cube
   poses: the primitive succeeds and the cube ends at least 5 cm above where it was.
5. **Import.** ``import agentic_env`` time in a fresh interpreter, and whether heavy optional
   modules (litellm, torch, ray) got imported with it.

Timings use :func:`time.perf_counter`; micro-benchmarks warm up first, interleave the measured
path and its baseline, run with the garbage collector paused (as :mod:`timeit` does) and keep
the best of several repeats. Results are printed as a table (each target with PASS/MISS) and
written as JSON together with machine information.

Rendering needs a headless OpenGL backend: run with ``MUJOCO_GL=egl`` (or ``osmesa``).
"""

from __future__ import annotations

import dataclasses
import datetime
import sys
from collections.abc import Sequence
from typing import Any

from agentic_env.bench.env_measures import (
    CHUNK_PERIODS,
    HEAVY_MODULES,
    LIFT_THRESHOLD,
    Counts,
    bench_control_loop,
    bench_depth_filter,
    bench_import,
    bench_observation,
    bench_pick_success,
    bench_pick_timing,
    bench_world_cost,
    machine_info,
)
from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.sim.realism import REALISM_LEVELS
from agentic_env.tasks.tabletop import TabletopTask

#: Largest accepted ratio of ``SimRobot.send`` time to raw ``mj_step`` time per period.
CONTROL_OVERHEAD_TARGET = 1.10
#: Largest accepted ratio of ``env.observe()`` time to bare ``mujoco.Renderer`` time.
OBSERVATION_OVERHEAD_TARGET = 1.10
#: Largest accepted ratio of a realistic-world observation's time to an ideal one's.
REALISTIC_COST_TARGET = 1.25
#: Largest accepted ratio of the agents' depth filtering of both cameras' frames to the ideal
#: observation of the same cameras (a perception pass costing more than producing the frames
#: it reads would be an agent's main per-frame cost).
DEPTH_FILTER_TARGET = 1.0
#: Resolution of both cameras for the realistic world's cost (the issue's 640x480 RGB-D).
WORLD_RESOLUTION = (640, 480)
#: Smallest accepted real-time factor (sim seconds per wall second) of a pick primitive.
PICK_RTF_TARGET = 5.0
#: Longest accepted ``import agentic_env`` time in a fresh interpreter, seconds.
IMPORT_TIME_TARGET = 1.0
#: The information-only camera resolution (width, height), pixels.
HIGH_RESOLUTION = (1280, 720)

_TIMING_SEED_OFFSET = 10_000


#: The counts of a full run, and of a ``--quick`` smoke test (its figures are noisy).
FULL_COUNTS = Counts(periods=3000, warmup_periods=300, repeats=3, env_steps=60,
                     observations=40, observations_high=15, timing_picks=10, picks=100,
                     import_runs=3)
QUICK_COUNTS = Counts(periods=150, warmup_periods=20, repeats=3, env_steps=3, observations=3,
                      observations_high=2, timing_picks=1, picks=3, import_runs=3)


@dataclasses.dataclass(frozen=True)
class Target:
    """A figure checked against its target.

    Attributes:
        metric: what is measured.
        value: the measured value.
        limit: the target value.
        higher_is_better: ``value >= limit`` passes when true, ``value <= limit`` otherwise.
        unit: unit suffix for printing.
    """

    metric: str
    value: float
    limit: float
    higher_is_better: bool
    unit: str = ""

    @property
    def passed(self) -> bool:
        """Whether the value meets the target."""
        return self.value >= self.limit if self.higher_is_better else self.value <= self.limit

    def as_json(self) -> dict[str, Any]:
        """Plain-dict form for the JSON report."""
        return {
            "metric": self.metric,
            "value": self.value,
            "target": self.limit,
            "comparison": ">=" if self.higher_is_better else "<=",
            "unit": self.unit,
            "pass": self.passed,
        }


class Report:
    """Prints the result table row by row, as each section finishes."""

    _WIDTHS = (50, 16, 12, 6)

    def __init__(self, stream: Any = None) -> None:
        self._stream = stream or sys.stdout
        self.targets: list[Target] = []

    def _line(self, *cells: str) -> None:
        label, value, target, result = cells
        w = self._WIDTHS
        text = f"{label:<{w[0]}} {value:>{w[1]}}  {target:<{w[2]}} {result:<{w[3]}}"
        print(text.rstrip(), file=self._stream, flush=True)

    def header(self, title: str) -> None:
        """Print the title and the column headings."""
        print(title, file=self._stream, flush=True)
        self._line("metric", "value", "target", "result")
        print("-" * (sum(self._WIDTHS) + 5), file=self._stream, flush=True)

    def section(self, title: str) -> None:
        """Print a section heading."""
        print(title, file=self._stream, flush=True)

    def info(self, label: str, value: str) -> None:
        """Print an information-only figure."""
        self._line("  " + label, value, "(info)", "")

    def check(self, target: Target, value: str) -> None:
        """Print a figure with its target and PASS/MISS, and remember it."""
        self.targets.append(target)
        comparison = ">=" if target.higher_is_better else "<="
        limit = f"{comparison} {target.limit:g}{target.unit}"
        self._line("  " + target.metric, value, limit, "PASS" if target.passed else "MISS")

    def footer(self) -> None:
        """Print the number of targets met."""
        met = sum(t.passed for t in self.targets)
        print("-" * (sum(self._WIDTHS) + 5), file=self._stream, flush=True)
        print(f"{met}/{len(self.targets)} targets met", file=self._stream, flush=True)


def _hz(value: float) -> str:
    return f"{value:,.0f} Hz" if value >= 100 else f"{value:,.1f} Hz"


def _ratios(values: Sequence[float]) -> str:
    return " ".join(f"{value:.3f}" for value in values)


def run_benchmark(
    counts: Counts,
    seed: int = 0,
    progress: bool = True,
    quick: bool = False,
    report: Report | None = None,
) -> dict[str, Any]:
    """Run every measurement, print the table to ``report`` and return the JSON document.

    Args:
        counts: how much work each measurement does.
        seed: first layout seed.
        progress: show a progress bar during the pick success run.
        quick: label the run as a smoke test (``--quick``).
        report: where the table goes (default: a :class:`Report` on stdout).
    """
    report = report or Report()
    task = TabletopTask()
    env = SimEnv(task=task, control_mode="joint_position")
    results: dict[str, Any] = {}
    try:
        env.reset(seed=seed)
        machine = machine_info(env.model)
        report.header(
            f"agentic-env bench{' --quick' if quick else ''}: mujoco "
            f"{machine['mujoco_version']}, MUJOCO_GL={machine['MUJOCO_GL'] or '(unset)'} "
            f"({machine['gl_renderer']}), {machine['cpus_usable']} CPUs, {machine['cpu_model']}"
        )

        control = bench_control_loop(env, counts)
        results["control_loop"] = control
        report.section(f"1. control loop ({control['n_substeps']} physics steps per "
                       f"{control['control_dt_s'] * 1e3:.0f} ms period, {counts.periods} "
                       f"periods, best of {counts.repeats})")
        report.info("raw mj_step rate (baseline)", _hz(control["raw_mj_step_rate_hz"]))
        report.info("robot.send rate", _hz(control["send_rate_hz"]))
        report.check(Target("robot.send / raw mj_step time", control["overhead_ratio"],
                            CONTROL_OVERHEAD_TARGET, higher_is_better=False),
                     f"{control['overhead_ratio']:.3f}")
        report.info("  per repeat", _ratios(control["overhead_ratio_per_repeat"]))
        report.info(f"  fastest {CHUNK_PERIODS}-period chunks",
                    f"{control['overhead_ratio_best_chunk']:.3f}")
        report.info("robot.send real-time factor", f"{control['send_realtime_factor']:.1f}x")
        report.info("env.step rate, observation stubbed",
                    _hz(control["env_step_no_render_rate_hz"]))
        report.info("env.step (stubbed obs) / raw mj_step time",
                    f"{control['env_step_no_render_ratio']:.3f}")
        report.info(f"env.step rate with observation ({counts.env_steps} steps)",
                    _hz(control["env_step_rate_hz"]))

        observation = bench_observation(env, counts.observations, counts.repeats)
        results["observation"] = observation
        resolution = "/".join(sorted(set(observation["cameras"].values())))
        report.section(f"2. observation, 2 cameras RGB + depth ({counts.observations} per "
                       f"repeat, best of {counts.repeats})")
        report.info(f"raw mujoco.Renderer at {resolution}",
                    f"{observation['raw_renderer_ms']:.2f} ms")
        report.info(f"env.observe() at {resolution}", f"{observation['env_ms']:.2f} ms")
        report.check(Target("env.observe / raw renderer time",
                            observation["overhead_ratio"], OBSERVATION_OVERHEAD_TARGET,
                            higher_is_better=False), f"{observation['overhead_ratio']:.3f}")
        report.info("  per repeat", _ratios(observation["overhead_ratio_per_repeat"]))
        report.info("  fastest single observations",
                    f"{observation['overhead_ratio_best_single']:.3f}")

        width, height = HIGH_RESOLUTION
        high_scene = SceneConfig.at_resolution(width, height)
        high_env = SimEnv(task=TabletopTask(), control_mode="joint_position", scene=high_scene)
        try:
            high_env.reset(seed=seed)
            high = bench_observation(high_env, counts.observations_high, counts.repeats)
        finally:
            high_env.close()
        results["observation_high_resolution"] = high
        report.info(f"raw mujoco.Renderer at {width}x{height}",
                    f"{high['raw_renderer_ms']:.2f} ms")
        report.info(f"env.observe() at {width}x{height}", f"{high['env_ms']:.2f} ms")
        report.info(f"env.observe / raw renderer at {width}x{height}",
                    f"{high['overhead_ratio']:.3f}")

        worlds: dict[str, SimEnv] = {}
        try:
            for realism in REALISM_LEVELS:  # the same workcell at 640x480 in each world
                worlds[realism] = SimEnv(task=TabletopTask(), control_mode="joint_position",
                                         scene=SceneConfig.at_resolution(*WORLD_RESOLUTION),
                                         realism=realism)
                worlds[realism].reset(seed=seed)
            still = bench_world_cost(worlds, counts.observations, counts.repeats)
            moving = bench_world_cost(worlds, counts.observations, counts.repeats,
                                      moving=True, seed=seed)
            filtering = bench_depth_filter(worlds, counts.observations, counts.repeats)
        finally:
            for world_env in worlds.values():
                world_env.close()
        results["realistic_world"] = {"resolution": list(WORLD_RESOLUTION), **still,
                                      "moving": moving, "depth_filter": filtering}
        for world, case in ((still, "scene still"), (moving, "arm moving")):
            report.info(f"env.observe() {WORLD_RESOLUTION[0]}x{WORLD_RESOLUTION[1]}, ideal, "
                        f"{case}", f"{world['ideal_ms']:.2f} ms")
            report.info("  realistic world (device models, calibration)",
                        f"{world['realistic_ms']:.2f} ms")
            report.check(Target(f"realistic / ideal observation time, {case}",
                                world["cost_ratio"], REALISTIC_COST_TARGET,
                                higher_is_better=False), f"{world['cost_ratio']:.3f}")
        report.info("agents' depth filter, shoulder + wrist",
                    f"{filtering['shoulder_ms']:.2f} + {filtering['wrist_ms']:.2f} ms")
        report.check(Target("depth filter, both cameras / ideal observation time",
                            filtering["filter_ratio"], DEPTH_FILTER_TARGET,
                            higher_is_better=False), f"{filtering['filter_ratio']:.3f}")

        timing = bench_pick_timing(env, task, counts.timing_picks, seed + _TIMING_SEED_OFFSET)
        results["pick_timing"] = timing
        report.section(f"3. pick primitive, executor only ({counts.timing_picks} seeds, "
                       f"{timing['succeeded']} succeeded)")
        report.info("mean wall time", f"{timing['mean_wall_s'] * 1e3:.1f} ms")
        report.info("mean sim duration", f"{timing['mean_sim_duration_s']:.2f} s")
        report.check(Target("real-time factor (sim / wall)", timing["realtime_factor"],
                            PICK_RTF_TARGET, higher_is_better=True, unit="x"),
                     f"{timing['realtime_factor']:.1f}x")

        success = bench_pick_success(env, task, counts.picks, seed, progress=progress)
        results["pick_success"] = success
        report.section(f"4. pick success, expert's first pick ({counts.picks} random layouts, "
                       f"lift >= {LIFT_THRESHOLD * 100:.0f} cm)")
        report.info("success rate",
                    f"{success['succeeded']}/{counts.picks} = {success['success_rate']:.0%}")
        for reason, number in success["failures_by_reason"].items():
            report.info(f"failures: {reason}", str(number))
        if not success["failures_by_reason"]:
            report.info("failures", "0")
    finally:
        env.close()

    imports = bench_import(counts.import_runs)
    results["import"] = imports
    report.section(f"5. import agentic_env in a fresh interpreter (best of {counts.import_runs})")
    report.check(Target("import time", imports["best_s"], IMPORT_TIME_TARGET,
                        higher_is_better=False, unit=" s"), f"{imports['best_s']:.3f} s")
    loaded = imports["heavy_modules_loaded"]
    report.check(Target(f"heavy modules loaded ({', '.join(HEAVY_MODULES)})", float(len(loaded)),
                        0.0, higher_is_better=False), ", ".join(loaded) or "none")
    report.footer()

    return {
        "schema_version": 1,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "seed": seed,
        "counts": dataclasses.asdict(counts),
        "machine": machine,
        **results,
        "targets": [target.as_json() for target in report.targets],
        "all_targets_met": all(target.passed for target in report.targets),
    }
