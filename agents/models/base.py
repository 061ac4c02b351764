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

#: Module names of the AgenticLab pipeline and ALRM's trace judge (also the keys of
#: per-module model maps).
MODULES: tuple[str, ...] = ("parser", "checker", "detector", "grasp", "goal", "judge")


class ModelError(AgenticEnvError, RuntimeError):
    """A model call failed and the bounded retries are used up."""


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
    """

    module: str
    template: str
    prompt: str
    images: tuple[ModelImage, ...] = ()
    schema: Mapping[str, Any] = field(default_factory=dict)
    fields: Mapping[str, Any] = field(default_factory=dict)


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
    """A backend's raw answer: the text exactly as the model produced it, and its usage."""

    text: str
    usage: Usage


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
    """

    parsed: dict[str, Any]
    raw_text: str
    usage: Usage
    model: str
    attempts: int = 1
    errors: tuple[str, ...] = ()


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
