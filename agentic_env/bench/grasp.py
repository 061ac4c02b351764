"""Pick-success benchmark of the grasp candidates on random task layouts.

For each layout (a reset of the task, ``sorting`` by default, with seed ``seed + i``) and each
free object on the table, the env is reset, the object is "detected" from privileged ground
truth (its bounding box and the top of it projected into the camera: what a perfect VLM
detector returns), the target cloud is segmented, the best grasp candidate is executed with
the ``pick`` primitive, and the pick counts as a success when the primitive reports success
and the object rose by at least 5 cm. Objects under another (a stack's lower blocks) are
skipped. With ``--camera wrist`` the arm first moves 22 cm above
the object and plans from the wrist camera. Prints the success rate per object kind and
overall, and the time per candidate set::

    agentic-env bench-grasp --layouts 20
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env.agents.perception.grasping import grasp_candidates
from agentic_env.agents.perception.pointcloud import camera_cloud, project_to_image
from agentic_env.agents.perception.segmentation import target_cloud
from agentic_env.contract.actions import move_to, pick, top_down_pose
from agentic_env.sim.state import body_box
from agentic_env.tasks.predicates import lowest_point

logger = logging.getLogger(__name__)
#: Height of the TCP above the object's top for a wrist-camera view, m.
WRIST_VIEW = 0.22
#: Rise of the object's lowest point that counts as lifted, m.
LIFTED = 0.05
#: Failure reasons of a pick that never reached the arm.
NO_DETECTION, NO_CANDIDATE = "no detection", "no candidate"


@dataclass(frozen=True)
class PickResult:
    """One benchmark pick: the layout seed, the object, whether it was lifted, why not,
    and the wall and CPU time to compute the candidate set (segmentation excluded), s."""

    seed: int
    name: str
    lifted: bool
    reason: str
    grasp_seconds: float
    grasp_cpu_seconds: float


def oracle_detection(env: object, name: str, camera: str) -> tuple[np.ndarray, np.ndarray]:
    """Privileged stand-in for a VLM detector: the pixel of the top centre of ``name``'s
    bounding box and the box's projection ``(u0, v0, u1, v1)``, clipped to the image. It
    projects with the camera's true pose, as a detector finds the object where the image
    shows it, whatever the calibration believes."""
    box = body_box(env.scene_state, name)  # type: ignore[attr-defined]
    obs = env.observe()  # type: ignore[attr-defined]
    corners = np.array([[x, y, z] for x in (box.low[0], box.high[0])
                        for y in (box.low[1], box.high[1]) for z in (box.low[2], box.high[2])])
    k, e = obs[f"{camera}_intrinsics"], env.true_extrinsics(camera)  # type: ignore[attr-defined]
    uv = project_to_image(corners, k, e)
    top = np.array([(box.low[0] + box.high[0]) / 2, (box.low[1] + box.high[1]) / 2, box.high[2]])
    point = project_to_image(top[None], k, e)[0]
    height, width = obs[f"{camera}_depth"].shape
    low = np.clip(uv.min(axis=0), 0, [width - 1, height - 1])
    high = np.clip(uv.max(axis=0), 0, [width - 1, height - 1])
    return point, np.concatenate([low, high])


def pick_once(env: object, seed: int, name: str, camera: str, rng: np.random.Generator,
              others: tuple[str, ...] = ()) -> PickResult:
    """Reset to layout ``seed``, plan a grasp of ``name`` from ``camera`` and execute it; the
    pick fails if one of ``others`` rose too (two blocks of a stack taken at once)."""
    obs, _ = env.reset(seed=seed)  # type: ignore[attr-defined]
    if camera == "wrist":  # look from above the object, as the pipeline's wrist view does
        truth = body_box(env.scene_state, name)  # type: ignore[attr-defined]
        above = np.array([*(truth.low[:2] + truth.high[:2]) / 2, truth.high[2] + WRIST_VIEW])
        obs, _, _, _, info = env.step(move_to(top_down_pose(above)))  # type: ignore[attr-defined]
        if not info["primitive"]["ok"]:
            return PickResult(seed, name, False, "wrist view unreachable", 0.0, 0.0)
    point, box = oracle_detection(env, name, camera)
    height, width = obs[f"{camera}_depth"].shape
    if not (0 <= point[0] < width and 0 <= point[1] < height):
        return PickResult(seed, name, False, NO_DETECTION, 0.0, 0.0)
    target = target_cloud(obs, camera, point_uv=point, box_xyxy=box)
    scene = camera_cloud(obs, camera, stride=2)
    start, cpu_start = time.perf_counter(), time.process_time()
    candidates = grasp_candidates(target, scene, rng=rng)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    if not candidates:
        return PickResult(seed, name, False, NO_CANDIDATE, seconds, cpu)
    state = env.scene_state  # type: ignore[attr-defined]
    before = {n: lowest_point(state, n) for n in (name, *others)}
    best = candidates[0]
    _, _, _, _, info = env.step(pick(best.pose, best.width))  # type: ignore[attr-defined]
    rise = {n: lowest_point(state, n) - z for n, z in before.items()}
    carried = [n for n in others if rise[n] > LIFTED]
    status = info["primitive"]
    lifted = bool(status["ok"]) and rise[name] > LIFTED and not carried
    reason = "" if lifted else (status["reason"] or (f"also lifted {', '.join(carried)}"
                                                     if carried else
                                                     f"rose {rise[name] * 1000:.0f} mm"))
    return PickResult(seed, name, lifted, reason, seconds, cpu)


def covered(env: object, name: str, names: list[str]) -> bool:
    """Whether another of ``names`` rests on ``name`` (their footprints overlap and it lies
    higher): a stack's lower blocks cannot be picked from above."""
    box = body_box(env.scene_state, name)  # type: ignore[attr-defined]
    for other in names:
        if other == name:
            continue
        above = body_box(env.scene_state, other)  # type: ignore[attr-defined]
        overlap = np.all(np.minimum(box.high[:2], above.high[:2])
                         > np.maximum(box.low[:2], above.low[:2]) + 0.005)
        if overlap and above.low[2] > box.high[2] - 0.01:
            return True
    return False


