"""``agentic-env modules --model M``: each AgenticLab module in isolation, on instances made
from simulator rollouts and labelled from ground truth (the paper's Table II, without human
annotators).

For every (task, seed) the scripted expert's reference plan is executed step by step in the
simulator; at each moment the module under test is asked through the pipeline's own module
functions (same prompts, images and schemas as in an episode) while the state is live, and
its answer is graded against privileged truth:

* **parser**: from the first observation; success when the model's PDDL validates, Fast
  Downward plans it and the plan, executed on the *true* problem, reaches the true goal.
* **checker**: preconditions before every step and effects after it, plus a deliberately
  failed execution per step (the step's primitive is not run, then its effects are asked);
  the label is whether every literal holds in the true facts.
* **detector**: the target of every pick (and the destination of every place) in the
  shoulder image; success when the point lies inside the target's true segmentation mask
  (or, when the target is not visible at all, when the model says so); metric: IoU of the
  box with the true mask's box.
* **grasp**: the first two grasp candidates the perception toolkit proposes for each pick
  target (its true mask stands in for the detector), plus one shifted 7 cm off the target;
  the label is whether the pick actually lifts the target when simulated on a copy of the
  scene.
* **goal**: before the first step, halfway and at the end; the label is the task's success.
"""

from __future__ import annotations

import logging
import pickle
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.agents.models.base import CallRecord, ModelError
from agentic_env.harness.db import ModuleInstance, ResultStore

if TYPE_CHECKING:
    from agentic_env.oracle.difficulty import Sighting

log = logging.getLogger(__name__)

#: Modules benchmarked, in Table II order.
MODULE_ORDER: tuple[str, ...] = ("parser", "checker", "detector", "grasp", "goal")
#: Horizontal shift (m) of the deliberately off-target grasp candidate.
OFF_TARGET_SHIFT = 0.07
#: Grasp candidates judged per pick, as the pipeline shows the VLM (see ``AgentConfig``).
CANDIDATES_JUDGED = 2


def holds(literal: str, facts: set[str]) -> bool:
    """Truth of ``(p a b)`` or ``(not (p a b))`` in facts written ``p a b`` (lower case)."""
    text = " ".join(literal.strip().lower().split())
    if text.startswith("(not ") and text.endswith(")"):
        return not holds(text[5:-1], facts)
    return text.strip("()").strip() in facts


