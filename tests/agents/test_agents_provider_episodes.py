"""Whole episodes through the real litellm path, answered in a mix of provider shapes.

Each agent runs a sorting trial with every module asking a "Gemini" model served by a local
OpenAI-compatible server. The server answers each request with the perfect sim-oracle's
answer to the query being asked (the agent's backend asks the oracle, then sends the query
through litellm), wrapped in the next shape of a cycle (plain, fenced, in prose, after
reasoning, as a tool call), with a refusal or an answer cut off at the token limit now and
then (the agent re-asks), detections written as Gemini writes them (``[y, x]``, 0-1000) and
tool calls sent natively. The episode must end as the oracle's own does: solved.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from support.chat_server import Step, tool_call

from agentic_env.agents.base import AgentSetup, TaskContext, make_agent
from agentic_env.agents.models.base import Completion, ModelQuery
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.models.litellm_backend import LiteLLMBackend
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.oracle import SimOracle
from agentic_env.pddl.planning import load_domain

pytestmark = pytest.mark.filterwarnings("ignore:Item .*ReadOnly:UserWarning")

#: The served model's name: the agents ask it in Gemini's coordinate format.
MODEL = "openai/gemini-2.5-flash"
#: How successive answers are wrapped (a tool call's arguments only where no tools were sent).
WRAPPINGS = ("plain", "fenced", "prose", "reasoning", "tool_call")
#: Every this many answers, a refusal; every ``CUT_EVERY``-th, an answer cut off.
REFUSE_EVERY, CUT_EVERY = 7, 5


def as_gemini(answer: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """A pixel detection answer written as Gemini writes it (the oracle's pixels stated by
    no field)."""
    height, width = (float(v) for v in fields["image_size"])

    def yx(values: list[float] | None) -> list[float] | None:
        if values is None:
            return None
        pairs = [(values[i + 1] * 1000 / height, values[i] * 1000 / width)
                 for i in range(0, len(values), 2)]
        return [v for pair in pairs for v in pair]

    converted = {k: v for k, v in answer.items() if k != "coordinates"}
    return {**converted, "point": yx(answer.get("point")), "box": yx(answer.get("box"))}


class ServedOracle:
    """The agents' backend, and the server's answers: each query goes through the real
    litellm backend (``backend``, set once the server runs) to the local server, which
    answers with what the sim-oracle answered to it (asked here, on the agent's thread: the
    oracle renders with the env's GL context) in the next shape."""

    def __init__(self, oracle: SimOracle) -> None:
        self.name = self.model = MODEL
        self.oracle = oracle
        self.backend: LiteLLMBackend | None = None
        self.answered = 0
        self.faulted = False
        self.shapes: list[str] = []
        self._asked: tuple[ModelQuery, Completion] | None = None

    def complete(self, query: ModelQuery) -> Completion:
        assert self.backend is not None
        self._asked = query, self.oracle.complete(query)
        return self.backend.complete(query)

    def __call__(self, body: dict[str, Any]) -> Step:
        assert self._asked is not None
        query, completion = self._asked
        self.answered += 1
        fault = "" if self.faulted else (
            "cut" if self.answered % CUT_EVERY == 0 else
            "refusal" if self.answered % REFUSE_EVERY == 0 and not body.get("tools") else "")
        self.faulted = bool(fault)
        if fault:
            self.shapes.append(fault)
            if fault == "refusal":
                return ("ok", {"refusal": "I can't help with that."})
            return ("ok", {"content": (completion.text or "{\"tool_calls\": [")[:12],
                           "finish_reason": "length"})
        if completion.tool_calls:
            self.shapes.append("native")
            return ("ok", {"tool_calls": [tool_call(c.name, dict(c.arguments), c.id)
                                          for c in completion.tool_calls]})
        try:
            answer = json.loads(completion.text)
        except ValueError:
            self.shapes.append("text")
            return ("ok", completion.text)
        if query.module in ("detector", "localizer") and answer.get("point") is not None:
            answer = as_gemini(answer, dict(query.fields))
        wrapping = WRAPPINGS[sum(s in WRAPPINGS for s in self.shapes) % len(WRAPPINGS)]
        if wrapping == "tool_call" and body.get("tools"):
            wrapping = "plain"
        self.shapes.append(wrapping)
        text = json.dumps(answer)
        return ("ok", {
            "plain": text,
            "fenced": f"```json\n{json.dumps(answer, indent=1)}\n```",
            "prose": f"Looking at the scene, here is my answer: {text} I hope it helps.",
            "reasoning": f'<think>First guess: {{"draft": 1}}; check again.</think>{text}',
        }.get(wrapping) or {"tool_calls": [tool_call(f"{query.module}_answer", answer, "c")]})


@pytest.fixture
def served(chat_server: Any) -> Iterator[Any]:
    """``run(agent, seed)``: a sorting episode of ``agent`` against the served oracle; the
    env's evaluation, the agent's report and the shapes served."""
    envs: list[tuple[SimEnv, SimOracle]] = []

    def run(agent: str, seed: int) -> tuple[bool, Any, list[str]]:
        env = SimEnv("sorting", realism="ideal")
        _, info = env.reset(seed=seed)
        oracle = SimOracle(env)
        envs.append((env, oracle))
        answers = ServedOracle(oracle)
        answers.backend = chat_server(answers).backend(MODEL, max_retries=0,
                                                       tool_calling="native")
        built = make_agent(agent, AgentSetup(ModuleContext(ModelRouter(answers)), seed=seed))
        report = built.run(EnvRobotIO(env), info["instruction"],
                           TaskContext(load_domain(env.task.domain)))
        return env.task.evaluate(env.scene_state).success, report, answers.shapes

    yield run
    for env, oracle in envs:
        oracle.close()
        env.close()


@pytest.mark.parametrize(("agent", "seed"), [("agenticlab", 0), ("mallvi", 5001), ("alrm", 3),
                                           ("planner-executor", 5000)])
def test_an_episode_through_mixed_provider_shapes_ends_as_the_oracles(
        served: Any, agent: str, seed: int) -> None:
    success, report, shapes = served(agent, seed)
    assert success, (report.failure, report.failure_detail)
    assert {"cut", "refusal", *WRAPPINGS} <= set(shapes)
    assert np.mean([s in ("cut", "refusal") for s in shapes]) > 0.1