def run(layouts: int, seed: int, camera: str, task: str = "sorting",
        realism: str = "ideal", world_effects: tuple[str, ...] | None = None
        ) -> list[PickResult]:
    """Pick every free object on the table of ``layouts`` layouts of ``task`` once, in the
    world ``realism`` (with only ``world_effects`` of the realistic world, if given); see the
    module docstring. Each pick plans with a generator of its own (``[layout, index]``), so
    the same pick in two worlds differs only by the world."""
    from agentic_env.envs.sim_env import SimEnv

    results: list[PickResult] = []
    env = SimEnv(task, realism=realism, world_effects=world_effects)
    try:
        for layout in range(seed, seed + layouts):
            _, info = env.reset(seed=layout)
            names = [o["name"] for o in info["trial"]["objects"] if o["position"][2] > -0.01]
            free = [name for name in names if not covered(env, name, names)]
            for index, name in enumerate(free):
                others = tuple(n for n in names if n != name)
                rng = np.random.default_rng([layout, index])
                result = pick_once(env, layout, name, camera, rng, others)
                logger.info("seed %d %s: %s", layout, name, "lifted" if result.lifted
                            else f"failed ({result.reason})")
                results.append(result)
    finally:
        env.close()
    return results


def attribute_failures(failed: list[PickResult], camera: str, task: str) -> dict[str, str]:
    """Where each failed pick of the whole realistic world came from, by experiment: the same
    pick (layout, object, planner generator) is repeated with one effect of the realistic
    world at a time (:data:`agentic_env.sim.realism.world.WORLD_EFFECTS`).

    Returns, per ``"<seed> <name>"``: ``no detection`` when the object is out of view, else
    the effects whose world alone fails the pick too (``sensors`` = depth noise, holes and
    flying pixels, ``calibration`` = the extrinsic offset, ``contact`` = slip, mass,
    friction, servo error), joined by ``+``, or ``combined`` when none fails alone (the
    effects together: e.g. a drawn mass settles an object a little differently, and the
    depth holes fall elsewhere).
    """
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.sim.realism.world import WORLD_EFFECTS

    sources: dict[str, list[str]] = {f"{r.seed} {r.name}": [] for r in failed}
    direct = {f"{r.seed} {r.name}": r.reason for r in failed if r.reason == NO_DETECTION}
    todo = [r for r in failed if f"{r.seed} {r.name}" not in direct]
    for effect in WORLD_EFFECTS:
        env = SimEnv(task, realism="realistic", world_effects=(effect,))
        try:
            for result in todo:
                if not _repeat(env, result, camera).lifted:
                    sources[f"{result.seed} {result.name}"].append(effect)
        finally:
            env.close()
    return {key: direct.get(key) or "+".join(found) or "combined"
            for key, found in sources.items()}


def _repeat(env: object, result: PickResult, camera: str) -> PickResult:
    """``result``'s pick again in ``env`` (a world with one effect)."""
    _, info = env.reset(seed=result.seed)  # type: ignore[attr-defined]
    names = [o["name"] for o in info["trial"]["objects"] if o["position"][2] > -0.01]
    free = [name for name in names if not covered(env, name, names)]
    others = tuple(n for n in names if n != result.name)
    rng = np.random.default_rng([result.seed, free.index(result.name)])
    return pick_once(env, result.seed, result.name, camera, rng, others)


def kind_of(name: str) -> str:
    """Object kind of a body name (``rubber-duck-1`` -> ``rubber-duck``)."""
    return name.rsplit("-", 1)[0]


