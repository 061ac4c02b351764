"""``agentic-env bench-episode``: how fast one sim-oracle episode runs, and where time goes.

Part 1 runs the AgenticLab agent with the perfect sim-oracle on a fixed seed list of every task
in the lab setting, without video (the trace's calls and page are written, as by
``agentic-env run --no-video``), and prints wall time over simulated time per task with the
time of each component: physics (``mj_step``), control (primitive motion planning, IK and the
control loop around the physics), observation renders, model calls (the sim-oracle's answers,
its segmentation renders included), perception and grounding (point clouds, segmentation,
grasps, placement), planning (PDDL parsing, Fast Downward, plan checks), the trace (call
images, the page, taking video frames and waiting for the video at the end; the frames are
rendered and encoded in a worker thread) and the rest (env construction and reset, scoring).
``cpu/sim`` is the CPU time of the process and its subprocesses over simulated time: on a
loaded machine wall time grows with the load, CPU time hardly. Part 2 runs one episode per
setting with the trace video on and off and prints the ratio of their wall times.

Episodes run one after another in this process, after one warm-up episode that pays the
imports and first-use costs (printed, not counted). Timings depend on the machine's load:
compare ratios measured in the same run.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import resource
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentic_env.cli.realism import add_realism_argument
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.tasks import BENCHMARK_TASKS

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
                                       "agentic_env.agents.skills.grounding",
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
    grounding = importlib.import_module("agentic_env.agents.skills.grounding")
    for owner in (pipeline, grounding):
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


def _task_row(task: str, runs: list[tuple[EpisodeResult, dict[str, float]]]) -> dict[str, Any]:
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


def format_video_rows(rows: list[dict[str, Any]]) -> str:
    """Part 2's table: wall time with and without the trace video per setting."""
    lines = [f"{'setting':<10}{'no video s':>11}{'video s':>9}{'ratio':>7}{'trace s':>9}"]
    for row in rows:
        lines.append(f"{row['setting']:<10}{row['no_video_s']:>11.2f}{row['video_s']:>9.2f}"
                     f"{row['ratio']:>7.2f}{row['video_trace_s']:>9.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print its tables and write them as JSON."""
    parser = argparse.ArgumentParser(prog="agentic-env bench-episode", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=list(BENCHMARK_TASKS),
                        choices=BENCHMARK_TASKS)
    parser.add_argument("--seeds", nargs="+", type=int, default=list(DEFAULT_SEEDS))
    parser.add_argument("--settings", nargs="*", default=list(SETTINGS), choices=SETTINGS,
                        help="settings of part 2 (video on vs off); none skips part 2")
    parser.add_argument("--video-task", default=VIDEO_EPISODE[0], choices=BENCHMARK_TASKS)
    parser.add_argument("--video-seed", type=int, default=VIDEO_EPISODE[1])
    add_realism_argument(parser)
    parser.add_argument("--out", type=Path, default=Path("bench_episode.json"))
    args = parser.parse_args(argv)
    clock = ComponentClock()
    episodes: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-episode-") as folder, \
            timed_components(clock):
        root = Path(folder)
        warm_up, _ = timed_episode(EpisodeSpec("reorientation"), clock, root, video=True)
        print(f"warm-up episode (imports, first renders; not counted): {warm_up.wall_s:.1f} s",
              flush=True)
        task_rows = []
        for task in args.tasks:
            runs = []
            for seed in args.seeds:
                spec = EpisodeSpec(task, seed=seed, realism=args.realism)
                result, seconds = timed_episode(spec, clock, root, video=False)
                runs.append((result, seconds))
                episodes.append({"part": "no video", **_episode_entry(result, seconds)})
                print(f"  {task:<14} seed {seed:<3} {result.wall_s:6.2f} s wall "
                      f"{result.sim_s:6.1f} s sim  score {result.score:.2f}  "
                      f"actions {result.actions}", flush=True)
            task_rows.append(_task_row(task, runs))
        video_rows = []
        for setting in args.settings:
            spec = EpisodeSpec(args.video_task, setting, args.video_seed,
                               realism=args.realism)
            off, _ = timed_episode(spec, clock, root, video=False)
            on, on_seconds = timed_episode(spec, clock, root, video=True)
            episodes.append({"part": "video", **_episode_entry(on, on_seconds)})
            video_rows.append({"setting": setting, "no_video_s": off.wall_s,
                               "video_s": on.wall_s, "ratio": on.wall_s / off.wall_s,
                               "video_trace_s": on_seconds["trace"]})
            print(f"  {setting:<14} video off {off.wall_s:6.2f} s, on {on.wall_s:6.2f} s",
                  flush=True)
    seeds = " ".join(map(str, args.seeds))
    print(f"\nSim-oracle episodes, lab, trace without video, seeds {seeds}: seconds per "
          "episode\n" + format_task_rows(task_rows))
    worst = max(row["wall_per_sim"] for row in task_rows)
    print(f"worst wall/sim {worst:.3f} ({1 / worst:.1f}x real time)")
    if video_rows:
        print(f"\nTrace video on vs off, {args.video_task} seed {args.video_seed}:\n"
              + format_video_rows(video_rows))
    args.out.write_text(json.dumps({"tasks": task_rows, "video": video_rows,
                                    "episodes": episodes}, indent=1, default=str))
    print(f"\nwrote {args.out}")
    return 0


def _episode_entry(result: EpisodeResult, seconds: dict[str, float]) -> dict[str, Any]:
    return {"task": result.spec.task, "setting": result.spec.setting, "seed": result.spec.seed,
            "success": result.success, "score": result.score, "actions": result.actions,
            "wall_s": result.wall_s, "sim_s": result.sim_s, "components_s": seconds}
