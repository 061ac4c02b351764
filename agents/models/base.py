"""The one interface every VLM/LLM call goes through.

A call is a :class:`ModelQuery` (the module asking, the rendered prompt, the images and the
JSON schema the answer must satisfy, plus the structured fields the prompt was rendered
from) answered by a :class:`Backend` with raw text and its :class:`Usage`. Parsing and
validation happen once, in :func:`agentic_env.agents.models.ask`, for every backend alike,
so a sim-oracle answer goes through exactly the code a real VLM answer does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agentic_env.errors import AgenticEnvError

#: Module names (also the keys of per-module model maps): the AgenticLab pipeline's, ALRM's
#: trace judge, task planner and task executor, MALLVI's roles, and the planner-executor's
#: router, chatbot, planner and goal completion critic.
MODULES: tuple[str, ...] = ("parser", "checker", "detector", "grasp", "goal", "judge",
                            "task_planner", "task_executor", "decomposer", "descriptor",
                            "localizer", "thinker", "reflector", "single_agent", "router",
                            "chatbot", "planner", "critic")
#: Error kinds the sim-oracle injects into the planner-executor's planner (the paper's failure
#: modes): a verbal-only reply, a skipped or a repeated event check, a place without
#: perceiving the surface first.
PLANNER_ERRORS: tuple[str, ...] = ("verbal", "skip_events", "repeat_events", "blind_place")
#: Error kinds the tool-calling sim-oracle injects into a tool-calling episode (the mistakes
#: real models make): another tool, a bad argument, an early stop, talk without a call, a
#: repeated call.
TOOL_ERRORS: tuple[str, ...] = ("wrong_tool", "bad_argument", "stop_early", "talk", "repeat")


class ModelError(AgenticEnvError, RuntimeError):
    """A model call failed and the bounded retries are used up.

    Attributes:
        usage: what the failed exchange spent where the backend knows it (an emulated call
            that timed out: the virtual seconds of all its attempts and backoffs; a litellm
            call: the seconds it waited; no tokens), booked in the call's record by
            :func:`~agentic_env.agents.models.ask.ask`; ``None``: unknown.
    """

    def __init__(self, *args: object, usage: Usage | None = None) -> None:
        super().__init__(*args)
        self.usage = usage


class MalformedResponseError(ModelError):
    """The model's answer is not JSON or does not match the expected schema."""


class ModelTimeoutError(ModelError):
    """The model did not answer within the configured timeout."""


class MissingAPIKeyError(ModelError):
    """The provider needs an API key; the message names the environment variable to set."""


class BudgetExceededError(ModelError):
    """The run's token or money budget is spent; the message says which limit and by how much."""


@dataclass(frozen=True)
class ModelImage:
    """One image attached to a query.

    Attributes:
        name: what it shows, e.g. ``"shoulder_rgb"`` or ``"grasp_candidate"``.
        pixels: (H, W, 3) uint8 RGB.
    """

    name: str
    pixels: np.ndarray


@dataclass(frozen=True)
class ModelQuery:
    """What a pipeline module asks a model.

    Attributes:
        module: one of :data:`MODULES`.
        template: name of the prompt template file the prompt was rendered from.
        prompt: the rendered text sent to the model.
        images: images sent with the prompt, in order.
        schema: JSON schema (a subset: ``type``, ``properties``, ``required``, ``items``,
            ``enum``) the parsed answer must satisfy.
        fields: the structured values the prompt was rendered from (action, conditions,
            target name, instruction...). Real models only see ``prompt`` and ``images``; the
            privileged sim-oracle answers from these fields and the simulator.
        tools: function-calling tool definitions (OpenAI / litellm format, e.g.
            :meth:`~agentic_env.agents.tools.ToolRegistry.definitions`); empty = a plain
            JSON query. With tools the answer is tool calls or text.
        messages: the conversation after the first user turn (``prompt`` + ``images``), as
            OpenAI-style messages: assistant turns with ``tool_calls``, ``tool`` results,
            further ``user`` turns.
        tool_choice: ``"auto"`` (the model decides), ``"required"`` (it must call a tool) or
            ``"none"``.
    """

    module: str
    template: str
    prompt: str
    images: tuple[ModelImage, ...] = ()
    schema: Mapping[str, Any] = field(default_factory=dict)
    fields: Mapping[str, Any] = field(default_factory=dict)
    tools: tuple[Mapping[str, Any], ...] = ()
    messages: tuple[Mapping[str, Any], ...] = ()
    tool_choice: str = "auto"


