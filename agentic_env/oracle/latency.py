"""An emulated model's latency: each call's seconds drawn from a spread around its module's
mean, with the time-out and re-query of the backend a real model is reached through.

AgenticLab Sec. VI-A: "Gemini Pro exhibits unstable object detection that triggers repeated
re-queries and overthinking". A profile states one mean seconds per call and module (Table
II); a real call's time varies about it, and a call that overruns the client's per-request
time-out is abandoned and sent again. :class:`LatencyModel` draws each attempt's seconds from
a log-normal law whose mean is the module's mean and whose coefficient of variation is
``spread_cv`` (the same for every model: no per-model knob); an attempt longer than
``timeout_s`` costs ``timeout_s`` and is sent again after the backoff, at most ``retries``
more times; a call whose every attempt times out fails with the backend's
:class:`~agentic_env.agents.models.base.ModelTimeoutError`, which carries the seconds it
spent, so they count in the episode's model time like an answered call's. So slow modules
(means near or above the time-out) are re-queried often and sometimes fail, fast ones almost
never. The numbers are the profile's ``[latency]`` table (:mod:`agentic_env.oracle.profile`),
all of them shared defaults. :class:`VirtualClock` stamps every emulated call with its drawn
seconds, the pipeline modules' (:class:`~agentic_env.oracle.emulated.EmulatedModel`) and the
tool-calling turns' (:func:`~agentic_env.oracle.emulated.turn_clock`) alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from agentic_env.agents.models.base import ModelTimeoutError, Usage
from agentic_env.errors import InvalidConfigError

#: The numbers of a profile's ``[latency]`` table.
LATENCY_KEYS: tuple[str, ...] = ("spread_cv", "timeout_s", "retries", "backoff_s")


@dataclass(frozen=True)
class Wait:
    """How long one call took and how it ended.

    Attributes:
        seconds: virtual seconds in all: abandoned attempts, backoff sleeps and the answered
            attempt (when there is one), >= 0.
        timeouts: attempts abandoned at the time-out.
        answered: whether an attempt answered within the time-out.
    """

    seconds: float
    timeouts: int
    answered: bool


@dataclass(frozen=True)
class LatencyModel:
    """Per-call latency law with time-outs (module docstring).

    Attributes:
        spread_cv: coefficient of variation of one attempt's seconds (std / mean, >= 0; 0:
            every attempt takes the mean).
        timeout_s: per-request time-out, seconds (> 0).
        retries: attempts sent again after a time-out (>= 0).
        backoff_s: first sleep before a re-query, seconds; doubles after each.
    """

    spread_cv: float
    timeout_s: float
    retries: int
    backoff_s: float

    def __post_init__(self) -> None:
        if self.spread_cv < 0 or self.timeout_s <= 0 or self.retries < 0 \
                or self.backoff_s < 0:
            raise InvalidConfigError(
                f"latency model {self}: spread_cv >= 0, timeout_s > 0, retries >= 0 and "
                "backoff_s >= 0")

    @classmethod
    def of(cls, numbers: Mapping[str, float]) -> LatencyModel:
        """The model of a profile's ``[latency]`` values (keys :data:`LATENCY_KEYS`)."""
        return cls(float(numbers["spread_cv"]), float(numbers["timeout_s"]),
                   int(round(numbers["retries"])), float(numbers["backoff_s"]))

    def attempt_s(self, mean_s: float, rng: np.random.Generator) -> float:
        """One attempt's seconds: log-normal with mean ``mean_s`` and the model's coefficient
        of variation (``mean_s`` itself when either is 0)."""
        if mean_s <= 0 or self.spread_cv == 0:
            return max(mean_s, 0.0)
        sigma2 = math.log1p(self.spread_cv ** 2)
        return float(rng.lognormal(math.log(mean_s) - sigma2 / 2, math.sqrt(sigma2)))

    def draw(self, mean_s: float, rng: np.random.Generator) -> Wait:
        """One call of a module whose attempts take ``mean_s`` seconds on average: attempts
        until one answers within the time-out or ``retries`` re-queries are spent."""
        spent = 0.0
        for attempt in range(self.retries + 1):
            seconds = self.attempt_s(mean_s, rng)
            if seconds <= self.timeout_s:
                return Wait(spent + seconds, attempt, True)
            spent += self.timeout_s
            if attempt < self.retries:
                spent += self.backoff_s * 2 ** attempt
        return Wait(spent, self.retries + 1, False)


class VirtualClock:
    """One model's calls on virtual time: each call's seconds drawn by a latency law from a
    stream of its own; nothing sleeps.

    Args:
        law: the latency law.
        rng: the stream of the waits (apart from the model's error streams).
        model: the model's name, for the time-out's message.
    """

    def __init__(self, law: LatencyModel, rng: np.random.Generator, model: str) -> None:
        self.law, self.model, self._rng = law, model, rng

    def stamp(self, usage: Usage, module: str) -> Usage:
        """``usage`` of one ``module`` call, its ``latency_s`` the module's mean seconds, with
        the call's seconds drawn by :meth:`LatencyModel.draw` in their place.

        Raises:
            ModelTimeoutError: every attempt overran the time-out; its ``usage`` holds the
                seconds spent (every attempt to the time-out and the backoffs), no tokens.
        """
        wait = self.law.draw(usage.latency_s, self._rng)
        if not wait.answered:
            raise ModelTimeoutError(
                f"{self.model} gave no {module} answer within the {self.law.timeout_s:g} s "
                f"time-out in {wait.timeouts} attempts ({wait.seconds:.0f} s spent)",
                usage=Usage(latency_s=wait.seconds, cost_usd=usage.cost_usd))
        return replace(usage, latency_s=wait.seconds)
