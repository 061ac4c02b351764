"""How an agent's modules reach their models: a router, the run's budget and a call log."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agentic_env.agents.models.ask import ask
from agentic_env.agents.models.base import (
    BudgetExceededError,
    CallRecord,
    ModelError,
    ModelQuery,
    ModelReply,
)
from agentic_env.agents.models.budget import Budget
from agentic_env.agents.models.conversation import (
    ConversationResult,
    Execute,
    run_tool_conversation,
)
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.errors import AgenticEnvError


@dataclass
class ModuleContext:
    """How modules reach their models.

    Attributes:
        router: module name -> backend.
        budget: the run's token/money budget, or ``None``.
        on_call: receives every call's record (the episode trace).
        retries: re-asks after a malformed answer.
    """

    router: ModelRouter
    budget: Budget | None = None
    on_call: Callable[[CallRecord], None] | None = None
    retries: int = 2

    def ask(self, query: ModelQuery) -> ModelReply:
        """Ask the module's backend (see :func:`agentic_env.agents.models.ask.ask`).

        Raises:
            BudgetExceededError: the run's budget is spent (ends the run).
            ModuleFailedError: the call failed after its bounded retries.
        """
        try:
            return ask(self.router.backend_for(query.module), query, retries=self.retries,
                       budget=self.budget, on_call=self.on_call)
        except BudgetExceededError:
            raise
        except ModelError as exc:
            raise ModuleFailedError(query.module, exc) from exc

    def converse(self, query: ModelQuery, execute: Execute, *, max_turns: int,
                 max_nudges: int = 0) -> ConversationResult:
        """A bounded tool conversation with the module's backend, within the run's budget and
        retries, every call recorded (see
        :func:`~agentic_env.agents.models.conversation.run_tool_conversation`)."""
        return run_tool_conversation(self.router.backend_for(query.module), query, execute,
                                     max_turns=max_turns, max_nudges=max_nudges,
                                     retries=self.retries, budget=self.budget,
                                     on_call=self.on_call)


class ModuleFailedError(AgenticEnvError, RuntimeError):
    """A module's model call failed (malformed answers, timeouts, transport errors) after
    its bounded retries; ``module`` names the module."""

    def __init__(self, module: str, cause: Exception) -> None:
        super().__init__(f"the {module} module failed: {type(cause).__name__}: {cause}")
        self.module = module
