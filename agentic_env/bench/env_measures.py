"""The measurements of ``agentic-env bench``: control loop and observation overhead against
raw MuJoCo, pick timing and success, import time, and the machine they ran on.

Every function times the project's code and its raw-MuJoCo baseline interleaved in one run,
so the ratios it returns are robust to machine load; wall times are seconds.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import gc
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
from tqdm import tqdm

from agentic_env.agents.perception import camera_profile, filter_depth
from agentic_env.contract.spaces import PRIMITIVES
from agentic_env.envs.sim_env import SimEnv
from agentic_env.experts import expert_actions
from agentic_env.tasks.tabletop import TabletopTask

#: Height a picked cube must gain for the pick to count as a success, metres.
LIFT_THRESHOLD = 0.05
#: Modules that ``import agentic_env`` must not pull in.
HEAVY_MODULES = ("litellm", "torch", "ray")
_PICK = PRIMITIVES.index("pick")
#: Control periods each loop runs before the next takes its turn.
CHUNK_PERIODS = 50
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
    timing = _interleaved(bodies, counts.periods, chunk=CHUNK_PERIODS, repeats=counts.repeats)
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
        "chunk_periods": CHUNK_PERIODS,
        "overhead_ratio_best_chunk": timing.best_chunk["send"] / timing.best_chunk["raw"],
        "send_realtime_factor": robot.control_dt / send_s,
        "env_step_no_render_s": stub_s,
        "env_step_no_render_rate_hz": 1.0 / stub_s,
        "env_step_no_render_ratio": stub_s / raw_s,
        "env_steps_with_observation": counts.env_steps,
        "env_step_s": full_s,
        "env_step_rate_hz": 1.0 / full_s,
    }


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


def bench_world_cost(envs: dict[str, SimEnv], count: int, repeats: int,
                     moving: bool = False, seed: int = 0) -> dict[str, Any]:
    """Time ``env.observe()`` of the same workcell in each world, the worlds taking turns
    observation by observation (so that background load hits them alike).

    Args:
        envs: per world name (``ideal``, ``realistic``), an env reset to the same layout.
        count: observations per repeat of each world.
        repeats: timed repeats (the best one is kept).
        moving: before each observation (untimed), every env runs one control period
            towards the same random joint and gripper targets (uniform within the
            ``joint_position`` action space, drawn from ``seed``): the arm moves every
            step, as under a random low-level agent, so no view repeats the previous one.
            A diverged env is reset to ``seed``'s layout. Otherwise the scene is still.
        seed: seed of the random targets and of a reset after divergence.

    Returns:
        Milliseconds per observation of each world (best repeat), and the realistic world's
        cost over the ideal one's, overall and per repeat.
    """
    if moving:
        timing = _moving_observations(envs, count, repeats, seed)
    else:
        bodies: dict[str, Callable[[], object]] = {name: env.observe
                                                   for name, env in envs.items()}
        for body in bodies.values():
            body()
        timing = _interleaved(bodies, count, chunk=1, repeats=repeats)
    return {
        "observations": count,
        "repeats": repeats,
        "arm_moving": moving,
        **{f"{name}_ms": timing.best[name] * 1e3 for name in envs},
        "cost_ratio": timing.best["realistic"] / timing.best["ideal"],
        "cost_ratio_per_repeat": [t["realistic"] / t["ideal"] for t in timing.per_repeat],
    }


def bench_depth_filter(envs: dict[str, SimEnv], count: int, repeats: int) -> dict[str, Any]:
    """Time the agents' depth post-processing against an observation, interleaved.

    The filter is :func:`agentic_env.agents.perception.filter_depth` with each camera's
    :func:`~agentic_env.agents.perception.camera_profile`, on that camera's depth of one
    realistic-world observation (the device's noise and holes it is made for); its baseline
    is the ideal world's ``env.observe()`` of the same workcell (both cameras rendered).

    Args:
        envs: the envs of :func:`bench_world_cost`, ``ideal`` and ``realistic``.
        count: calls of each body per repeat.
        repeats: timed repeats (the best one is kept).

    Returns:
        Milliseconds per filtered frame of each camera (``<camera>_ms``), of both
        (``filter_ms``) and of the ideal observation (``ideal_observation_ms``), and the
        ratio of both cameras' filtering to the observation.
    """
    observation = envs["realistic"].observe()
    bodies: dict[str, Callable[[], object]] = {"ideal": envs["ideal"].observe}
    for cam in envs["realistic"].cameras:
        profile = camera_profile(cam.name, cam.intrinsics)
        depth = observation[f"{cam.name}_depth"]
        bodies[cam.name] = functools.partial(filter_depth, depth, cam.intrinsics,
                                             profile.noise, profile.smooth)
    timing = _interleaved(bodies, count, chunk=1, repeats=repeats)
    cameras = [name for name in bodies if name != "ideal"]
    both = sum(timing.best[name] for name in cameras)
    return {
        **{f"{name}_ms": timing.best[name] * 1e3 for name in cameras},
        "filter_ms": both * 1e3,
        "ideal_observation_ms": timing.best["ideal"] * 1e3,
        "filter_ratio": both / timing.best["ideal"],
    }


def _moving_observations(envs: dict[str, SimEnv], count: int, repeats: int,
                         seed: int) -> Interleaved:
    """:func:`_interleaved`'s timings of ``env.observe`` per world (chunks of one), each
    observation after one untimed control period towards random targets, the same for
    every world (:func:`bench_world_cost`)."""
    rng = np.random.default_rng(seed)
    space = next(iter(envs.values())).action_space
    low, high = np.asarray(space.low, float), np.asarray(space.high, float)

    def advance(env: SimEnv, action: np.ndarray) -> None:
        if env.robot.send(action[:-1], float(action[-1])).diverged:
            env.reset(seed=seed)

    warmup = rng.uniform(low, high)
    for env in envs.values():
        advance(env, warmup)
        env.observe()
    per_repeat: list[dict[str, float]] = []
    best_single = dict.fromkeys(envs, math.inf)
    for _ in range(repeats):
        total = dict.fromkeys(envs, 0.0)
        for _ in range(count):
            action = rng.uniform(low, high)
            for name, env in envs.items():
                advance(env, action)
                elapsed = _time_loop(env.observe, 1)
                total[name] += elapsed
                best_single[name] = min(best_single[name], elapsed)
        per_repeat.append({name: value / count for name, value in total.items()})
    best = {name: min(totals[name] for totals in per_repeat) for name in envs}
    return Interleaved(best, per_repeat, best_single)


def _first_pick(env: SimEnv, task: TabletopTask, seed: int) -> dict[str, Any]:
    """Reset with ``seed`` and return the expert's first action (a pick)."""
    env.reset(seed=seed)
    action = next(iter(expert_actions(task, env.scene_state)))
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
