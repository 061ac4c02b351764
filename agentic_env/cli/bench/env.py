"""Performance and reliability benchmark of the simulated workcell (``agentic-env bench``).

Measures, in one run, each figure beside its baseline on the same compiled model (the
1280x720 observation figure needs a second model, compiled with those cameras):

1. **Control loop.** :meth:`SimRobot.send` (the physics + control path every env step runs)
   against raw ``mujoco.mj_step(model, data, nstep=n_substeps)`` on a copy of the same state,
   as an overhead ratio; also ``env.step`` in ``joint_position`` mode, with its observation
   stubbed out and with the normal observation (both for information).
2. **Observation.** ``env.observe()`` (both cameras, RGB + depth) against bare
   ``mujoco.Renderer`` calls for the same cameras and resolutions, at the default resolution
   and at 1280x720, the Azure Kinect colour mode (for information).
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

import argparse
import contextlib
import copy
import dataclasses
import datetime
import gc
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
from tqdm import tqdm

from agentic_env.contract.spaces import PRIMITIVES
from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.tasks.tabletop import TabletopTask

#: Largest accepted ratio of ``SimRobot.send`` time to raw ``mj_step`` time per period.
CONTROL_OVERHEAD_TARGET = 1.10
#: Largest accepted ratio of ``env.observe()`` time to bare ``mujoco.Renderer`` time.
OBSERVATION_OVERHEAD_TARGET = 1.10
#: Smallest accepted real-time factor (sim seconds per wall second) of a pick primitive.
PICK_RTF_TARGET = 5.0
#: Longest accepted ``import agentic_env`` time in a fresh interpreter, seconds.
IMPORT_TIME_TARGET = 1.0
#: Height a picked cube must gain for the pick to count as a success, metres.
LIFT_THRESHOLD = 0.05
#: Modules that ``import agentic_env`` must not pull in.
HEAVY_MODULES = ("litellm", "torch", "ray")
#: The information-only camera resolution (width, height), pixels.
HIGH_RESOLUTION = (1280, 720)

_PICK = PRIMITIVES.index("pick")
_TIMING_SEED_OFFSET = 10_000
#: Control periods each loop runs before the next takes its turn.
_CHUNK = 50

_IMPORT_SCRIPT = (
    "import time; t = time.perf_counter(); import agentic_env; "
    "dt = time.perf_counter() - t; import json, sys; "
    "print(json.dumps({'seconds': dt, 'modules': len(sys.modules), "
    f"'heavy': [m for m in {HEAVY_MODULES!r} if m in sys.modules]}}))"
)


@dataclasses.dataclass(frozen=True)
class Counts:
    """How much work each measurement does.

    Attributes:
        periods: control periods per timed repeat of the control-loop figures.
        warmup_periods: untimed control periods before timing.
        repeats: timed repeats of each micro-benchmark (the best one is kept).
        env_steps: ``env.step`` calls (with observation) per timed repeat.
        observations: observations per timed repeat at the default resolution.
        observations_high: observations per timed repeat at 1280x720.
        timing_picks: timed pick primitives (after one untimed warm-up pick).
        picks: random cube poses of the success-rate figure.
        import_runs: fresh interpreters timed for the import figure (best one kept).
    """

    periods: int
    warmup_periods: int
    repeats: int
    env_steps: int
    observations: int
    observations_high: int
    timing_picks: int
    picks: int
    import_runs: int


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


# -- timing helpers ---------------------------------------------------------------------------


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (as :mod:`timeit` does) inside the block."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _time_loop(body: Callable[[], object], count: int) -> float:
    """Wall time of ``count`` calls of ``body``, seconds (garbage collector paused)."""
    with _gc_paused():
        start = time.perf_counter()
        for _ in range(count):
            body()
        return time.perf_counter() - start


def _hold_targets(env: SimEnv) -> tuple[np.ndarray, float]:
    """The current servo references: sending them holds the arm where it is."""
    return env.robot.joint_reference(), env.robot.gripper_reference()


# -- 1. control loop --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Interleaved:
    """Side-by-side timings of several loops (see :func:`_interleaved`).

    Attributes:
        best: per body, the smallest total over the repeats, seconds per call.
        per_repeat: per repeat and body, the total, seconds per call.
        best_chunk: per body, the fastest chunk, seconds per call (a load-robust estimate).
    """

    best: dict[str, float]
    per_repeat: list[dict[str, float]]
    best_chunk: dict[str, float]


def _interleaved(
    bodies: dict[str, Callable[[], object]], count: int, chunk: int, repeats: int
) -> Interleaved:
    """Time several loops side by side, ``repeats`` times ``count`` calls of each body.

    The bodies take turns every ``chunk`` calls, so that background load on the machine hits
    them alike.
    """
    per_repeat: list[dict[str, float]] = []
    best_chunk = dict.fromkeys(bodies, math.inf)
    for _ in range(repeats):
        total = dict.fromkeys(bodies, 0.0)
        done = 0
        while done < count:
            size = min(chunk, count - done)
            for name, body in bodies.items():
                elapsed = _time_loop(body, size)
                total[name] += elapsed
                best_chunk[name] = min(best_chunk[name], elapsed / size)
            done += size
        per_repeat.append({name: value / count for name, value in total.items()})
    best = {name: min(totals[name] for totals in per_repeat) for name in bodies}
    return Interleaved(best, per_repeat, best_chunk)


def bench_control_loop(env: SimEnv, counts: Counts) -> dict[str, Any]:
    """Time ``env.robot.send`` against raw ``mj_step`` on a copy of the same state.

    The arm holds its pose, so both loops integrate the same physics (same contacts, same
    actuator states) from the same starting state; the difference is the control path's
    Python bookkeeping (target clamping, rate limits, divergence and contact checks).
    ``env.step`` in ``joint_position`` mode is timed alongside with its observation replaced
    by a cached one (the step's bookkeeping without rendering) and, over fewer steps, with
    its normal observation.

    Returns:
        Times per control period (seconds), rates (Hz) and ratios; see the JSON report.
    """
    robot, model = env.robot, env.model
    nstep = robot.n_substeps
    q_hold, width_hold = _hold_targets(env)
    action = np.concatenate([q_hold, [width_hold]])
    cached = env.observe()

    def send() -> object:
        return robot.send(q_hold, width_hold)

    def env_step() -> object:
        return env.step(action)

    def env_step_stubbed() -> object:
        env.observe = lambda: cached  # type: ignore[method-assign]
        try:
            return env.step(action)
        finally:
            del env.observe

    raw_data = copy.copy(env.data)

    def raw_step() -> None:
        mujoco.mj_step(model, raw_data, nstep=nstep)

    bodies: dict[str, Callable[[], object]] = {
        "send": send, "raw": raw_step, "stubbed": env_step_stubbed,
    }
    for body in bodies.values():
        _time_loop(body, counts.warmup_periods)
    mujoco.mj_copyData(raw_data, model, env.data)  # both loops start from the same state
    timing = _interleaved(bodies, counts.periods, chunk=_CHUNK, repeats=counts.repeats)
    env_step()  # warm-up of the rendered step
    full = min(_time_loop(env_step, counts.env_steps) for _ in range(counts.repeats))

    send_s, raw_s, stub_s = (timing.best[name] for name in ("send", "raw", "stubbed"))
    full_s = full / counts.env_steps
    return {
        "periods": counts.periods,
        "repeats": counts.repeats,
        "n_substeps": nstep,
        "timestep_s": float(model.opt.timestep),
        "control_dt_s": robot.control_dt,
        "send_s_per_period": send_s,
        "raw_mj_step_s_per_period": raw_s,
        "send_rate_hz": 1.0 / send_s,
        "raw_mj_step_rate_hz": 1.0 / raw_s,
        "overhead_ratio": send_s / raw_s,
        "overhead_ratio_per_repeat": [t["send"] / t["raw"] for t in timing.per_repeat],
        "chunk_periods": _CHUNK,
        "overhead_ratio_best_chunk": timing.best_chunk["send"] / timing.best_chunk["raw"],
        "send_realtime_factor": robot.control_dt / send_s,
        "env_step_no_render_s": stub_s,
        "env_step_no_render_rate_hz": 1.0 / stub_s,
        "env_step_no_render_ratio": stub_s / raw_s,
        "env_steps_with_observation": counts.env_steps,
        "env_step_s": full_s,
        "env_step_rate_hz": 1.0 / full_s,
    }


# -- 2. observation ---------------------------------------------------------------------------


def bench_observation(env: SimEnv, count: int, repeats: int) -> dict[str, Any]:
    """Time ``env.observe()`` against bare ``mujoco.Renderer`` calls.

    The baseline renders the same MuJoCo cameras at the same resolutions, each with its own
    renderer (as the env has): ``update_scene``, render RGB, enable depth, render, disable.
    The two alternate observation by observation.

    Returns:
        Milliseconds per observation of both, their ratio and the cameras' resolutions.
    """
    model, data = env.model, env.data
    renderers: list[tuple[mujoco.Renderer, int]] = []
    try:
        for cam in env.cameras:
            renderer = mujoco.Renderer(model, height=cam.height, width=cam.width)
            renderers.append((renderer, env.camera_id(cam.name)))

        def raw_observation() -> None:
            for renderer, camera_id in renderers:
                renderer.update_scene(data, camera=camera_id)
                renderer.render()
                renderer.enable_depth_rendering()
                renderer.render()
                renderer.disable_depth_rendering()

        bodies: dict[str, Callable[[], object]] = {
            "env": env.observe, "raw": raw_observation,
        }
        for body in bodies.values():
            body()
        timing = _interleaved(bodies, count, chunk=1, repeats=repeats)
    finally:
        for renderer, _ in renderers:
            renderer.close()
    env_ms, raw_ms = timing.best["env"] * 1e3, timing.best["raw"] * 1e3
    return {
        "cameras": {cam.name: f"{cam.width}x{cam.height}" for cam in env.cameras},
        "observations": count,
        "repeats": repeats,
        "env_ms": env_ms,
        "raw_renderer_ms": raw_ms,
        "overhead_ratio": env_ms / raw_ms,
        "overhead_ratio_per_repeat": [t["env"] / t["raw"] for t in timing.per_repeat],
        "overhead_ratio_best_single": timing.best_chunk["env"] / timing.best_chunk["raw"],
    }


# -- 3. and 4. pick primitive -----------------------------------------------------------------


def _first_pick(env: SimEnv, task: TabletopTask, seed: int) -> dict[str, Any]:
    """Reset with ``seed`` and return the expert's first action (a pick)."""
    env.reset(seed=seed)
    action = next(iter(task.expert_actions(env.scene_state)))
    if int(action["primitive"]) != _PICK:
        raise RuntimeError(f"the expert's first action is {PRIMITIVES[int(action['primitive'])]}"
                           ", not a pick")
    return action


def bench_pick_timing(env: SimEnv, task: TabletopTask, count: int, seed: int) -> dict[str, Any]:
    """Wall time and real-time factor of the expert's pick, without any observation render.

    One untimed warm-up pick runs first; then ``count`` picks on seeds ``seed``, ``seed+1``...

    Returns:
        Mean wall time and sim duration (seconds), the real-time factor (total sim time /
        total wall time) and how many picks succeeded.
    """
    env.executor.execute(_first_pick(env, task, seed - 1))
    walls, sims, ok = [], [], 0
    for index in range(count):
        action = _first_pick(env, task, seed + index)
        start = time.perf_counter()
        outcome = env.executor.execute(action)
        walls.append(time.perf_counter() - start)
        sims.append(outcome.sim_duration)
        ok += outcome.ok
    return {
        "picks": count,
        "seeds": [seed, seed + count - 1],
        "succeeded": ok,
        "mean_wall_s": float(np.mean(walls)),
        "min_wall_s": float(np.min(walls)),
        "max_wall_s": float(np.max(walls)),
        "mean_sim_duration_s": float(np.mean(sims)),
        "realtime_factor": float(np.sum(sims) / np.sum(walls)),
    }


def _target_cube(env: SimEnv, task: TabletopTask, action: dict[str, Any]) -> str:
    """The cube nearest (in x, y) to the pick pose."""
    grasp_xy = np.asarray(action["pose"][:2], dtype=float)
    scene = env.scene_state
    return min((cube.name for cube in task.cubes),
               key=lambda name: float(np.linalg.norm(scene.body_position(name)[:2] - grasp_xy)))


def bench_pick_success(
    env: SimEnv, task: TabletopTask, count: int, seed: int, progress: bool = True
) -> dict[str, Any]:
    """Ground-truth success rate of the expert's first pick over ``count`` random layouts.

    A pick succeeds when the primitive reports success and the picked cube (the one nearest
    the grasp pose) ends at least :data:`LIFT_THRESHOLD` above its height before the pick.
    Failures are counted by the primitive's reason, ``not_lifted``, or ``reset_failed``.

    Returns:
        The rate (0..1), the failure counts by reason and one record per failure.
    """
    failures: list[dict[str, Any]] = []
    succeeded = 0
    lifts: list[float] = []
    for current in tqdm(range(seed, seed + count), desc="pick success", unit="pick",
                        disable=not progress, leave=False, file=sys.stderr):
        try:
            action = _first_pick(env, task, current)
        except Exception as error:  # a diverged layout is a failure of this sample, not fatal
            failures.append({"seed": current, "reason": "reset_failed", "message": str(error),
                             "lift_m": 0.0})
            continue
        cube = _target_cube(env, task, action)
        height_before = float(env.scene_state.body_position(cube)[2])
        outcome = env.executor.execute(action)
        lift = float(env.scene_state.body_position(cube)[2]) - height_before
        if outcome.ok and lift >= LIFT_THRESHOLD:
            succeeded += 1
            lifts.append(lift)
            continue
        failures.append({
            "seed": current,
            "cube": cube,
            "reason": outcome.reason or "not_lifted",
            "message": outcome.message,
            "lift_m": lift,
        })
    reasons = Counter(failure["reason"] for failure in failures)
    return {
        "picks": count,
        "seeds": [seed, seed + count - 1],
        "succeeded": succeeded,
        "success_rate": succeeded / count if count else 0.0,
        "lift_threshold_m": LIFT_THRESHOLD,
        "mean_lift_m": float(np.mean(lifts)) if lifts else 0.0,
        "failures_by_reason": dict(reasons.most_common()),
        "failures": failures,
    }


# -- 5. import ----------------------------------------------------------------------------------


def bench_import(runs: int) -> dict[str, Any]:
    """Time ``import agentic_env`` in ``runs`` fresh interpreters (best run kept).

    Returns:
        The best and all times (seconds), the module count after the import and the heavy
        modules (:data:`HEAVY_MODULES`) that were imported with it.
    """
    times: list[float] = []
    heavy: set[str] = set()
    modules = 0
    for _ in range(runs):
        completed = subprocess.run(
            [sys.executable, "-c", _IMPORT_SCRIPT], capture_output=True, text=True,
            check=True, timeout=120,
        )
        result = json.loads(completed.stdout.strip().splitlines()[-1])
        times.append(float(result["seconds"]))
        heavy.update(result["heavy"])
        modules = int(result["modules"])
    return {
        "runs": runs,
        "best_s": min(times),
        "all_s": times,
        "modules_after_import": modules,
        "heavy_modules_checked": list(HEAVY_MODULES),
        "heavy_modules_loaded": sorted(heavy),
    }


# -- machine information ------------------------------------------------------------------------


def _cpu_model() -> str:
    """CPU model name (from /proc/cpuinfo on Linux), or what :mod:`platform` says."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _gl_renderer(model: mujoco.MjModel) -> str:
    """The OpenGL renderer string of a MuJoCo offscreen context (e.g. llvmpipe), if known."""
    try:
        renderer = mujoco.Renderer(model, height=16, width=16)
    except Exception:  # no usable OpenGL backend: report rather than fail
        return "unavailable"
    try:
        context = getattr(renderer, "_gl_context", None)
        if context is None:
            return "unknown"
        context.make_current()
        from OpenGL import GL

        name = GL.glGetString(GL.GL_RENDERER)
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:  # PyOpenGL missing or the backend refuses the query
        return "unknown"
    finally:
        renderer.close()


def machine_info(model: mujoco.MjModel) -> dict[str, Any]:
    """Platform, CPUs, library versions and the rendering backend of this run."""
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(affinity) if affinity is not None else os.cpu_count(),
        "mujoco_version": mujoco.__version__,
        "numpy_version": np.__version__,
        "MUJOCO_GL": os.environ.get("MUJOCO_GL", ""),
        "gl_backend": mujoco.GLContext.__module__ if hasattr(mujoco, "GLContext") else "none",
        "gl_renderer": _gl_renderer(model),
    }


# -- main ---------------------------------------------------------------------------------------


def _hz(value: float) -> str:
    return f"{value:,.0f} Hz" if value >= 100 else f"{value:,.1f} Hz"


def _ratios(values: Sequence[float]) -> str:
    return " ".join(f"{value:.3f}" for value in values)


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="agentic-env bench",
        description="Benchmark the simulated workcell: control-loop and rendering overhead, "
        "pick speed and success rate, import time. Run with MUJOCO_GL=egl when headless.",
    )
    parser.add_argument("--out", type=Path, default=Path("runs/bench.json"),
                        help="JSON report path (parent folders are created; default: "
                        "%(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="small counts, for a smoke test (the figures are noisy)")
    parser.add_argument("--picks", type=int, default=None,
                        help=f"random cube poses of the success rate (default "
                        f"{FULL_COUNTS.picks}, {QUICK_COUNTS.picks} with --quick)")
    parser.add_argument("--periods", type=int, default=None,
                        help=f"control periods per timed repeat (default {FULL_COUNTS.periods}, "
                        f"{QUICK_COUNTS.periods} with --quick)")
    parser.add_argument("--seed", type=int, default=0, help="first layout seed (default 0)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 when a target is missed")
    args = parser.parse_args(argv)
    for name in ("picks", "periods"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name} must be at least 1")
    return args


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
        report.info(f"  fastest {_CHUNK}-period chunks",
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
        high_scene = SceneConfig(shoulder_camera=azure_kinect_color(width, height),
                                 wrist_camera=realsense_d405(width, height))
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


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON report.

    Returns:
        0, or 1 with ``--strict`` when a target was missed.
    """
    args = _parse_args(argv)
    counts = QUICK_COUNTS if args.quick else FULL_COUNTS
    overrides = {name: getattr(args, name) for name in ("picks", "periods")
                 if getattr(args, name) is not None}
    counts = dataclasses.replace(counts, **overrides)
    document = run_benchmark(counts, seed=args.seed, progress=not args.no_progress,
                             quick=args.quick)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2, allow_nan=False) + "\n")
    print(f"JSON report: {args.out}")
    return 1 if args.strict and not document["all_targets_met"] else 0


if __name__ == "__main__":
    sys.exit(main())
