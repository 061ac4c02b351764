"""How fast one sim-oracle episode runs, and where time goes (``agentic-env bench-episode``).

:func:`timed_components` wraps the functions of :data:`TIMED` (and the perception functions
the pipeline calls) with a :class:`ComponentClock`, so :func:`timed_episode` returns an
episode's result with its exclusive wall time per component (physics, control, observation,
model, perception, planning, trace, other) and its CPU time; :func:`task_row` and
:func:`video_row` make the rows of the command's two tables, :func:`format_task_rows` and
:func:`format_video_rows` print them.
"""

from __future__ import annotations

import functools
import importlib
import resource
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentic_env.harness.episode import EpisodeResult, EpisodeSpec

#: Components, in the order they are printed; ``other`` is the wall time none of them took.
COMPONENTS: tuple[str, ...] = ("physics", "control", "observation", "model", "perception",
                               "planning", "trace", "other")
#: (module, attribute path, component) of the timed functions. Time spent in a timed
#: function called from another counts for the inner one only.
TIMED: tuple[tuple[str, str, str], ...] = (
    ("mujoco", "mj_step", "physics"),
    ("agentic_env.sim.control", "SimRobot.send", "control"),
    ("agentic_env.primitives.executor", "PrimitiveExecutor.execute", "control"),
    ("agentic_env.envs.sim_env", "SimEnv.observe", "observation"),
    ("agentic_env.envs.sim_env", "SimEnv.render", "trace"),
    ("agentic_env.agents.models.context", "ask", "model"),
    ("agentic_env.agents.agenticlab.pipeline", "validate", "planning"),
    ("agentic_env.agents.agenticlab.pipeline", "solve", "planning"),
    ("agentic_env.agents.agenticlab.pipeline", "step_conditions", "planning"),
    ("agentic_env.agents.agenticlab.pipeline", "goal_literals", "planning"),
    ("agentic_env.agents.skills.scene", "without_robot", "perception"),
    ("agentic_env.agents.skills.reorient", "Reorienter.grasps", "perception"),
    ("agentic_env.agents.skills.reorient", "Reorienter.places", "perception"),
    ("agentic_env.harness.trace", "EpisodeTrace.on_call", "trace"),
    ("agentic_env.harness.trace", "EpisodeTrace.on_event", "trace"),
    ("agentic_env.harness.trace", "EpisodeTrace.on_observation", "trace"),
    ("agentic_env.harness.trace", "EpisodeTrace.record_video", "trace"),
    ("agentic_env.harness.trace", "EpisodeTrace.finish", "trace"),
    ("agentic_env.harness.trace_video", "TraceVideo.sample", "trace"),
)
#: Modules whose functions, as the pipeline calls them, count as perception.
PERCEPTION_MODULES: tuple[str, ...] = ("agentic_env.agents.perception",
                                       "agentic_env.agents.skills")
#: Seeds of part 1 (every task) and the episode of part 2 (every setting).
DEFAULT_SEEDS: tuple[int, ...] = (0, 1, 2)
VIDEO_EPISODE: tuple[str, int] = ("sorting", 0)
SETTINGS: tuple[str, ...] = ("lab", "kitchen", "outdoor")