@dataclass(frozen=True)
class ToolCall:
    """One tool call a model asked for.

    Attributes:
        id: the call's id (the provider's, or ``call_<n>`` where it gives none); the tool
            result message refers to it.
        name: tool name (not necessarily one that exists: models hallucinate).
        arguments: the parsed arguments; ``{"_raw": text}`` when they were not a JSON object.
    """

    id: str
    name: str
    arguments: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready ``{"id", "name", "arguments"}``."""
        return {"id": self.id, "name": self.name, "arguments": dict(self.arguments)}


#: How a backend got tool calls: the provider's native function calling, a JSON format
#: written into the prompt (providers without function calling), or no tools at all.
TOOL_MODES: tuple[str, ...] = ("native", "json-prompt", "none")


@dataclass(frozen=True)
class Usage:
    """Cost of one model exchange.

    Attributes:
        input_tokens: prompt tokens (0 when unknown).
        output_tokens: completion tokens (0 when unknown).
        latency_s: wall time of the exchange, seconds.
        cost_usd: price in US dollars, ``None`` when the provider's price is unknown.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = None


@dataclass(frozen=True)
class Completion:
    """A backend's raw answer: the text exactly as the model produced it, its usage, the
    tool calls it made (with ``tool_mode`` from :data:`TOOL_MODES`), and whether the model
    was cut off at its output limit (``truncated``: the provider's ``finish_reason`` was
    ``length``), so that the answer may be incomplete."""

    text: str
    usage: Usage
    tool_calls: tuple[ToolCall, ...] = ()
    tool_mode: str = "none"
    truncated: bool = False


@runtime_checkable
class Backend(Protocol):
    """Anything that turns a query into raw text: litellm, the sim-oracle, a replay cassette."""

    name: str

    def complete(self, query: ModelQuery) -> Completion:
        """Answer ``query`` with raw text.

        Raises:
            ModelError: (or a subclass) when no answer can be had after the backend's own
                bounded retries on transport errors and rate limits.
        """
        ...


@dataclass(frozen=True)
class ModelReply:
    """A validated answer.

    Attributes:
        parsed: the JSON answer, validated against the query's schema.
        raw_text: the text of the accepted attempt.
        usage: summed over all attempts.
        model: backend name that answered.
        attempts: how many answers were requested (1 = the first was well-formed).
        errors: why each rejected attempt was rejected.
        tool_calls: the tool calls of the accepted attempt (tool queries only; then
            ``parsed`` holds ``tool_calls``, ``tool_mode`` and ``text`` for traces, plus the
            text's JSON object if it has one).
        tool_mode: how the tool calls were obtained (:data:`TOOL_MODES`).
    """

    parsed: dict[str, Any]
    raw_text: str
    usage: Usage
    model: str
    attempts: int = 1
    errors: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    tool_mode: str = "none"


@dataclass(frozen=True)
class CallRecord:
    """One model call as traces and the results database store it.

    Attributes:
        query: what was asked.
        reply: the validated answer, ``None`` when the call failed.
        error: why the call failed (``None`` on success), e.g. ``"MalformedResponseError: ..."``.
        raw_texts: the raw text of every attempt, accepted or not, in order.
        usage: summed over all attempts (also on failure).
        model: backend name.
    """

    query: ModelQuery
    reply: ModelReply | None
    error: str | None
    raw_texts: tuple[str, ...]
    usage: Usage
    model: str
