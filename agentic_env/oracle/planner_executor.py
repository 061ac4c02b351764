"""The sim-oracle's answers for the planner-executor: router, chatbot, planner and critic.

Privileged (it reads the simulator's true state and the task's reference plan); no agent
imports it. The planner's answers are the next tool call of a correct agent following the
paper's loop (reflect, snapshot, then per plan step: perceive, act, check events), replanned
from the true state after a failed ``act``. Injected errors are the paper's failure modes
(:data:`~agentic_env.agents.models.base.PLANNER_ERRORS`): ``verbal`` (a text reply instead of
a call, which ends the planner's round), ``skip_events`` / ``repeat_events`` (an event check
left out / made twice), ``blind_place`` (a place without perceiving the surface first), each
per turn at its own rate; and, once per plan at the ``planner``'s rate, a plan error kind
(:mod:`agentic_env.oracle.plan_errors`): a subtask's calls skipped, two subtasks swapped, a
subtask about a look-alike, or the plan cut short and the instruction said carried out
when its calls run out. Module errors are verdict kinds: ``router`` (``false_fail``: an
instruction taken for talk, ``false_pass``: talk taken for an instruction) and ``critic``
(``false_fail``: ``continue`` when the goal holds, ``false_pass``: ``achieved`` when not).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentic_env.agents.models.base import Completion, ModelQuery, ToolCall, Usage
from agentic_env.oracle.plan_errors import look_alike, note_error, plan_error, reshaped
from agentic_env.pddl.planning import PDDLError, PlanNotFoundError, PlanStep
from agentic_env.tasks.subtasks import subtasks_from_plan
from agentic_env.tasks.symbolic import reference_plan

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.oracle.context import OracleContext

#: A tool call: (tool name, arguments).
Call = tuple[str, dict[str, Any]]
#: Plans the oracle computes from the true state per episode before it gives up.
MAX_PLANS = 8
#: PDDL actions that put the held object into a container (the ``insert`` action).
_INSERTS = ("place-in", "place-in-drawer")


def _act(action: str, *params: str) -> Call:
    return "act", {"action": action, "params": list(params)}


def step_calls(step: PlanStep, turn_to: str | None = None) -> list[Call]:
    """The planner's calls for one PDDL step: perceive what it needs, act, check events; a
    pick whose object a later step turns into the pose ``turn_to`` names that pose."""
    name, args = step.name.lower(), list(step.args)
    if name.startswith("pick"):
        source = [turn_to] if turn_to is not None else (
            [args[1]] if name == "pick-from-drawer" else [])
        calls = [_act("perceive", args[0]), _act("pick", args[0], *source)]
    elif name in _INSERTS:
        calls = [_act("perceive", args[1]), _act("insert", args[0], args[1])]
    elif name == "place-in-pose":  # set down turned: no surface to perceive
        calls = [_act("place", args[0], args[1])]
    elif name == "place-on-table":
        calls = [_act("perceive", "table"), _act("place", args[0], "table")]
    elif name.startswith("place"):
        calls = [_act("perceive", args[1]), _act("place", args[0], args[1])]
    elif name in ("open-drawer", "close-drawer"):
        calls = [_act(name.replace("-", "_"), args[0])]
    else:
        calls = [("reflect", {"text": f"no action of mine does {step}"})]
    return [*calls, ("check_events", {})]


def answer(oracle: OracleContext, query: ModelQuery) -> dict[str, Any] | Completion:
    """The sim-oracle's answer to one of the planner-executor's queries: the planner's next
    tool call (or closing text), or a JSON module's answer (the backend stamps the usage)."""
    modules = oracle.part(PlannerOracle)
    if query.module != "planner":
        handlers = {"router": modules.router, "chatbot": modules.chatbot,
                    "critic": modules.critic}
        return handlers[query.module](query.fields)
    turn = modules.planner(query.messages)
    if isinstance(turn, str):
        return Completion(turn, Usage(), (), "native")
    number = sum(1 for m in query.messages if m.get("role") == "assistant") + 1
    return Completion("", Usage(), (ToolCall(f"call_{number}", *turn),), "native")


