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
:meth:`~agentic_env.oracle.context.OracleContext.wrong`. Each answer states what its error
depends on, and an emulated model errs by it (:mod:`agentic_env.oracle.causes`): the
checker's and goal checker's rate follows the visible pixels (in the view sent) of what
each literal is about, the predicate kind and the verdict's direction; the grasp judge's the
clutter and occlusion in its crop; the parser's the goal's number of literals. The detector
(:mod:`agentic_env.oracle.detection`) finds only what the image shows; its error rate may
depend on how hard the target is to see there (:mod:`agentic_env.oracle.difficulty`).
Camera-visibility, detection and grasp truth live in :mod:`agentic_env.oracle.visibility`,
shared with the other agents' answers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.agents.models.base import ModelQuery
from agentic_env.oracle.causes import crop_situation, verdict_sight
from agentic_env.oracle.detection import Detector, sent_frame
from agentic_env.oracle.listing import true_kinds
from agentic_env.oracle.naming import describe, thing_geoms
from agentic_env.oracle.visibility import view_of
from agentic_env.pddl.planning import problem_text
from agentic_env.tasks.base import SymbolicTask

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.oracle.context import OracleContext

#: Conditions about what the hand holds (a false fail denies them all).
_HAND = re.compile(r"\((holding|hand-empty)\b")
#: The prompt template of the VLM's check of another detector's detection.
DETECTION_CHECK = "detection_check"
__all__ = ["DETECTION_CHECK", "AgenticLabOracle", "answer", "describe"]


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
    """AgenticLab's modules answered from one sim-oracle's context.

    Args:
        oracle: the sim-oracle's context (simulator, visibility truth, error draws).
    """

    def __init__(self, oracle: OracleContext) -> None:
        self._oracle = oracle

    def answer(self, query: ModelQuery) -> dict[str, Any]:
        """The answer to one of AgenticLab's modules (the module docstring)."""
        if query.template == DETECTION_CHECK:
            return self._detection_check(query.fields)
        handlers = {"parser": self._parser, "checker": self._checker,
                    "detector": self._detector, "grasp": self._grasp, "goal": self._goal}
        return handlers[query.module](query)

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

    def _parser(self, query: ModelQuery) -> dict[str, Any]:
        """The true problem (a goal literal lost or a wrong object when injected; an
        emulated parser errs per goal literal: :class:`~agentic_env.oracle.causes.LiteralModel`)."""
        task = self._task
        objects = task.pddl_objects()
        goal = list(task.goal_facts())
        if self._oracle.wrong("parser", cause=lambda: len(goal)):
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
            "updated_domain": str(query.fields.get("domain", "")),
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

    def _checker(self, query: ModelQuery) -> dict[str, Any]:
        """The true verdict on the conditions (flipped when injected; an emulated checker
        errs by the visible pixels of what each condition is about in the view sent)."""
        facts = self._facts()
        conditions = [str(c) for c in query.fields.get("conditions", [])]
        truth = {c: _holds(c, facts) for c in conditions}
        success = all(truth.values())
        camera, size = view_of(query.images, query.fields)
        if self._oracle.wrong("checker", "false_fail" if success else "false_pass",
                              cause=lambda: verdict_sight(self._oracle.sight, conditions,
                                                          success, camera, size)):
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

    def _goal(self, query: ModelQuery) -> dict[str, Any]:
        """The task's true success (flipped when injected; an emulated goal checker errs by
        the visible pixels of what each goal literal is about in the view sent)."""
        facts = self._facts()
        asked = [str(g) for g in query.fields.get("goal", [])]
        goal = asked or [f"({g})" for g in self._task.goal_facts()]
        unmet = [g for g in asked if not _holds(g, facts)]
        success = self._task.evaluate(self._env.scene_state).success
        camera, size = view_of(query.images, query.fields)
        if self._oracle.wrong("goal", "false_fail" if success else "false_pass",
                              cause=lambda: verdict_sight(self._oracle.sight, goal, success,
                                                          camera, size)):
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
        sight = self._oracle.sight
        camera = str(fields.get("camera", "shoulder"))
        target = str(fields.get("target", ""))
        part = str(fields.get("part", "object"))
        height, width = (int(v) for v in fields.get("image_size", (0, 0)))
        u, v = (int(x) for x in fields.get("point", (-1, -1)))
        mask = np.isin(sight.segment(camera, width, height),
                       thing_geoms(self._env, target, part))
        correct = (0 <= v < mask.shape[0] and 0 <= u < mask.shape[1] and bool(mask[v, u])
                   and not sight.in_closed_drawer(target, part))
        accept = correct
        if self._oracle.wrong("grasp", "false_reject" if correct else "false_execute"):
            accept = not accept
        return {"evaluation": {
            "action": "ACCEPT_DETECTION" if accept else "REJECT_DETECTION",
            "object_correctness": {"is_correct_object": accept,
                                   "reasoning": f"the mark lies on the {describe(target)}"
                                   if accept else f"the mark misses the {describe(target)}"}}}

    def _detector(self, query: ModelQuery) -> dict[str, Any]:
        return self._oracle.part(Detector).detect(query.fields, "detector", sent_frame(query))

    # -- grasp evaluation --------------------------------------------------------------------

    def _grasp(self, query: ModelQuery) -> dict[str, Any]:
        """The true verdict on a grasp (flipped when injected; an emulated judge errs by the
        clutter and occlusion in the crop it is shown)."""
        fields = query.fields
        target = str(fields.get("target", ""))
        pose = np.asarray(fields.get("pose"), dtype=float).reshape(4, 4)
        sight = self._oracle.sight
        correct, clear = sight.grasp_truth(target, pose)
        execute = correct and clear
        if self._oracle.wrong("grasp", "false_reject" if execute else "false_execute",
                              cause=lambda: crop_situation(sight.crop(
                                  target, pose, self._task.pddl_objects()), execute)):
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
