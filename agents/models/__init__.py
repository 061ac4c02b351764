"""The model layer: one interface for every VLM/LLM call, whatever answers it.

Build backends from ``--model`` / ``--modules`` strings with :func:`build_backends`, then
call :func:`ask` with a :class:`ModelQuery`; it returns a validated :class:`ModelReply`.
litellm is imported only when a litellm backend is used.
"""

from agentic_env.agents.models.ask import ask
from agentic_env.agents.models.base import (
    MODULES,
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
    Usage,
)
from agentic_env.agents.models.budget import Budget, BudgetSpent, total_usage
from agentic_env.agents.models.litellm_backend import LiteLLMBackend
from agentic_env.agents.models.registry import (
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
    "Budget",
    "BudgetExceededError",
    "BudgetSpent",
    "CallRecord",
    "Completion",
    "LiteLLMBackend",
    "MalformedResponseError",
    "MissingAPIKeyError",
    "ModelError",
    "ModelImage",
    "ModelQuery",
    "ModelReply",
    "ModelRouter",
    "ModelSpec",
    "ModelTimeoutError",
    "RecordingBackend",
    "ReplayBackend",
    "Usage",
    "ask",
    "build_backend",
    "build_backends",
    "exchange_key",
    "extract_json",
    "parse_model_spec",
    "parse_module_map",
    "total_usage",
    "validate",
]