class ComponentClock:
    """Exclusive wall time (seconds) per component of the functions it wraps."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._open: list[list[float]] = []  # [start, time in timed callees] per open call

    def wrap(self, component: str, function: Callable[..., Any]) -> Callable[..., Any]:
        """``function`` timed as ``component`` (minus the time of timed functions it calls)."""

        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            frame = [time.perf_counter(), 0.0]
            self._open.append(frame)
            try:
                return function(*args, **kwargs)
            finally:
                self._open.pop()
                elapsed = time.perf_counter() - frame[0]
                self.seconds[component] += elapsed - frame[1]
                if self._open:
                    self._open[-1][1] += elapsed

        return timed

    def take(self) -> dict[str, float]:
        """The seconds so far per component; starts counting again from zero."""
        seconds, self.seconds = dict(self.seconds), defaultdict(float)
        return seconds


def _targets() -> Iterator[tuple[Any, str, str]]:
    """(owner, attribute, component) of everything :func:`timed_components` wraps."""
    for module_name, path, component in TIMED:
        owner: Any = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        if not callable(getattr(owner, name, None)):
            raise AttributeError(f"bench-episode times {module_name}.{path}, which is gone")
        yield owner, name, component
    pipeline = importlib.import_module("agentic_env.agents.agenticlab.pipeline")
    geometry = [importlib.import_module(f"agentic_env.agents.skills.{name}")
                for name in ("holding", "spots", "clearance")]
    for owner in (pipeline, *geometry):
        for name, value in vars(owner).items():
            module = getattr(value, "__module__", "") or ""
            if (callable(value) and not isinstance(value, type)
                    and module.startswith(PERCEPTION_MODULES)):
                yield owner, name, "perception"


@contextmanager
def timed_components(clock: ComponentClock) -> Iterator[ComponentClock]:
    """Wrap the functions of :data:`TIMED` (and the perception functions the pipeline calls)
    with ``clock`` for the duration of the block."""
    saved: list[tuple[Any, str, Any]] = []
    try:
        for owner, name, component in _targets():
            original = vars(owner)[name] if name in vars(owner) else getattr(owner, name)
            saved.append((owner, name, original))
            setattr(owner, name, clock.wrap(component, getattr(owner, name)))
        yield clock
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)


def timed_episode(spec: EpisodeSpec, clock: ComponentClock, trace_root: Path,
                  video: bool) -> tuple[EpisodeResult, dict[str, float]]:
    """Run ``spec`` with its trace under ``trace_root``; the result and its times in seconds:
    each component's (``other`` included, summing to the episode's wall time) and ``cpu``,
    the CPU time of the process (all its threads) and of its finished subprocesses (Fast
    Downward, ffmpeg)."""
    from agentic_env.harness.runner import run_episode

    clock.take()
    cpu, wall = _cpu_seconds(), time.perf_counter()
    result = run_episode(spec, trace_root=trace_root, video=video)
    # the trace is finished after the result's wall time is taken: count it
    result = replace(result, wall_s=time.perf_counter() - wall)
    cpu = _cpu_seconds() - cpu
    seconds = clock.take()
    seconds["other"] = result.wall_s - sum(seconds.values())
    return result, {**{name: seconds.get(name, 0.0) for name in COMPONENTS}, "cpu": cpu}


def _cpu_seconds() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def task_row(task: str, runs: list[tuple[EpisodeResult, dict[str, float]]]) -> dict[str, Any]:
    """Part 1's row of ``task``: its :func:`timed_episode` runs summed (wall and simulated
    time, their ratios) and averaged (success, score, seconds per component)."""
    wall = sum(r.wall_s for r, _ in runs)
    sim = sum(r.sim_s for r, _ in runs)
    return {
        "task": task, "episodes": len(runs), "sim_s": sim, "wall_s": wall,
        "wall_per_sim": wall / sim,
        "cpu_per_sim": sum(t["cpu"] for _, t in runs) / sim,
        "success": sum(r.success for r, _ in runs) / len(runs),
        "score": statistics.fmean(r.score for r, _ in runs),
        "components_s": {c: sum(t[c] for _, t in runs) / len(runs) for c in COMPONENTS},
    }


def format_task_rows(rows: list[dict[str, Any]]) -> str:
    """Part 1's table: per task, seconds per episode of each component."""
    head = (f"{'task':<14}{'n':>3}{'sim s':>8}{'wall s':>8}{'wall/sim':>9}{'cpu/sim':>8}"
            f"{'score':>7}"
            + "".join(f"{c[:11]:>12}" for c in COMPONENTS))
    lines = [head]
    for row in rows:
        lines.append(
            f"{row['task']:<14}{row['episodes']:>3}{row['sim_s'] / row['episodes']:>8.1f}"
            f"{row['wall_s'] / row['episodes']:>8.2f}{row['wall_per_sim']:>9.3f}"
            f"{row['cpu_per_sim']:>8.3f}"
            f"{row['score']:>7.2f}"
            + "".join(f"{row['components_s'][c]:>12.2f}" for c in COMPONENTS))
    return "\n".join(lines)


def video_row(setting: str, off: EpisodeResult, on: EpisodeResult,
              on_seconds: dict[str, float]) -> dict[str, Any]:
    """Part 2's row of ``setting``: the wall time of its episode without (``off``) and with
    (``on``, its components ``on_seconds``) the trace video."""
    return {"setting": setting, "no_video_s": off.wall_s, "video_s": on.wall_s,
            "ratio": on.wall_s / off.wall_s, "video_trace_s": on_seconds["trace"]}


def format_video_rows(rows: list[dict[str, Any]]) -> str:
    """Part 2's table: wall time with and without the trace video per setting."""
    lines = [f"{'setting':<10}{'no video s':>11}{'video s':>9}{'ratio':>7}{'trace s':>9}"]
    for row in rows:
        lines.append(f"{row['setting']:<10}{row['no_video_s']:>11.2f}{row['video_s']:>9.2f}"
                     f"{row['ratio']:>7.2f}{row['video_trace_s']:>9.2f}")
    return "\n".join(lines)


def episode_entry(result: EpisodeResult, seconds: dict[str, float]) -> dict[str, Any]:
    """One episode of the JSON file: its spec's task, setting and seed, its figures and its
    ``seconds`` per component (from :func:`timed_episode`)."""
    return {"task": result.spec.task, "setting": result.spec.setting, "seed": result.spec.seed,
            "success": result.success, "score": result.score, "actions": result.actions,
            "wall_s": result.wall_s, "sim_s": result.sim_s, "components_s": seconds}
