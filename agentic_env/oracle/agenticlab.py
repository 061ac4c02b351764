"""The sim-oracle's answers for AgenticLab's pipeline, from simulator ground truth.

Privileged (it reads true facts, the task's goal and segmentation masks); the sim-oracle
backend (:mod:`agentic_env.oracle.backend`) calls :func:`answer` for AgenticLab's modules
(:data:`agentic_env.oracle.agents.AGENTICLAB`). Errors are injected per module at the
oracle's seeded rates:

* ``parser``: the goal of the problem it writes loses one fact (``missing_goal``) or names
  a wrong object (``wrong_object``);
* ``checker``: the verdict on the conditions is flipped (``false_fail`` when they hold,
  ``false_pass`` when they do not); a false fail denies what the hand holds where the
  conditions say (``holding``, ``hand-empty``: "not in the gripper after a successful pick",
  AgenticLab Sec. VI-A), else one condition;
* ``detector``: the point and box land on another object (or a random spot); where the
  oracle weighs kinds: on the nearest other object (``neighbour``), one of the target's
  category (``distractor``), beside the target (``off_object``) or nowhere (``no_answer``);
* ``grasp``: the EXECUTE/REJECT verdict is flipped (``false_reject`` / ``false_execute``);
* ``goal``: the goal verdict is flipped (``false_fail`` / ``false_pass``);
* the VLM's check of another detector's detection (template ``detection_check``, asked of
  the ``grasp`` module, whose judgement of a grasp includes whether it frames the right
  object): the verdict on "the marked point lies on the named target" is flipped at the
  grasp module's rate (``false_reject`` when it does, ``false_execute`` when it does not).

A verdict's kind is the only error its truth allows; see
:meth:`~agentic_env.oracle.backend.OracleContext.wrong`. The detector finds only what the
image shows (:meth:`AgenticLabOracle.detect`); its error rate may depend on how hard the
target is to see there (:mod:`agentic_env.oracle.difficulty`).

MALLVI's answers (:mod:`agentic_env.oracle.mallvi`) share its detection and grasp truth.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.agents.models.base import ModelQuery
from agentic_env.oracle.difficulty import same_category, sighting
from agentic_env.oracle.listing import true_kinds
from agentic_env.oracle.naming import thing_geoms
from agentic_env.pddl.planning import problem_text
from agentic_env.tasks.base import SymbolicTask
from agentic_env.visualize import resize_nearest

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.oracle.backend import OracleContext

#: Fingertips lower than this above the table (m) mean the grasp collides with the table.
_TABLE_CLEARANCE = 0.002
#: Conditions about what the hand holds (a false fail denies them all).
_HAND = re.compile(r"\((holding|hand-empty)\b")
#: The prompt template of the VLM's check of another detector's detection.
DETECTION_CHECK = "detection_check"


def describe(name: str) -> str:
    """A natural-language description of a PDDL object name: ``red-cube-1`` -> ``red cube``."""
    return re.sub(r"-\d+$", "", name).replace("-", " ").replace("_", " ")


def _holds(literal: str, facts: set[str]) -> bool:
    """Truth of ``(p a b)`` or ``(not (p a b))`` in a set of facts written ``p a b``."""
    text = literal.strip()
    match = re.fullmatch(r"\(\s*not\s+(\(.*\))\s*\)", text)
    if match:
        return not _holds(match.group(1), facts)
    return " ".join(text.strip("()").split()).lower() in facts


def answer(oracle: OracleContext, query: ModelQuery) -> dict[str, Any]:
    """The sim-oracle's answer to a query of one of AgenticLab's modules."""
    return oracle.part(AgenticLabOracle).answer(query)


class AgenticLabOracle:
    """AgenticLab's modules (and the detection and grasp truth other agents' answers share)
    answered from one sim-oracle's context.

    Args:
        oracle: the sim-oracle's context (simulator, error draws, random stream).
    """

    def __init__(self, oracle: OracleContext) -> None:
        self._oracle = oracle
        self._segment_cache: tuple[tuple[str, int, int, float], np.ndarray] | None = None

    def answer(self, query: ModelQuery) -> dict[str, Any]:
        """The answer to one of AgenticLab's modules (the module docstring)."""
        if query.template == DETECTION_CHECK:
            return self._detection_check(query.fields)
        handlers = {"parser": self._parser, "checker": self._checker,
                    "detector": self._detector, "grasp": self._grasp, "goal": self._goal}
        return handlers[query.module](query.fields)

    @property
    def _env(self) -> SimEnv:
        return self._oracle.env

    @property
    def _task(self) -> SymbolicTask:
        return self._oracle.task

    @property
    def _rng(self) -> np.random.Generator:
        return self._oracle.rng

    def _facts(self) -> set[str]:
        return self._oracle.facts()

    # -- modules ---------------------------------------------------------------------------

    def _parser(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        task = self._task
        objects = task.pddl_objects()
        goal = list(task.goal_facts())
        if self._oracle.wrong("parser"):
            goal = self._corrupt_goal(goal, objects, self._oracle.error_kind("parser"))
        kinds = true_kinds(objects)
        problem = problem_text(task.domain, f"{task.name}-parsed", objects,
                               sorted(self._facts()), goal)
        return {
            "objects_identified": [
                {"name": name, "type": kind, "description": describe(name),
                 **({"kind": kinds[name].value} if name in kinds else {})}
                for name, kind in objects.items()
            ],
            "reasoning": f"The scene holds {len(objects)} task-relevant objects; the "
                         f"instruction asks for: {'; '.join(goal)}.",
            "updated_domain": str(fields.get("domain", "")),
            "problem_pddl": problem,
        }

    def _corrupt_goal(self, goal: list[str], objects: dict[str, str],
                      kind: str | None = None) -> list[str]:
        """``goal`` with one literal lost (``missing_goal``; the default with several) or
        one literal's last object swapped for another of its type (``wrong_object``)."""
        if len(goal) > 1 and kind != "wrong_object":
            drop = int(self._rng.integers(len(goal)))
            return goal[:drop] + goal[drop + 1:]
        index = int(self._rng.integers(len(goal))) if kind == "wrong_object" else 0
        words = goal[index].split()
        same_type = [o for o, t in objects.items() if t == objects.get(words[-1])
                     and o not in words]
        if same_type:
            words[-1] = str(self._rng.choice(same_type))
        return [*goal[:index], " ".join(words), *goal[index + 1:]]

    def _checker(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        facts = self._facts()
        conditions = [str(c) for c in fields.get("conditions", [])]
        truth = {c: _holds(c, facts) for c in conditions}
        success = all(truth.values())
        if self._oracle.wrong("checker", "false_fail" if success else "false_pass"):
            success = not success
            if not success and all(truth.values()) and conditions:
                hand = [c for c in conditions if _HAND.search(c)]
                for denied in hand or [conditions[int(self._rng.integers(len(conditions)))]]:
                    truth[denied] = False
            if success:
                truth = dict.fromkeys(truth, True)
        failed = [c for c, ok in truth.items() if not ok]
        return {
            "conditions_analysis": [
                {"condition": c, "satisfied": ok,
                 "observation": "visible in the image" if ok else "not what the image shows"}
                for c, ok in truth.items()
            ],
            "success": success,
            "reasoning": ("all conditions hold" if success
                          else "not satisfied: " + " ".join(failed)),
            "failed_conditions": failed,
        }

    def _goal(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        facts = self._facts()
        evaluation = self._task.evaluate(self._env.scene_state)
        unmet = [g for g in fields.get("goal", []) if not _holds(str(g), facts)]
        success = evaluation.success
        if self._oracle.wrong("goal", "false_fail" if success else "false_pass"):
            success = not success
        return {
            "success": success,
            "reasoning": "the scene satisfies the goal" if success
            else "the goal is not met yet",
            "unsatisfied_conditions": [] if success else unmet,
        }

    def _detection_check(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Whether the detection's point (pixels of the image sent) lies on the target's
        visible pixels there, the verdict flipped at the ``grasp`` module's rate."""
        camera = str(fields.get("camera", "shoulder"))
        target = str(fields.get("target", ""))
        part = str(fields.get("part", "object"))
        height, width = (int(v) for v in fields.get("image_size", (0, 0)))
        u, v = (int(x) for x in fields.get("point", (-1, -1)))
        segmentation = self._segment(camera, width, height)
        mask = np.isin(segmentation, thing_geoms(self._env, target, part))
        correct = (0 <= v < mask.shape[0] and 0 <= u < mask.shape[1] and bool(mask[v, u])
                   and not self._in_closed_drawer(target, part))
        accept = correct
        if self._oracle.wrong("grasp", "false_reject" if correct else "false_execute"):
            accept = not accept
        return {"evaluation": {
            "action": "ACCEPT_DETECTION" if accept else "REJECT_DETECTION",
            "object_correctness": {"is_correct_object": accept,
                                   "reasoning": f"the mark lies on the {describe(target)}"
                                   if accept else f"the mark misses the {describe(target)}"}}}

    # -- detector ----------------------------------------------------------------------------

    def _detector(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        return self.detect(fields, "detector")

    def detect(self, fields: Mapping[str, Any], module: str) -> dict[str, Any]:
        """Point and box of ``fields["target"]`` in the camera image, in pixels whatever
        format the query asked for (the answer says so); a wrong object at ``module``'s
        error rate (of the kind drawn, :meth:`_mistaken`, where kinds are weighed).

        Only what the image shows is found: the target's pixels in that render's
        segmentation, none when fewer than the oracle's ``min_visible_px``, and never the
        inside of a closed drawer (its floor, or what lies in it). Where the oracle weighs
        difficulty, the error rate depends on the target's
        :class:`~agentic_env.oracle.difficulty.Sighting` in that image.
        """
        camera = str(fields.get("camera", "shoulder"))
        target = str(fields.get("target", ""))
        part = str(fields.get("part", "object"))
        height, width = (int(v) for v in fields.get("image_size", (0, 0)))
        segmentation = self._segment(camera, width, height)
        mask = np.isin(segmentation, thing_geoms(self._env, target, part))
        if self._in_closed_drawer(target, part) \
                or mask.sum() < self._oracle.min_visible_px:
            mask = np.zeros_like(mask)
        visible = int(mask.sum())
        if self._oracle.wrong(module, seen=lambda: sighting(
                self._env, segmentation, target, visible, max(self._oracle.min_visible_px, 1))):
            kind = self._oracle.error_kind(module)
            mask = (self._other_mask(segmentation, target) if kind is None
                    else self._mistaken(kind, segmentation, target, mask))
        if not mask.any():
            return {"found": False, "point": None, "box": None,
                    "reasoning": f"no {describe(target)} is visible"}
        rows, cols = np.nonzero(mask)
        box = [int(cols.min()), int(rows.min()), int(cols.max()) + 1, int(rows.max()) + 1]
        interior = _erode_to_core(mask)
        rows, cols = np.nonzero(interior)
        centre = np.array([rows.mean(), cols.mean()])
        pick = int(np.argmin((rows - centre[0]) ** 2 + (cols - centre[1]) ** 2))
        return {"found": True, "point": [int(cols[pick]), int(rows[pick])], "box": box,
                "coordinates": "pixels",
                "reasoning": f"the {describe(target)} is at the marked point"}

    def _segment(self, camera: str, width: int, height: int) -> np.ndarray:
        """Geom id of every pixel of ``camera`` at ``width`` x ``height`` (-1 = none)."""
        env = self._env
        key = (camera, width, height, float(env.data.time))
        if self._segment_cache is not None and self._segment_cache[0] == key:
            return self._segment_cache[1]
        ids = env.segmentation(camera)
        if width > 0 and height > 0 and (height, width) != ids.shape:
            ids = resize_nearest(ids, width, height)  # the image was sent at another size
        self._segment_cache = (key, ids)
        return ids

    def shown(self, names: Iterable[str], camera: str, size: tuple[int, int]) -> set[str]:
        """Those of ``names`` the image of ``camera`` at ``size`` (height, width; 0, 0: the
        camera's own) shows: at least the oracle's ``min_visible_px`` of their pixels, and not
        inside a closed drawer. A name with no geometry of its own (a slot, a pose: a region
        of something else) is kept."""
        segmentation = self._segment(camera, size[1], size[0])
        shown = set()
        for name in names:
            geoms = thing_geoms(self._env, name)
            if not geoms or (not self._in_closed_drawer(name, "object") and int(np.isin(
                    segmentation, geoms).sum()) >= max(self._oracle.min_visible_px, 1)):
                shown.add(name)
        return shown

    def _in_closed_drawer(self, target: str, part: str) -> bool:
        """Whether ``target``'s ``part`` is inside a closed drawer (no camera sees it)."""
        facts = self._facts()
        closed = {f.split()[1] for f in facts if f.startswith("drawer-closed ")}
        return (target in closed and part == "interior") or any(
            f"in-drawer {target} {drawer}" in facts for drawer in closed)

    def _mistaken(self, kind: str, segmentation: np.ndarray, target: str,
                  mask: np.ndarray) -> np.ndarray:
        """The pixels a wrong detection of ``kind`` reports instead of ``mask``: the
        nearest other visible object in the image (``neighbour``), a visible object of the
        target's category (``distractor``, else a neighbour), a patch beside the target
        (``off_object``; anywhere when it is not seen), or nothing (``no_answer``)."""
        if kind == "no_answer":
            return np.zeros_like(mask)
        seen = self._visible_others(segmentation, target)
        if kind == "distractor":
            kin = same_category(self._env, target)
            seen = [(m, name) for m, name in seen if name in kin] or seen
        if kind in ("neighbour", "distractor") and seen:
            if not mask.any():
                return seen[int(self._rng.integers(len(seen)))][0]
            centre = np.argwhere(mask).mean(axis=0)
            return min(seen, key=lambda s: float(np.linalg.norm(
                np.argwhere(s[0]).mean(axis=0) - centre)))[0]
        return self._beside(mask)

    def _visible_others(self, segmentation: np.ndarray, target: str
                        ) -> list[tuple[np.ndarray, str]]:
        """(mask, name) of every other task object the image shows enough of."""
        masks = ((np.isin(segmentation, thing_geoms(self._env, other)), other)
                 for other in self._task.pddl_objects() if other != target)
        return [(m, name) for m, name in masks
                if m.sum() >= max(self._oracle.min_visible_px, 1)]

    def _beside(self, mask: np.ndarray) -> np.ndarray:
        """A 10 x 10 px patch just left or right of ``mask``'s box (a random spot when the
        mask is empty), clipped to the image."""
        height, width = mask.shape
        patch = np.zeros_like(mask)
        if mask.any():
            rows, cols = np.nonzero(mask)
            row = int(rows.mean()) - 5
            col = (int(cols.max()) + 4 if self._rng.random() < 0.5 else int(cols.min()) - 14)
        else:
            row = int(self._rng.integers(height - 10))
            col = int(self._rng.integers(width - 10))
        row, col = min(max(row, 0), height - 10), min(max(col, 0), width - 10)
        patch[row:row + 10, col:col + 10] = True
        return patch & ~mask

    def _other_mask(self, segmentation: np.ndarray, target: str) -> np.ndarray:
        others = [o for o in self._task.pddl_objects() if o != target]
        self._rng.shuffle(others)
        for other in others:
            mask = np.isin(segmentation, thing_geoms(self._env, other))
            if mask.sum() > 20:
                return mask
        mask = np.zeros(segmentation.shape, bool)
        row = int(self._rng.integers(segmentation.shape[0] - 10))
        col = int(self._rng.integers(segmentation.shape[1] - 10))
        mask[row:row + 10, col:col + 10] = True
        return mask

    # -- grasp evaluation --------------------------------------------------------------------

    def _grasp(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        target = str(fields.get("target", ""))
        pose = np.asarray(fields.get("pose"), dtype=float).reshape(4, 4)
        correct, clear = self.grasp_truth(target, pose)
        execute = correct and clear
        if self._oracle.wrong("grasp", "false_reject" if execute else "false_execute"):
            execute = not execute
        reason = None if execute else ("the fingers would hit the table" if not clear
                                       else "the grasp is not centred on the target")
        return {"evaluation": {
            "action": "EXECUTE_GRASP" if execute else "REJECT_GRASP",
            "object_correctness": {"is_correct_object": correct, "confidence": 1.0,
                                   "reasoning": f"the gripper frames the {describe(target)}"
                                   if correct else "the gripper misses the target"},
            "collision_check": {"overlaps_with_surface": not clear, "confidence": 1.0,
                                "reasoning": "fingertips above the table" if clear
                                else "fingertips below the table surface"},
            "overall_reasoning": "a good grasp" if execute else reason,
            "confidence": 1.0,
            "rejection_reason": reason,
        }}

    def grasp_truth(self, target: str, pose: np.ndarray) -> tuple[bool, bool]:
        """(the closing segment passes through the target, the fingertips clear the table)."""
        from agentic_env.robot.constants import TCP_TO_FINGERTIP
        from agentic_env.sim.state import body_box

        scene = self._env.scene_state
        try:
            box = body_box(scene, target)
        except KeyError:
            return False, True
        tcp = pose[:3, 3]
        inside = bool(np.all(tcp[:2] >= box.low[:2] - 0.005)
                      and np.all(tcp[:2] <= box.high[:2] + 0.005)
                      and box.low[2] - 0.01 <= tcp[2] <= box.high[2] + TCP_TO_FINGERTIP + 0.01)
        fingertip = tcp + pose[:3, 2] * TCP_TO_FINGERTIP
        return inside, bool(fingertip[2] > _TABLE_CLEARANCE)


def _erode_to_core(mask: np.ndarray, steps: int = 4) -> np.ndarray:
    """The mask shrunk by up to ``steps`` pixels (stops before it would vanish)."""
    core = mask
    for _ in range(steps):
        shrunk = core.copy()
        shrunk[1:, :] &= core[:-1, :]
        shrunk[:-1, :] &= core[1:, :]
        shrunk[:, 1:] &= core[:, :-1]
        shrunk[:, :-1] &= core[:, 1:]
        if not shrunk.any():
            break
        core = shrunk
    return core