def mask_box(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    """Pixel box ``(u0, v0, u1, v1)`` (exclusive upper bounds) of a boolean mask, or ``None``."""
    rows, cols = np.nonzero(mask)
    if rows.size == 0:
        return None
    return int(cols.min()), int(rows.min()), int(cols.max()) + 1, int(rows.max()) + 1


def box_iou(a: Sequence[float] | None, b: Sequence[float] | None) -> float:
    """Intersection over union of two ``(u0, v0, u1, v1)`` boxes (0 when either is missing)."""
    if a is None or b is None:
        return 0.0
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    inter = max(0.0, width) * max(0.0, height)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return float(inter / union) if union > 0 else 0.0


def point_in_mask(point: Sequence[int], mask: np.ndarray) -> bool:
    """Whether pixel ``(u, v)`` lies inside ``mask`` (H, W)."""
    u, v = int(point[0]), int(point[1])
    return 0 <= v < mask.shape[0] and 0 <= u < mask.shape[1] and bool(mask[v, u])


def grade_parser(true_domain: str, true_problem: str, domain: str, problem: str
                 ) -> tuple[bool, str]:
    """Does the model's PDDL yield a plan that reaches the true goal on the true problem?

    Returns:
        ``(success, detail)``; the detail names the first thing that failed.
    """
    from agentic_env.pddl.planning import PDDLError, PlanNotFoundError, simulate, solve, validate

    try:
        validate(domain, problem)
        plan = solve(domain, problem)
        result = simulate(true_domain, true_problem, plan)
    except PDDLError as exc:
        return False, f"invalid PDDL or plan: {exc}"
    except PlanNotFoundError as exc:
        return False, f"no plan: {exc}"
    if not result.goal_reached:
        return False, "the plan misses " + " ".join(result.unmet_goals)
    return True, f"a {len(plan)}-step plan reaches the true goal"


@dataclass
class _Asker:
    """Builds the module context of an env and remembers the last call's record."""

    model: str
    rollout: str
    last: CallRecord | None = None
    sink: list[tuple[str, Any]] | None = None

    def context(self, env: Any) -> tuple[Any, Callable[[], None]]:
        """(module context whose sim-oracle reads ``env``'s live state, close function).

        The sim-oracle's error stream is seeded per rollout (and by the spec's own seed), so
        injected errors fall on different instances in different rollouts.
        """
        from agentic_env.agents.agenticlab.modules import ModuleContext
        from agentic_env.agents.models.registry import build_backends
        from agentic_env.oracle import SimOracle, oracle_factories

        oracles: list[SimOracle] = []
        factories = oracle_factories(env, zlib.crc32(self.rollout.encode()), oracles)

        def remember(record: CallRecord) -> None:
            self.last = record

        def close() -> None:
            for oracle in oracles:
                oracle.close()

        router = build_backends(self.model, factories=factories)
        for oracle in oracles:  # the calibration replica records the calls' situations
            oracle.record_situations(self.sink)
        return ModuleContext(router, None, remember), close


class _Segmenter:
    """Privileged segmentation of an env's camera: geom id per pixel."""

    def __init__(self) -> None:
        self._renderer: Any = None

    def mask(self, env: Any, camera: str, target: str, shape: tuple[int, int]) -> np.ndarray:
        import mujoco

        from agentic_env.oracle.naming import thing_geoms

        height, width = shape
        if self._renderer is None or (self._renderer.height, self._renderer.width) != shape:
            self.close()
            self._renderer = mujoco.Renderer(env.model, height, width)
            self._renderer.enable_segmentation_rendering()
        self._renderer.update_scene(env.data, camera=env.camera_id(camera))
        pixels = self._renderer.render()
        geoms = thing_geoms(env, target)
        return (pixels[..., 1] == int(mujoco.mjtObj.mjOBJ_GEOM)) & np.isin(pixels[..., 0], geoms)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


class _Rollout:
    """One (task, setting, seed) rollout producing graded instances."""

    def __init__(self, model: str, task: str, setting: str, seed: int,
                 modules: Sequence[str], sink: list[tuple[str, Any]] | None = None) -> None:
        self.model, self.task, self.setting, self.seed = model, task, setting, seed
        self.modules = set(modules)
        self.asker = _Asker(model, f"{task}/{setting}/{seed}", sink=sink)
        self.segmenter = _Segmenter()
        self.count: dict[str, int] = {}

    def _instance(self, module: str, success: bool, metric: float | None, label: Any,
                  answer: Any, error: str | None = None) -> ModuleInstance:
        index = self.count.get(module, 0)
        self.count[module] = index + 1
        record = self.asker.last
        usage = record.usage if record is not None else None
        return ModuleInstance(
            model=self.model, module=module,
            instance=f"{self.task}/{self.setting}/{self.seed}/{module}/{index}",
            task=self.task, setting=self.setting, seed=self.seed, success=success,
            metric=metric, latency_s=usage.latency_s if usage else 0.0,
            input_tokens=usage.input_tokens if usage else 0,
            output_tokens=usage.output_tokens if usage else 0, label=label, answer=answer,
            error=error)

    def run(self) -> Iterator[ModuleInstance]:
        from agentic_env.agents.agenticlab.pipeline import PARSER_EXAMPLE
        from agentic_env.envs.sim_env import SimEnv
        from agentic_env.experts import primitive_for
        from agentic_env.pddl.planning import goal_literals, load_domain, step_conditions
        from agentic_env.tasks.symbolic import infer_step, reference_plan, true_problem

        env = SimEnv(task=self.task, setting=self.setting)
        ctx, close = self.asker.context(env)
        try:
            obs, info = env.reset(seed=self.seed)
            task, scene = env.task, env.scene_state
            instruction = info["instruction"]
            true_domain, problem = true_problem(task, scene)
            objects = {name: _describe(name) for name in task.pddl_objects()}
            goal = goal_literals(true_domain, problem)
            if "parser" in self.modules:
                yield self._parser(ctx, obs, instruction, load_domain(task.domain),
                                   PARSER_EXAMPLE, true_domain, problem, env)
            if not set(self.modules) - {"parser"}:
                return  # nothing else to ask: no need to roll the plan out
            plan = reference_plan(task, scene)
            goal_points = {0, len(plan) // 2}
            for index, step in enumerate(plan):
                if index in goal_points and "goal" in self.modules:
                    yield self._goal(ctx, obs, instruction, goal, objects, env)
                pre, effects = step_conditions(true_domain, problem, step)
                if "checker" in self.modules:
                    yield self._checker(ctx, obs, step, pre, "preconditions", objects, env)
                    # a deliberately failed execution: the step's primitive is not run
                    yield self._checker(ctx, obs, step, effects, "effects", objects, env)
                picking = step.name.startswith("pick")
                if "detector" in self.modules:
                    for target in step.args[:1] if picking else step.args[1:2]:
                        item = self._detector(ctx, obs, target, env)
                        if item is not None:
                            yield item
                if picking and "grasp" in self.modules:
                    yield from self._grasps(ctx, obs, step, env)
                before = task.facts(scene)
                obs, *_ = env.step(primitive_for(task, step, scene))
                if "checker" in self.modules:
                    yield self._checker(ctx, obs, step, effects, "effects", objects, env)
                if infer_step(before, task.facts(scene)) != step:
                    log.info("%s seed %d: step %s did not go as planned; rollout ends",
                             self.task, self.seed, step)
                    break
            if "goal" in self.modules:
                yield self._goal(ctx, obs, instruction, goal, objects, env)
        finally:
            close()
            self.segmenter.close()
            env.close()

    # -- the five modules --------------------------------------------------------------------

    def _ask(self, call: Callable[[], Any]) -> tuple[Any, str | None]:
        self.asker.last = None
        try:
            return call(), None
        except ModelError as exc:
            return None, f"{type(exc).__name__}: {exc}"

    def _parser(self, ctx: Any, obs: Any, instruction: str, domain: str, example: str,
                true_domain: str, problem: str, env: Any) -> ModuleInstance:
        """Graded on the simulator's ids: the model's own object names are bound to scene
        objects first (:class:`~agentic_env.oracle.name_book.NameBook`), so the grade does not
        depend on how it spelt them."""
        from agentic_env.agents.agenticlab.modules import parse_task
        from agentic_env.oracle.name_book import NameBook

        parsed, error = self._ask(lambda: parse_task(ctx, obs, instruction, domain, example))
        if parsed is None:
            return self._instance("parser", False, None, {"goal_reached": True}, None, error)
        book = NameBook(env)
        if self.asker.last is not None:
            book.observe(self.asker.last)
        success, detail = grade_parser(true_domain, problem, parsed.domain,
                                       book.pddl_in_ids(parsed.problem))
        return self._instance("parser", success, None, {"goal_reached": True},
                              {"problem_pddl": parsed.problem, "graded": detail})

    def _checker(self, ctx: Any, obs: Any, step: Any, conditions: list[str], kind: str,
                 objects: dict[str, str], env: Any) -> ModuleInstance:
        from agentic_env.agents.agenticlab.modules import check_conditions

        facts = {f.lower() for f in env.task.facts(env.scene_state)}
        label = all(holds(c, facts) for c in conditions)
        verdict, error = self._ask(lambda: check_conditions(ctx, obs, step, conditions, kind,
                                                            objects))
        answer = None if verdict is None else {"success": verdict.success,
                                               "failed": list(verdict.failed)}
        return self._instance("checker", verdict is not None and verdict.success == label,
                              None, {"step": str(step), "kind": kind, "holds": label},
                              answer, error)

    def _detector(self, ctx: Any, obs: Any, target: str, env: Any) -> ModuleInstance | None:
        from agentic_env.agents.runtime.detector import detect

        try:
            env.model.body(target)
        except KeyError:
            return None  # a fixture without a body of its own (a drawer, a slot)
        shape = obs["shoulder_rgb"].shape[:2]
        mask = self.segmenter.mask(env, "shoulder", target, shape)
        true_box = mask_box(mask)
        detection, error = self._ask(lambda: detect(ctx, obs, "shoulder", target,
                                                    _describe(target)))
        label = {"target": target, "visible": true_box is not None, "box": true_box,
                 "visible_px": int(mask.sum()),
                 "lookalikes_px": _lookalike_pixels(env, target, shape)}
        if error is not None:
            return self._instance("detector", False, 0.0, label, None, error)
        if detection is None:
            return self._instance("detector", true_box is None, 0.0 if true_box else None,
                                  label, {"found": False})
        iou = box_iou(detection.box, true_box) if true_box else None
        success = true_box is not None and point_in_mask(detection.point, mask)
        return self._instance("detector", success, iou, label,
                              {"point": list(detection.point),
                               "box": detection.box and list(detection.box)})

    def _grasps(self, ctx: Any, obs: Any, step: Any, env: Any) -> Iterator[ModuleInstance]:
        from agentic_env.agents.perception import (
            camera_cloud,
            grasp_candidates,
            render_grasp,
            target_cloud,
        )
        from agentic_env.agents.runtime.grasp_judge import evaluate_grasp
        from agentic_env.agents.skills import holding

        target = step.args[0]
        mask = self.segmenter.mask(env, "shoulder", target, obs["shoulder_rgb"].shape[:2])
        box = mask_box(mask)
        if box is None:
            return
        rows, cols = np.nonzero(mask)
        centre = (int(np.median(cols)), int(np.median(rows)))
        cloud = holding.top_slab(target_cloud(obs, "shoulder", centre, box))
        if len(cloud) < 10:
            return
        scene = camera_cloud(obs, "shoulder", stride=2)
        rng = np.random.default_rng(self.seed)
        yaw = holding.tcp_yaw(obs["tcp_pose"])
        candidates = [holding.fold_grasp(c, yaw)
                      for c in grasp_candidates(cloud, scene, rng=rng)][:CANDIDATES_JUDGED]
        if candidates:
            off = candidates[0].pose.copy()
            off[:2, 3] += OFF_TARGET_SHIFT * _away(off[:2, 3], cloud.points[:, :2].mean(axis=0))
            candidates.append(_with_pose(candidates[0], off))
        for candidate in candidates:
            label = simulated_pick_lifts(env, target, candidate.pose, candidate.width)
            image = render_grasp(cloud, scene, candidate)
            verdict, error = self._ask(lambda c=candidate, i=image: evaluate_grasp(
                ctx, i, str(step), target, _describe(target), c.pose, c.width))
            answer = None if verdict is None else {"execute": verdict.execute,
                                                   "reason": verdict.reason}
            yield self._instance(
                "grasp", verdict is not None and verdict.execute == label, None,
                {"target": target, "lifts": label,
                 "position": np.round(candidate.pose[:3, 3], 3).tolist()}, answer, error)

    def _goal(self, ctx: Any, obs: Any, instruction: str, goal: list[str],
              objects: dict[str, str], env: Any) -> ModuleInstance:
        from agentic_env.agents.agenticlab.modules import check_goal

        label = bool(env.task.evaluate(env.scene_state).success)
        verdict, error = self._ask(lambda: check_goal(ctx, obs, instruction, goal, objects))
        answer = None if verdict is None else {"success": verdict.success}
        return self._instance("goal", verdict is not None and verdict.success == label, None,
                              {"success": label}, answer, error)


def simulated_pick_lifts(env: Any, target: str, pose: np.ndarray, width: float) -> bool:
    """Whether ``pick(pose, width)`` ends holding ``target``, simulated on a copy of ``env``
    (the env itself is not touched).

    Args:
        env: a :class:`~agentic_env.envs.sim_env.SimEnv` after reset.
        target: PDDL name (= body name) of the object to pick.
        pose: TCP grasp pose in the robot base frame, (4, 4) or (7,) xyz + quaternion wxyz.
        width: jaw opening before the grasp, metres.
    """
    from agentic_env.contract.actions import pick

    clone = pickle.loads(pickle.dumps(env))
    try:
        _, _, _, _, info = clone.step(pick(pose, width))
        facts = {f.lower() for f in clone.task.facts(clone.scene_state)}
        return bool(info["primitive"]["ok"]) and f"holding {target}" in facts
    finally:
        clone.close()


def _lookalike_pixels(env: Any, target: str, shape: tuple[int, int]) -> list[int]:
    """Visible pixels of each other object of ``target``'s category in the shoulder image at
    ``shape`` (height, width), sorted."""
    from agentic_env.oracle.difficulty import lookalike_pixels
    from agentic_env.visualize import resize_nearest

    ids = env.segmentation("shoulder")
    if ids.shape != shape:
        ids = resize_nearest(ids, shape[1], shape[0])
    return lookalike_pixels(env, ids, target)


def benchmark_sightings(tasks: Sequence[str] = ("sorting", "stacking"), setting: str = "lab",
                        seeds: Sequence[int] | None = None, min_visible_px: int = 40
                        ) -> list[Sighting]:
    """The detector situations of the module benchmark's rollouts on calibration seeds
    (default: the first 20 of :data:`~agentic_env.contract.seeds.CALIBRATION_SEEDS`; the
    perfect sim-oracle answers; only the situations are read, never an outcome), as
    :class:`~agentic_env.oracle.difficulty.Sighting` at the visibility threshold
    ``min_visible_px`` (the profiles' default). The packaged
    :data:`~agentic_env.oracle.difficulty.BENCHMARK_SIGHTINGS` is written from it with::

        python -c "from agentic_env.bench.modules import write_benchmark_sightings as w; w()"
    """
    from agentic_env.contract.seeds import CALIBRATION_SEEDS, check_calibration_seeds
    from agentic_env.oracle.difficulty import Sighting

    seeds = CALIBRATION_SEEDS[:20] if seeds is None else seeds
    check_calibration_seeds(seeds)
    found = []
    for task in tasks:
        for seed in seeds:
            for item in _Rollout("sim-oracle", task, setting, seed, ("detector",)).run():
                px = int(item.label["visible_px"])
                found.append(Sighting(px if px >= min_visible_px else 0,
                                      sum(n >= min_visible_px
                                          for n in item.label["lookalikes_px"])))
    return found


def write_benchmark_sightings() -> Path:
    """Write the packaged :data:`~agentic_env.oracle.difficulty.BENCHMARK_SIGHTINGS` from
    :func:`benchmark_sightings` with its defaults; returns the file's path."""
    from agentic_env.oracle import difficulty

    path = Path(difficulty.__file__).parent / "profiles" / difficulty.BENCHMARK_SIGHTINGS
    header = ("The module benchmark's detector situations (agentic-env modules: sorting and "
              "stacking,\nlab, realistic world, calibration seeds 2000000-2000019; the shoulder "
              "image; "
              "threshold 40 px): [visible\npx, same-category look-alikes in view]. "
              "Features only, no outcome; the emulated detectors'\nmean error rate is kept "
              "over them "
              "(agentic_env.oracle.difficulty). Written by\n"
              "agentic_env.bench.modules.write_benchmark_sightings.")
    path.write_text(difficulty.situations_toml(benchmark_sightings(), header),
                    encoding="utf-8")
    return path


def calibration_replica(seeds: int = 2, parser_seeds: int = 13, setting: str = "lab"
                        ) -> dict[str, list[Any]]:
    """The calibration replica of the module benchmark
    (:mod:`agentic_env.oracle.replica`): the situations the perfect sim-oracle's answers
    state (never an outcome) in the rollouts of every replica task on the first ``seeds``
    calibration seeds (checker, goal, grasp) and of every parser task on the first
    ``parser_seeds`` (parser), in ``setting``; module -> plain records."""
    from agentic_env.contract.seeds import CALIBRATION_SEEDS, check_calibration_seeds
    from agentic_env.oracle.replica import PARSER_TASKS, REPLICA_TASKS, situation_record

    sink: list[tuple[str, Any]] = []
    runs = [(task, CALIBRATION_SEEDS[i], ("checker", "goal", "grasp"))
            for task in REPLICA_TASKS for i in range(seeds)]
    runs += [(task, CALIBRATION_SEEDS[i], ("parser",))
             for task in PARSER_TASKS for i in range(parser_seeds)]
    check_calibration_seeds(seed for _, seed, _ in runs)
    for task, seed, modules in runs:
        for _ in _Rollout("sim-oracle", task, setting, seed, modules, sink).run():
            pass
    records: dict[str, list[Any]] = {}
    for module, situation in sink:
        if module in ("checker", "goal", "grasp", "parser"):
            records.setdefault(module, []).append(situation_record(module, situation))
    return records


def write_calibration_replica() -> Path:
    """Write the packaged :data:`~agentic_env.oracle.replica.REPLICA_FILE` from
    :func:`calibration_replica` with its defaults; returns the file's path::

        python -c "from agentic_env.bench.modules import write_calibration_replica as w; w()"
    """
    from agentic_env.oracle import replica

    records = calibration_replica()
    path = Path(replica.__file__).parent / "profiles" / replica.REPLICA_FILE
    counts = ", ".join(f"{m} {len(r)}" for m, r in records.items())
    header = ("The calibration replica of AgenticLab's module benchmark (agentic_env.oracle."
              "replica): the\nsituations the perfect sim-oracle's answers state in the "
              "module benchmark's rollouts,\nlab, realistic world, calibration seeds "
              "2000000-2000001 "
              "(checker, goal, grasp: sorting, stacking, crossword,\nkitchen, "
              "reorientation) and 2000000-2000012 (parser: sorting, stacking, crossword,\n"
              f"kitchen). Situations only, no outcome. {counts}. Written by\n"
              "agentic_env.bench.modules.write_calibration_replica.")
    path.write_text(replica.replica_toml(records, header), encoding="utf-8")
    return path


def _away(xy: np.ndarray, centre: np.ndarray) -> np.ndarray:
    direction = xy - centre
    norm = float(np.linalg.norm(direction))
    return direction / norm if norm > 1e-3 else np.array([1.0, 0.0])


def _with_pose(candidate: Any, pose: np.ndarray) -> Any:
    from dataclasses import replace

    return replace(candidate, pose=pose)


def _describe(name: str) -> str:
    from agentic_env.oracle.agenticlab import describe

    return describe(name)


def run_module_bench(model: str, tasks: Sequence[str], setting: str, seeds: Sequence[int],
                     store: ResultStore, modules: Sequence[str] = MODULE_ORDER) -> int:
    """Generate, ask and grade the instances of every (task, seed); store them.

    Returns:
        The number of graded instances.
    """
    from tqdm import tqdm

    count = 0
    with tqdm(total=len(tasks) * len(seeds), unit="rollout", desc=f"modules {model}") as bar:
        for task in tasks:
            for seed in seeds:
                for item in _Rollout(model, task, setting, seed, modules).run():
                    store.record_module_instance(item)
                    count += 1
                bar.update(1)
    return count
