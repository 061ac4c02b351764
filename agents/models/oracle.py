"""The sim-oracle: a privileged, offline model that answers from simulator ground truth.

It is the offline default of every command. It reads the simulator (true facts, the task's
goal, segmentation masks) — which no agent may do — and answers each pipeline module's query
with the same JSON a real VLM must produce, so all the agent's parsing, validation and control
code runs for real. Errors can be injected per module at a seeded rate, to study how module
errors compound:

* ``parser``: the goal of the problem it writes loses one fact (or names a wrong object);
* ``checker``: the verdict on the conditions is flipped;
* ``detector``: the point and box land on another object (or a random spot);
* ``grasp``: the EXECUTE/REJECT verdict is flipped;
* ``goal``: the goal verdict is flipped;
* ``judge``: ALRM's trace score is replaced by another (see
  :mod:`~agentic_env.agents.models.oracle_judge`);
* MALLVI's roles (``decomposer``, ``localizer``, ``thinker``, ``reflector``,
  ``single_agent``): see :mod:`~agentic_env.agents.models.oracle_mallvi`.
* ``task_planner`` / ``task_executor``: ALRM's task planner and executor (see
  :mod:`~agentic_env.agents.models.oracle_alrm`).
* ``router``, ``critic`` and the planner error kinds of
  :data:`~agentic_env.agents.models.base.PLANNER_ERRORS`: the planner-executor's modules (see
  :mod:`~agentic_env.agents.models.oracle_planner`).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from agentic_env.agents.models.base import (
    PLANNER_ERRORS,
    Completion,
    ModelError,
    ModelQuery,
    ToolCall,
    Usage,
)
from agentic_env.agents.models.modules import module_names, oracle_answer
from agentic_env.agents.models.oracle_alrm import AlrmOracle
from agentic_env.agents.models.oracle_judge import judge_answer
from agentic_env.agents.models.oracle_mallvi import MallviOracle
from agentic_env.agents.models.oracle_planner import PlannerOracle
from agentic_env.errors import InvalidConfigError
from agentic_env.pddl.planning import problem_text
from agentic_env.tasks.base import SymbolicTask
from agentic_env.visualize import resize_nearest

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv

#: Geom-name prefixes of the parts of a drawer the detector can be asked for.
_DRAWER_PARTS = {"handle": "_handle", "interior": "_drawer_floor", "object": "_drawer"}
#: Fingertips lower than this above the table (m) mean the grasp collides with the table.
_TABLE_CLEARANCE = 0.002


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


class SimOracle:
    """Privileged offline model over one :class:`~agentic_env.envs.sim_env.SimEnv`.

    Args:
        env: the env whose ground truth answers the queries (a symbolic task).
        error_rates: module name -> probability in [0, 1] of a wrong answer.
        seed: seed of the error injection.
    """

    name = "sim-oracle"

    def __init__(self, env: SimEnv, error_rates: Mapping[str, float] | None = None,
                 seed: int = 0) -> None:
        if not isinstance(env.task, SymbolicTask):
            raise InvalidConfigError(f"the sim-oracle needs a task with a PDDL model; "
                                     f"{env.task.name!r} has none")
        rates = dict(error_rates or {})
        for module, rate in rates.items():
            if module not in (*module_names(), *PLANNER_ERRORS) or not 0.0 <= rate <= 1.0:
                raise InvalidConfigError(
                    f"sim-oracle error rate {module}={rate}: modules are "
                    f"{', '.join(module_names())}, "
                    f"planner error kinds {', '.join(PLANNER_ERRORS)}, rates in [0, 1]")
        self._env = env
        self._rates = rates
        self._rng = np.random.default_rng(seed)
        self._segment_cache: tuple[tuple[str, int, int, float], np.ndarray] | None = None
        self._alrm = AlrmOracle(env, self.wrong)
        self._planner = PlannerOracle(env, self.wrong)

    # -- Backend protocol ------------------------------------------------------------------

    def complete(self, query: ModelQuery) -> Completion:
        """Answer ``query`` from ground truth (see the module docstring)."""
        start = time.perf_counter()
        mallvi = MallviOracle(self)
        if self._alrm.answers(query):
            return self._alrm.complete(
                query, lambda: Usage(latency_s=time.perf_counter() - start, cost_usd=0.0))
        if query.module == "planner":
            return self._planner_turn(query, start)
        handlers = {"parser": self._parser, "checker": self._checker,
                    "detector": self._detector, "grasp": self._grasp, "goal": self._goal,
                    "judge": self._judge, "decomposer": mallvi.decomposer,
                    "localizer": mallvi.localizer, "thinker": mallvi.thinker,
                    "reflector": mallvi.reflector, "single_agent": mallvi.single_agent,
                    "router": self._planner.router, "chatbot": self._planner.chatbot,
                    "critic": self._planner.critic}
        handler = handlers.get(query.module)
        registered = None if handler else oracle_answer(query.module)
        if handler is None and registered is None:
            raise ModelError(f"the sim-oracle answers modules {', '.join(module_names())}; "
                             f"got {query.module!r}")
        answer = handler(query.fields) if handler else registered(self, query.fields)
        return Completion(json.dumps(answer, indent=1),
                          Usage(latency_s=time.perf_counter() - start, cost_usd=0.0))

    def _planner_turn(self, query: ModelQuery, start: float) -> Completion:
        """The planner-executor's next tool call (or closing text) from ground truth."""
        answer = self._planner.planner(query.messages)
        usage = Usage(latency_s=time.perf_counter() - start, cost_usd=0.0)
        if isinstance(answer, str):
            return Completion(answer, usage, (), "native")
        turn = sum(1 for m in query.messages if m.get("role") == "assistant") + 1
        return Completion("", usage, (ToolCall(f"call_{turn}", *answer),), "native")

    def close(self) -> None:
        """Drop the cached segmentation (the env owns the renderer that made it)."""
        self._segment_cache = None

    @property
    def env(self) -> SimEnv:
        """The simulator it answers from (privileged; for registered modules' answers)."""
        return self._env

    def wrong(self, module: str) -> bool:
        """Draw whether this answer of ``module`` is wrong, at its injected error rate."""
        rate = self._rates.get(module, 0.0)
        return rate > 0.0 and bool(self._rng.random() < rate)

    @property
    def _task(self) -> SymbolicTask:
        return self._env.task  # type: ignore[return-value]

    def _facts(self) -> set[str]:
        return {f.lower() for f in self._task.facts(self._env.scene_state)}

    # -- modules ---------------------------------------------------------------------------

    def _parser(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        task = self._task
        objects = task.pddl_objects()
        goal = list(task.goal_facts())
        if self.wrong("parser"):
            goal = self._corrupt_goal(goal, objects)
        problem = problem_text(task.domain, f"{task.name}-parsed", objects,
                               sorted(self._facts()), goal)
        return {
            "objects_identified": [
                {"name": name, "type": kind, "description": describe(name)}
                for name, kind in objects.items()
            ],
            "reasoning": f"The scene holds {len(objects)} task-relevant objects; the "
                         f"instruction asks for: {'; '.join(goal)}.",
            "updated_domain": str(fields.get("domain", "")),
            "problem_pddl": problem,
        }

    def _corrupt_goal(self, goal: list[str], objects: dict[str, str]) -> list[str]:
        if len(goal) > 1:
            drop = int(self._rng.integers(len(goal)))
            return goal[:drop] + goal[drop + 1:]
        words = goal[0].split()
        same_type = [o for o, t in objects.items() if t == objects.get(words[-1])
                     and o not in words]
        if same_type:
            words[-1] = str(self._rng.choice(same_type))
        return [" ".join(words)]

    def _checker(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        facts = self._facts()
        conditions = [str(c) for c in fields.get("conditions", [])]
        truth = {c: _holds(c, facts) for c in conditions}
        success = all(truth.values())
        if self.wrong("checker"):
            success = not success
            if not success and all(truth.values()) and conditions:
                truth[conditions[int(self._rng.integers(len(conditions)))]] = False
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
        if self.wrong("goal"):
            success = not success
        return {
            "success": success,
            "reasoning": "the scene satisfies the goal" if success
            else "the goal is not met yet",
            "unsatisfied_conditions": [] if success else unmet,
        }

    def _judge(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        return judge_answer(fields, self._rng, self.wrong("judge"))

    # -- detector ----------------------------------------------------------------------------

    def _detector(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        return self._detect(fields, "detector")

    def _detect(self, fields: Mapping[str, Any], module: str) -> dict[str, Any]:
        """Point and box of ``fields["target"]`` in the camera image; a wrong object at
        ``module``'s error rate."""
        camera = str(fields.get("camera", "shoulder"))
        target = str(fields.get("target", ""))
        part = str(fields.get("part", "object"))
        height, width = (int(v) for v in fields.get("image_size", (0, 0)))
        segmentation = self._segment(camera, width, height)
        mask = np.isin(segmentation, self._geoms_of(target, part))
        if self.wrong(module):
            mask = self._other_mask(segmentation, target)
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

    def _geoms_of(self, target: str, part: str) -> list[int]:
        model = self._env.model
        kinds = self._task.pddl_objects()
        if kinds.get(target) == "drawer":
            suffix = _DRAWER_PARTS.get(part, _DRAWER_PARTS["object"])
            return [g for g in range(model.ngeom)
                    if (model.geom(g).name or "").endswith(suffix)
                    or (part == "object" and "_handle" in (model.geom(g).name or ""))]
        try:
            root = model.body(target).id
        except KeyError:
            return []
        return [g for g in range(model.ngeom) if _in_subtree(model, int(model.geom_bodyid[g]),
                                                            root)]

    def _other_mask(self, segmentation: np.ndarray, target: str) -> np.ndarray:
        others = [o for o in self._task.pddl_objects() if o != target]
        self._rng.shuffle(others)
        for other in others:
            mask = np.isin(segmentation, self._geoms_of(other, "object"))
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
        correct, clear = self._grasp_truth(target, pose)
        execute = correct and clear
        if self.wrong("grasp"):
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

    def _grasp_truth(self, target: str, pose: np.ndarray) -> tuple[bool, bool]:
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


def _in_subtree(model: mujoco.MjModel, body: int, root: int) -> bool:
    while body > 0:
        if body == root:
            return True
        body = int(model.body_parentid[body])
    return root == 0


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