def report(results: list[PickResult]) -> str:
    """A table of success per object kind, the overall rate and the grasp-planning time."""
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        by_kind[kind_of(r.name)].append(r.lifted)
    lines = [f"{'object':<16} picks  lifted"]
    for kind in sorted(by_kind):
        outcomes = by_kind[kind]
        lines.append(f"{kind:<16} {len(outcomes):5d}  {sum(outcomes):6d}")
    total = len(results)
    lifted = sum(r.lifted for r in results)
    times = np.array([r.grasp_seconds for r in results]) * 1000.0
    cpu = np.array([r.grasp_cpu_seconds for r in results]) * 1000.0
    lines.append(f"overall: {lifted}/{total} lifted ({100.0 * lifted / max(total, 1):.1f}%)")
    if total:
        lines.append(f"grasp_candidates per candidate set: wall {times.mean():.0f} ms mean, "
                     f"{np.median(times):.0f} ms median, {times.max():.0f} ms max; CPU "
                     f"{cpu.mean():.0f} ms mean, {cpu.max():.0f} ms max")
    failures = [f"  seed {r.seed} {r.name}: {r.reason}" for r in results if not r.lifted]
    return "\n".join(lines + (["failures:"] + failures if failures else []))


def compare_report(task: str, worlds: dict[str, list[PickResult]],
                   sources: dict[str, str] | None = None) -> str:
    """Pick outcomes of the same picks in several worlds, per object kind, then the realistic
    world's failures by source (:func:`attribute_failures`)."""
    names = list(worlds)
    kinds = sorted({kind_of(r.name) for results in worlds.values() for r in results})
    lines = [f"{task}: picks lifted per object kind",
             f"  {'object':<16} {'picks':>5}  " + "  ".join(f"{w:>10}" for w in names)]
    for kind in [*kinds, "all"]:
        cells, picks = [], 0
        for world in names:
            outcomes = [r.lifted for r in worlds[world] if kind in ("all", kind_of(r.name))]
            picks = len(outcomes)
            cells.append(f"{sum(outcomes):>4} ({100.0 * sum(outcomes) / max(picks, 1):3.0f}%)")
        lines.append(f"  {kind:<16} {picks:>5}  " + "  ".join(f"{c:>10}" for c in cells))
    for world, results in worlds.items():
        failed = [r for r in results if not r.lifted]
        if not failed:
            continue
        lines.append(f"  {world} failures ({len(failed)}):")
        counts: dict[str, int] = defaultdict(int)
        for r in failed:
            source = (sources or {}).get(f"{r.seed} {r.name}") if world == "realistic" else None
            counts[source or r.reason] += 1
            lines.append(f"    seed {r.seed} {r.name}: {r.reason}"
                         + (f"  <- {source}" if source else ""))
        lines.append("    by " + ("source" if world == "realistic" and sources else "reason")
                     + ": " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return "\n".join(lines)


def figures(results: list[PickResult], sources: dict[str, str] | None = None
            ) -> dict[str, Any]:
    """One world's picks as the results database stores them: ``picks`` and ``lifted``
    (counts) and ``success_rate`` (0..1), overall and ``per_kind`` (kind -> ``{"picks",
    "lifted"}``); the grasp-planning time per candidate set (``grasp_ms_mean``,
    ``grasp_ms_median``, ``grasp_ms_max``, ``grasp_cpu_ms_mean``, ms; ``None`` without
    picks); every failure (``seed``, ``name``, ``reason`` and, with ``sources``
    (:func:`attribute_failures`), its ``source``) and the failures counted ``by_cause``
    (the source where known, else the reason)."""
    per_kind: dict[str, dict[str, int]] = {}
    for r in results:
        cell = per_kind.setdefault(kind_of(r.name), {"picks": 0, "lifted": 0})
        cell["picks"] += 1
        cell["lifted"] += int(r.lifted)
    times = np.array([r.grasp_seconds for r in results]) * 1000.0
    cpu = np.array([r.grasp_cpu_seconds for r in results]) * 1000.0
    failures = [{"seed": r.seed, "name": r.name, "reason": r.reason,
                 "source": (sources or {}).get(f"{r.seed} {r.name}")}
                for r in results if not r.lifted]
    by_cause: dict[str, int] = defaultdict(int)
    for failure in failures:
        by_cause[failure["source"] or failure["reason"]] += 1
    lifted = sum(r.lifted for r in results)

    def ms(values: np.ndarray, how: Any) -> float | None:
        return round(float(how(values)), 3) if values.size else None

    return {"picks": len(results), "lifted": lifted,
            "success_rate": lifted / len(results) if results else 0.0,
            "per_kind": dict(sorted(per_kind.items())),
            "grasp_ms_mean": ms(times, np.mean), "grasp_ms_median": ms(times, np.median),
            "grasp_ms_max": ms(times, np.max), "grasp_cpu_ms_mean": ms(cpu, np.mean),
            "failures": failures, "by_cause": dict(sorted(by_cause.items()))}
