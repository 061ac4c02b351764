"""AgenticLab's mapping of PDDL actions onto the robot skills (:mod:`agentic_env.agents.skills`).

Each plan step is grounded from observations: ``pick*`` -> :func:`skills.pick` (or the turning
pick when a later ``place-in-pose`` needs it), ``place*`` -> ``place_on`` / ``place_in`` /
``place_at`` / the turned place, ``open-drawer`` / ``close-drawer`` -> the drawer skills.
Model judgements come from the agent's modules (detector, grasp evaluation). A step that
cannot be grounded blames the module at fault (``detector``, ``grasp``) or ``execution``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.agents import skills
from agentic_env.agents.agenticlab.modules import Detection, detect, evaluate_grasp
from agentic_env.agents.perception import GraspCandidate
from agentic_env.agents.skills import SkillCode, grounding, turn
from agentic_env.agents.skills.locate import Target, locate
from agentic_env.agents.skills.scene import SceneView
from agentic_env.pddl.planning import PlanStep

if TYPE_CHECKING:
    from agentic_env.agents.agenticlab.modules import ModuleContext
    from agentic_env.agents.agenticlab.pipeline import AgentConfig
    from agentic_env.agents.base import AgentReport
    from agentic_env.agents.skills.reorient import Reorienter

#: Actions a search for a target leaves of the action budget (a pick and a place).
SEARCH_RESERVE = 2


class _GroundingError(Exception):
    """A step could not be grounded; ``source`` names the module to blame."""

    def __init__(self, source: str, detail: str) -> None:
        super().__init__(detail)
        self.source = source


class StepGrounding:
    """The step-to-skill half of :class:`~agentic_env.agents.agenticlab.pipeline.
    AgenticLabAgent` (which provides the state below and the :class:`skills.SkillIO`
    methods ``act`` and ``event``)."""

    ctx: ModuleContext
    config: AgentConfig
    report: AgentReport
    obs: dict[str, np.ndarray]
    objects: dict[str, str]
    plan: list[PlanStep]
    held: grounding.HeldObject | None
    _rng: np.random.Generator
    _reorienter: Reorienter | None
    _turning: turn.TurningGrip | None

    def act(self, action: dict[str, Any], why: str) -> dict[str, Any]:
        """Run one primitive (the agent's, within its limits)."""
        raise NotImplementedError

    def event(self, kind: str, **details: Any) -> None:
        """Record one decision (the agent's trace)."""
        raise NotImplementedError

    def _fail_first(self, source: str, detail: str) -> None:
        """Blame ``source`` unless a failure is already recorded (the agent's report)."""
        raise NotImplementedError

    def _execute(self, step: PlanStep) -> bool:
        """Ground and run ``step``; ``False`` when it could not be done (reported)."""
        name = step.name.lower()
        try:
            if name.startswith("pick"):
                return self._pick(step)
            if name.startswith("place"):
                return self._place(step)
            if name in ("open-drawer", "close-drawer"):
                return self._drawer(step, opening=name == "open-drawer")
        except _GroundingError as exc:
            self._fail_first(exc.source, str(exc))
            self.event("grounding_failed", step=str(step), source=exc.source,
                        detail=str(exc))
            return False
        self._fail_first("parser", f"the plan uses action {step.name!r}, which has no "
                         "primitive")
        self.event("unknown_action", step=str(step))
        return False

    def _describe(self, name: str) -> str:
        return self.objects.get(name, name.replace("-", " "))

    def _detect(self, name: str, camera: str, part: str = "object") -> Target:
        """Locate ``name`` (the skill looks again when the shoulder camera misses it)."""
        found = locate(self, self._detector, name, part, camera,
                       max_moves=self._search_moves())
        if not found.ok:
            raise _GroundingError("detector", found.message)
        return found.data["target"]

    def _search_moves(self) -> int:
        """Arm moves a search for a target may take: what the action budget leaves beyond
        :data:`SEARCH_RESERVE`."""
        return max(self.config.max_actions - self.report.actions - SEARCH_RESERVE, 0)

    def _detector(self, obs: dict[str, np.ndarray], camera: str, name: str,
                  part: str) -> Detection | None:
        return detect(self.ctx, obs, camera, name, self._describe(name), part)

    # -- pick --------------------------------------------------------------------------------

    def _pick(self, step: PlanStep) -> bool:
        """Pick ``step``'s object: grasps planned in the shoulder view, else the wrist view;
        a grasp the arm cannot reach (refused before moving) gives way to the next one. An
        object the plan then places in a pose is picked so the wrist can turn it."""
        target = step.args[0]
        goal = self._pose_goal(step)
        if goal is not None:
            return self._pick_to_turn(step, goal)
        yaw = None
        if step.name.lower() == "pick-from-drawer" and len(step.args) > 1:
            yaw = self._outward_yaw(step.args[1])  # the wrist's bulk away from the carcass
        judge = self._grasp_judge(step) if self.config.grasp_evaluation else None
        return self._picked(skills.pick(
            self, self._detector, target, self._rng, yaw=yaw, judge=judge,
            judged=self.config.grasp_candidates_judged, max_moves=self._search_moves(),
            why=str(step)))

    def _grasp_judge(self, step: PlanStep) -> skills.GraspJudge:
        """The grasp planner's VLM as the pick skill's judgement of ``step``'s grasps."""
        def judge(image: np.ndarray, candidate: GraspCandidate, target: Target
                  ) -> tuple[bool, str]:
            verdict = evaluate_grasp(self.ctx, image, step, target.name,
                                     self._describe(target.name), candidate.pose,
                                     candidate.width)
            return verdict.execute, verdict.reason
        return judge

    def _pose_goal(self, step: PlanStep) -> str | None:
        """The pose a later ``place-in-pose`` of the plan puts ``step``'s object in."""
        later = self.plan[self.plan.index(step) + 1:] if step in self.plan else []
        for other in later:
            if other.name.lower() == "place-in-pose" and other.args[0] == step.args[0]:
                return other.args[1]
        return None

    def _pick_to_turn(self, step: PlanStep, goal: str) -> bool:
        """Pick ``step``'s object with a grasp from which the place can turn it into
        ``goal``, judged by the grasp planner's VLM first."""
        target = self._detect(step.args[0], "shoulder")
        judge = self._grasp_judge(step) if self.config.grasp_evaluation else None
        result = turn.pick_to_turn(self, target, goal, self._reorienter, judge=judge,
                                   judged=self.config.grasp_candidates_judged, why=str(step))
        return self._picked(result)

    def _picked(self, result: skills.SkillResult) -> bool:
        """Book a pick skill's result: its failed attempts, what it holds; raise for a pick
        that could not be grounded."""
        for failure in result.data.get("failures", ()):
            self._fail_first("execution", failure)
        if result.ok:
            self.held, self._turning = result.data["held"], result.data.get("grip")
            return True
        if result.code is SkillCode.NOT_FOUND:
            raise _GroundingError("detector", result.message)
        if result.data.get("rejected"):
            raise _GroundingError("grasp", result.message)
        if result.data.get("look"):
            raise _GroundingError("execution", result.message)
        return False

    def _place_turned(self, step: PlanStep) -> bool:
        """Set the held object down at its old spot in the pose ``step`` asks for."""
        target, goal = step.args[0], step.args[1]
        if self._turning is None or self._turning.name != target:
            raise _GroundingError("execution", f"{target} was not picked for turning")
        result = turn.place_turned(self, self._turning, goal, self._reorienter, str(step))
        for failure in result.data.get("failures", ()):
            self._fail_first("execution", failure)
        if result.ok:
            self.held, self._turning = None, None
        return result.ok

    # -- place -------------------------------------------------------------------------------

    def _place(self, step: PlanStep) -> bool:
        held = getattr(self, "held", None)
        if held is None or held.name != step.args[0]:
            held = grounding.HeldObject(step.args[0], 0.03, 0.03)
        name = step.name.lower()
        if name == "place-in-pose":
            return self._place_turned(step)
        target = step.args[1] if len(step.args) > 1 else None
        on_table = target is None or name == "place-on-table" or target == "table"
        part = "interior" if name == "place-in-drawer" else "object"
        located = None if on_table else self._detect(target, "shoulder", part)
        # the scene as seen now: locating may have moved the arm out of the view first
        view, why = SceneView(self.obs), str(step)
        if located is None:
            result = skills.place_at(self, held, view=view, why=why)
            if result.code is SkillCode.BLOCKED:
                raise _GroundingError("detector", result.message)
        elif name in ("place-in", "place-in-drawer"):
            yaw = self._outward_yaw(target) if name == "place-in-drawer" else None
            result = skills.place_in(self, held, located, yaw=yaw, view=view, why=why)
        elif name == "place-in-slot":
            result = skills.place_in_slot(self, self._detector, held, located, view=view,
                                          why=why)
        else:
            result = skills.place_on(self, held, located,
                                     align_faces=name == "place-on-object", view=view, why=why)
        if result.ok:
            self.held = None
        else:
            self._fail_first("execution", result.message)
        return result.ok

    # -- drawers -----------------------------------------------------------------------------

    def _handle_pose(self, drawer: str) -> np.ndarray:
        fitted = skills.handle_pose(self, self._detect(drawer, "shoulder", "handle"))
        if not fitted.ok:
            raise _GroundingError("detector", fitted.message)
        return fitted.data["pose"]

    def _outward_yaw(self, drawer: str) -> float:
        """Yaw (rad) that points the tool x axis out of ``drawer``'s cabinet."""
        return skills.outward_yaw(self._handle_pose(drawer))

    def _drawer(self, step: PlanStep, opening: bool) -> bool:
        handle = self._detect(step.args[0], "shoulder", "handle")
        move = skills.open_drawer if opening else skills.close_drawer
        result = move(self, handle, str(step))
        if result.code is SkillCode.NOT_FOUND:
            raise _GroundingError("detector", result.message)
        if not result.ok:
            self._fail_first("execution", f"{step.name} failed: {result.message}")
        return result.ok
