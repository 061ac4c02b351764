"""The model layer: one interface for every VLM/LLM call, whatever answers it.

Build backends from ``--model`` / ``--modules`` strings with :func:`build_backends`, then
call :func:`ask` with a :class:`ModelQuery`; it returns a validated :class:`ModelReply`.
A query with ``tools`` is answered with tool calls or text; :func:`run_tool_conversation`
drives a bounded multi-turn tool conversation. litellm is imported only when a litellm
backend is used. The privileged sim-oracle is not here: it reads the simulator, so it lives
on the harness side (:mod:`agentic_env.oracle`), which passes its factory to
:func:`build_backends`.
"""

from agentic_env.agents.models.ask import ask
from agentic_env.agents.models.base import (
    MODULES,
    TOOL_ERRORS,
    Backend,
    BudgetExceededError,
    CallRecord,
    Completion,
    MalformedResponseError,
    MissingAPIKeyError,
    ModelError,
    ModelImage,
    ModelQuery,
    ModelReply,
    ModelTimeoutError,
    ToolCall,
    Usage,
)
from agentic_env.agents.models.budget import Budget, BudgetSpent, total_usage
from agentic_env.agents.models.conversation import (
    ConversationResult,
    ToolTurn,
    run_tool_conversation,
)
from agentic_env.agents.models.litellm_backend import LiteLLMBackend
from agentic_env.agents.models.registry import (
    BackendFactory,
    ModelHandle,
    ModelRouter,
    ModelSpec,
    build_backend,
    build_backends,
    parse_model_spec,
    parse_module_map,
)
from agentic_env.agents.models.replay import RecordingBackend, ReplayBackend, exchange_key
from agentic_env.agents.models.schema import extract_json, validate

__all__ = [
    "MODULES",
    "Backend",
    "BackendFactory",
    "Budget",
    "BudgetExceededError",
    "BudgetSpent",
    "CallRecord",
    "Completion",
    "ConversationResult",
    "LiteLLMBackend",
    "MalformedResponseError",
    "MissingAPIKeyError",
    "ModelError",
    "ModelImage",
    "ModelQuery",
    "ModelHandle",
    "ModelReply",
    "ModelRouter",
    "ModelSpec",
    "ModelTimeoutError",
    "RecordingBackend",
    "ReplayBackend",
    "TOOL_ERRORS",
    "ToolCall",
    "ToolTurn",
    "Usage",
    "ask",
    "build_backend",
    "build_backends",
    "exchange_key",
    "extract_json",
    "parse_model_spec",
    "parse_module_map",
    "run_tool_conversation",
    "total_usage",
    "validate",
]
