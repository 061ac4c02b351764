"""The planner-executor agent (registered as ``planner-executor``), after "Agentic AI for Robot
Control: Flexible but Still Fragile" (sections 3-5).

router (small model) -> conversational: the chatbot answers from the perceived snapshot and
speaks; actionable: the planner and executor calls its four tools
(:mod:`agentic_env.agents.planner_executor.tools`) until it stops by itself, then the goal
completion critic reads the execution log and the goal and answers ``achieved``,
``best_effort_stop`` or ``continue`` (the planner is invoked again, at most
``max_replans`` times). Prompts are the packaged templates in ``prompts/``.

What each role sees (the paper's section 3 and Table 1): the router the utterance only; the
chatbot the utterance, the semantic snapshot (the scene perceived for it, as text) and the
shoulder camera's image; the planner the instruction and the world only through its tools
(the snapshot, perception results, events): no image, it reasons over the symbolic state;
the critic the goal, the execution log (reflections, state queries, actions, events, tool
results and what the planner said) and the snapshot as it stands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from agentic_env.agents.base import AgentReport, AgentSetup, RobotIO, TaskContext
from agentic_env.agents.models.base import ModelImage, ModelQuery, ToolCall
from agentic_env.agents.models.context import ModuleContext, ModuleFailedError
from agentic_env.agents.planner_executor.tools import (
    ACTIONS,
    PlannerState,
    PlannerToolContext,
    PlannerTools,
)
from agentic_env.agents.runtime import Episode, Limits, ask_json, camera_image, render_prompt
from agentic_env.agents.tools.registry import build_tool_set

ROUTES = ("conversational", "actionable")
VERDICTS = ("achieved", "continue", "best_effort_stop")
_TEXT = {"type": "string"}
ROUTER_SCHEMA: dict[str, Any] = {"type": "object", "required": ["route"], "properties": {
    "route": {"type": "string", "enum": list(ROUTES)}, "reasoning": _TEXT}}
CHATBOT_SCHEMA: dict[str, Any] = {"type": "object", "required": ["answer"],
                                  "properties": {"answer": _TEXT}}
CRITIC_SCHEMA: dict[str, Any] = {"type": "object", "required": ["verdict"], "properties": {
    "verdict": {"type": "string", "enum": list(VERDICTS)}, "reason": _TEXT}}
#: Most lines of the execution log the critic reads (the latest ones).
LOG_LINES = 80
#: Characters of one tool result in the critic's log.
RESULT_CHARS = 160


#: Where the agent's prompt templates live.
PACKAGE = "agentic_env.agents.planner_executor"


def action_catalogue() -> str:
    """The ``act`` actions and their positional parameters, one a line."""
    return "\n".join(f"- {a.value} [{', '.join(p) or 'no parameters'}]"
                     for a, p in ACTIONS.items())


def make_planner_executor(setup: AgentSetup) -> PlannerExecutorAgent:
    """The planner-executor agent of ``setup`` (option ``max_turns``: model turns per
    planner round)."""
    return PlannerExecutorAgent(setup.models, Limits.of(setup),
                                max_turns=int(setup.options.get("max_turns", 120)),
                                seed=setup.seed, on_event=setup.on_event)


class PlannerExecutorAgent:
    """Router, chatbot, planner-executor and goal completion critic over one robot.

    Args:
        models: how the modules reach their models (``router``, ``chatbot``, ``planner``,
            ``critic`` and the tools' ``detector``).
        limits: primitives before ``act`` answers ``BLOCKED``, planner invocations after
            the first (the critic's ``continue``s) and the episode's wall time (past it
            ``act`` answers ``BLOCKED`` and no further round starts).
        max_turns: model turns per planner invocation.
        seed: grasp sampling.
        on_event: receives each decision as it happens.
    """

    def __init__(self, models: ModuleContext, limits: Limits | None = None, *,
                 max_turns: int = 120, seed: int = 0,
                 on_event: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.models = models
        self.limits = limits or Limits(max_replans=2)
        self.max_turns = max_turns
        self.seed = seed
        self._on_event = on_event

    def run(self, robot: RobotIO, instruction: str, context: TaskContext) -> AgentReport:
        """Route ``instruction`` and carry it out or answer it; never raises for agent
        failures (they end up in the report)."""
        poll: Callable[[], list[str]] = getattr(robot, "poll_events", list)
        wait: Callable[[float], None] = getattr(robot, "wait", lambda _seconds: None)
        self.state = PlannerState(self.models, rng=np.random.default_rng(self.seed),
                                  poll_events=poll, wait=wait)
        self.tools_context = PlannerToolContext(
            io=robot, instruction=instruction, max_actions=self.limits.max_actions,
            max_wall_s=self.limits.max_wall_s, on_event=self._on_event, planner=self.state)
        self.episode: Episode = self.tools_context.episode
        #: (tool calls made before, text) of each closing text of the planner.
        self._said: list[tuple[int, str]] = []
        with self.episode.guard():
            try:
                route = self._ask("router", ROUTER_SCHEMA, utterance=instruction)["route"]
                self.episode.event("route", route=route)
                if route == "conversational":
                    self._chat(instruction)
                else:
                    self._plan_and_act(instruction)
            except ModuleFailedError as exc:
                self.episode.fail_first(exc.module, str(exc))
        self.episode.event("metrics", event_checks=self.state.event_checks,
                           stale_places=self.state.stale_places, spoken=self.state.spoken,
                           reflections=len(self.state.reflections),
                           substantive_actions=self.state.substantive)
        return self.episode.report

    def _ask(self, module: str, schema: Mapping[str, Any], images: Sequence[ModelImage] = (),
             **fields: Any) -> dict[str, Any]:
        return ask_json(self.models, PACKAGE, module, images, schema, fields, **fields)

    def _chat(self, utterance: str) -> None:
        """Perceive the scene (no arm motion), then let the chatbot answer from the snapshot
        and the shoulder camera's image."""
        seen = PlannerTools(self.tools_context).perceive_scene()
        self.episode.event("perceive", ok=seen.ok, message=seen.message[:300])
        image = camera_image(self.episode.obs, "shoulder")
        answer = self._ask("chatbot", CHATBOT_SCHEMA, (image,), utterance=utterance,
                           snapshot=self.state.snapshot.render())["answer"]
        self.state.spoken.append(str(answer))
        self.episode.report.believes_done = True
        self.episode.event("chatbot", answer=answer)

    def _plan_and_act(self, instruction: str) -> None:
        tools = build_tool_set("planner", self.tools_context)
        prompt = render_prompt(PACKAGE, "planner", actions=action_catalogue(),
                               instruction=instruction)
        messages: list[Mapping[str, Any]] = []
        verbal_rounds = 0

        def execute(call: ToolCall) -> tuple[str, Mapping[str, Any]]:
            result = self.tools_context.call(tools, call.name, call.arguments)
            self.episode.event("tool", tool=call.name, arguments=dict(call.arguments),
                               code=result.code.value, message=result.message[:300])
            return result.render(), result.to_dict()

        max_rounds = self.limits.max_replans + 1
        for round_index in range(1, max_rounds + 1):
            self.episode.check_time()
            before = self.state.substantive
            query = ModelQuery("planner", "planner", prompt, (), {},
                               {"instruction": instruction}, tools=tuple(tools.definitions()),
                               messages=tuple(messages))
            conversation = self.models.converse(query, execute, max_turns=self.max_turns)
            messages = list(conversation.messages)
            if conversation.final_text:
                messages.append({"role": "assistant", "content": conversation.final_text})
                self._said.append((len(self.tools_context.log.calls), conversation.final_text))
            acted = self.state.substantive - before
            verbal_rounds += int(acted == 0)
            self.episode.event("planner_round", round=round_index, stop=conversation.stop,
                               substantive_actions=acted, text=conversation.final_text[:300])
            if conversation.stop == "model_error":
                self.episode.fail_first("planner", conversation.error or "the planner failed")
                return
            verdict = self._ask("critic", CRITIC_SCHEMA, goal=instruction, rounds=round_index,
                                round_actions=acted, log=self._log_text(),
                                snapshot=self.state.snapshot.render())
            self.episode.report.goal_checked = True
            self.episode.event("critic", verdict=verdict["verdict"],
                               reason=verdict.get("reason", ""), verbal_rounds=verbal_rounds)
            if verdict["verdict"] == "achieved":
                self.episode.report.believes_done = True
                return
            if verdict["verdict"] == "best_effort_stop":
                self.episode.fail_first("execution",
                                        f"best-effort stop: {verdict.get('reason', '')}")
                return
            if round_index < max_rounds:
                self.episode.report.replans += 1
                messages.append({"role": "user", "content": "The goal completion critic says "
                                 f"continue: {verdict.get('reason', '')}. Carry on with the "
                                 "instruction using your tools."})
        self.episode.fail_first("limits", f"the critic still asked to continue after "
                                f"{max_rounds} planner rounds")

    def _log_text(self) -> str:
        """The execution log for the critic: every tool call with its result and what the
        planner said when it stopped, latest last."""
        calls = self.tools_context.log.calls
        lines = []
        for index in range(len(calls) + 1):
            if index:
                call = calls[index - 1]
                arguments = ", ".join(f"{k}={v}" for k, v in call.arguments.items())
                lines.append(f"{index}. {call.tool}({arguments}) -> "
                             f"{call.result.render()[:RESULT_CHARS]}")
            lines += [f"planner said: {text[:RESULT_CHARS]}" for after, text in self._said
                      if after == index]
        return "\n".join(lines[-LOG_LINES:]) or "(no tool calls)"