class PlannerOracle:
    """Answers of the planner-executor's four modules from ground truth.

    Args:
        oracle: the episode's simulator (a symbolic task) and error draws (a module's, or a
            planner error kind's).
    """

    def __init__(self, oracle: OracleContext) -> None:
        self._oracle = oracle
        self._env: SimEnv = oracle.env
        self._wrong = oracle.wrong
        self._premature = False  # the plan was cut short: its end is said to be the goal's
        self._queue: deque[Call] = deque()
        self._plans = 0
        self._read = 0  # messages already read for events
        self._estop = False
        self._refused = False

    def _expect(self) -> str:
        """What the trial expects: ``act``, ``refuse`` or ``answer`` (its variant's)."""
        trial = getattr(self._env, "trial", None)
        return str((getattr(trial, "variant", None) or {}).get("expect", "act"))

    def _success(self) -> bool:
        return bool(self._env.task.evaluate(self._env.scene_state).success)

    # -- JSON modules ------------------------------------------------------------------------

    def router(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """``actionable`` for the trial's instruction or any non-question, else
        ``conversational``."""
        utterance = str(fields.get("utterance", "")).strip()
        trial = getattr(self._env, "trial", None)
        if utterance == getattr(trial, "instruction", None):
            actionable = self._expect() != "answer"
        else:
            actionable = not utterance.endswith("?")
        if self._verdict_wrong("router", "false_fail" if actionable else "false_pass"):
            actionable = not actionable
        route = "actionable" if actionable else "conversational"
        return {"route": route, "reasoning": f"the utterance is {route}"}

    def chatbot(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """An answer read off the snapshot the chatbot was given."""
        snapshot = str(fields.get("snapshot", "")).strip() or "nothing perceived yet"
        return {"answer": f"Here is what I know about the scene: {snapshot}"}

    def critic(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """``achieved`` when the goal truly holds; ``best_effort_stop`` once no plan to it
        remains (or the planner's plans are used up); else ``continue`` (the agent bounds
        its rounds)."""
        if self._expect() == "refuse":
            verdict, reason = "best_effort_stop", "the instruction cannot be carried out"
        elif self._success():
            verdict, reason = "achieved", "the goal holds"
        elif self._plans >= MAX_PLANS or self._plan() is None:
            verdict, reason = "best_effort_stop", "no way to the goal remains"
        elif int(fields.get("round_actions", 0)) == 0:
            verdict, reason = "continue", "the last round only talked; act on the goal"
        else:
            verdict, reason = "continue", "the goal is not met yet and a way to it remains"
        if verdict != "best_effort_stop" and self._verdict_wrong(
                "critic", "false_fail" if verdict == "achieved" else "false_pass"):
            verdict = "continue" if verdict == "achieved" else "achieved"
            reason = "misjudged"
        return {"verdict": verdict, "reason": reason}

    def _verdict_wrong(self, module: str, kind: str) -> bool:
        """Draw whether ``module``'s verdict errs by ``kind`` (noted for the trace)."""
        wrong = self._wrong(module, kind)
        if wrong:
            note_error(self._oracle, module, kind)
        return wrong

    # -- the planner (tool calls) ------------------------------------------------------------

    def planner(self, messages: Sequence[Mapping[str, Any]]) -> Call | str:
        """The next tool call, or a closing text (the round ends).

        An impossible instruction is refused aloud without moving; while the e-stop is
        pressed (a refusal or an event said so) the planner only listens until its release;
        a failed ``act`` is followed by its event check, then a new plan; an operator's words
        or a person's change (from ``check_events`` or ``listen``) make it plan again from the
        true state, which holds any changed goal.
        """
        if self._expect() == "refuse":
            return self._refuse()
        changed = self._read_events(messages)
        failed = _last_act_failed(messages)
        if failed or changed:
            self._queue.clear()
        if self._estop:
            return _act("listen")
        if failed:  # a failed action may still have changed the scene: check, then replan
            self._queue.append(("check_events", {}))
        if not self._queue:
            if self._success() or self._premature:
                self._premature = False
                return "The instruction is carried out."
            plan = self._plan() if self._plans < MAX_PLANS else None
            if plan is None:
                return "I cannot find a way to carry out the instruction; I stop here."
            self._plans += 1
            plan = self._mistaken(plan)
            steps = "; ".join(str(s) for s in plan)
            self._queue.extend([("reflect", {"text": f"plan: {steps}"}),
                                ("get_state_snapshot", {})])
            for index, step in enumerate(plan):
                self._queue.extend(step_calls(step, _turn_goal(plan[index + 1:], step)))
        if self._wrong("verbal"):
            return f"To carry this out I would next call {self._queue[0][0]}."
        call = self._queue[0]
        if call[0] == "check_events" and self._wrong("skip_events"):
            self._queue.popleft()
            if not self._queue:
                return "Done."
            call = self._queue[0]
        elif call[0] == "check_events" and self._wrong("repeat_events"):
            return call  # asked again next turn
        if (call[1].get("action") == "perceive" and len(self._queue) > 1
                and self._queue[1][1].get("action") in ("place", "insert")
                and self._wrong("blind_place")):
            self._queue.popleft()
            call = self._queue[0]
        self._queue.popleft()
        return call

    def _mistaken(self, plan: list[PlanStep]) -> list[PlanStep]:
        """``plan`` with the planner's plan error when one is drawn, made on its subtasks
        (a pick and its place are one): one left out, two swapped, one about a look-alike,
        or the tail cut (then the instruction is said carried out when the plan ends)."""
        kind = plan_error(self._oracle, "planner") if plan else None
        units = [list(s.steps) for s in subtasks_from_plan(plan)]
        if kind == "wrong_object":
            index = int(self._oracle.rng.integers(len(units)))
            obj = units[index][0].args[0] if units[index][0].args else ""
            alike = look_alike(self._oracle, obj) if obj else None
            if alike is not None and not any(alike in s.args for s in units[index]):
                units[index] = [PlanStep(s.name, tuple(alike if a == obj else a
                                                       for a in s.args)) for s in units[index]]
        elif kind is not None and (made := reshaped(units, kind, self._oracle)) is not None:
            units, self._premature = made, kind == "premature_done"
        return [step for unit in units for step in unit]

    def _refuse(self) -> Call | str:
        if self._refused or self._wrong("verbal"):
            return "I cannot carry out this instruction, so I will not move."
        self._refused = True
        return _act("speak", "Sorry, I cannot do that: it is beyond what this arm can do.")

    def _read_events(self, messages: Sequence[Mapping[str, Any]]) -> bool:
        """Follow the e-stop through the tool results not read yet; whether one reported
        an operator's words or a person's change."""
        changed = False
        for message in messages[self._read:]:
            content = str(message.get("content", ""))
            if message.get("role") != "tool":
                continue
            if content.startswith("ESTOP") or "e-stop pressed" in content:
                self._estop = True
            if "e-stop released" in content:
                self._estop = False
            changed |= "operator says" in content or "a person" in content
        self._read = len(messages)
        return changed

    def _plan(self) -> list[PlanStep] | None:

        try:
            return reference_plan(self._env.task, self._env.scene_state)
        except (PlanNotFoundError, PDDLError):
            return None


def _last_act_failed(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the conversation's last tool result was a failed ``act``."""
    for message in reversed(messages):
        if message.get("role") == "tool":
            return message.get("name") == "act" and not str(
                message.get("content", "")).startswith("OK")
        if message.get("role") == "user":
            return False
    return False


def _turn_goal(later: Sequence[PlanStep], step: PlanStep) -> str | None:
    """The pose the next step turns ``step``'s picked object into, if it does."""
    if not step.name.lower().startswith("pick") or not later:
        return None
    following = later[0]
    if following.name.lower() == "place-in-pose" and following.args[0] == step.args[0]:
        return str(following.args[1])
    return None
