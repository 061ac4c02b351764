"""A per-run budget on model usage: tokens and/or US dollars, shared by every module's calls."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from agentic_env.agents.models.base import BudgetExceededError, Usage
from agentic_env.errors import InvalidConfigError

logger = logging.getLogger(__name__)


def total_usage(usages: Iterable[Usage]) -> Usage:
    """Sum of several exchanges' usage.

    Tokens and latency add up. The cost is the sum of the known costs, or ``None`` when any
    exchange's price is unknown (a partial sum would understate what was spent).
    """
    items = list(usages)
    costs = [usage.cost_usd for usage in items]
    return Usage(
        input_tokens=sum(usage.input_tokens for usage in items),
        output_tokens=sum(usage.output_tokens for usage in items),
        latency_s=sum(usage.latency_s for usage in items),
        cost_usd=None if any(cost is None for cost in costs) else sum(costs, 0.0),
    )


@dataclass(frozen=True)
class BudgetSpent:
    """What a run has spent so far.

    Attributes:
        calls: model exchanges charged (every attempt counts, rejected ones too).
        tokens: input plus output tokens.
        cost_usd: US dollars over the exchanges whose price is known.
        unpriced_calls: exchanges whose price is unknown (not in ``cost_usd``).
    """

    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0


class Budget:
    """Tracks a run's model usage against optional limits; safe to share between threads.

    Args:
        max_tokens: most input plus output tokens the run may use; ``None`` for no limit.
        max_cost_usd: most US dollars the run may spend; ``None`` for no limit. Exchanges
            with an unknown price count as free here (a warning is logged once).

    Raises:
        InvalidConfigError: a limit is negative.
    """

    def __init__(self, max_tokens: int | None = None, max_cost_usd: float | None = None) -> None:
        if max_tokens is not None and max_tokens < 0:
            raise InvalidConfigError(f"max_tokens must be >= 0 or None, got {max_tokens}")
        if max_cost_usd is not None and max_cost_usd < 0:
            raise InvalidConfigError(f"max_cost_usd must be >= 0 or None, got {max_cost_usd}")
        self.max_tokens = max_tokens
        self.max_cost_usd = max_cost_usd
        self._lock = threading.Lock()
        self._spent = BudgetSpent()

    @property
    def spent(self) -> BudgetSpent:
        """Usage charged so far."""
        with self._lock:
            return self._spent

    def exceeded(self) -> str | None:
        """Why the budget is spent (which limit, by how much), or ``None`` while within it."""
        with self._lock:
            return self._reason(self._spent)

    def check(self) -> None:
        """Refuse to start another exchange once a limit has been passed.

        Raises:
            BudgetExceededError: a limit was passed by earlier charges.
        """
        reason = self.exceeded()
        if reason is not None:
            raise BudgetExceededError(reason)

    def charge(self, usage: Usage) -> None:
        """Add one exchange's usage.

        Raises:
            BudgetExceededError: the run is now over a limit; the message names the limit,
                what was spent and by how much it is exceeded.
        """
        with self._lock:
            before = self._spent
            priced = usage.cost_usd is not None
            self._spent = BudgetSpent(
                calls=before.calls + 1,
                tokens=before.tokens + usage.input_tokens + usage.output_tokens,
                cost_usd=before.cost_usd + (usage.cost_usd or 0.0),
                unpriced_calls=before.unpriced_calls + (0 if priced else 1),
            )
            reason = self._reason(self._spent)
            warn_unpriced = self.max_cost_usd is not None and not priced and (
                before.unpriced_calls == 0
            )
        if warn_unpriced:
            logger.warning(
                "a model exchange has no known price; max_cost_usd=%s cannot account for it "
                "(set max_tokens as well to bound such models)",
                self.max_cost_usd,
            )
        if reason is not None:
            raise BudgetExceededError(reason)

    def _reason(self, spent: BudgetSpent) -> str | None:
        if self.max_tokens is not None and spent.tokens > self.max_tokens:
            return (
                f"token budget exceeded: {spent.tokens:,} tokens spent over {spent.calls} "
                f"model calls, limit max_tokens={self.max_tokens:,} "
                f"({spent.tokens - self.max_tokens:,} over); raise max_tokens to go on"
            )
        if self.max_cost_usd is not None and spent.cost_usd > self.max_cost_usd:
            return (
                f"money budget exceeded: ${spent.cost_usd:.4f} spent over {spent.calls} model "
                f"calls, limit max_cost_usd=${self.max_cost_usd:.4f} "
                f"(${spent.cost_usd - self.max_cost_usd:.4f} over); raise max_cost_usd to go on"
            )
        return None
