"""The robot as tools: typed functions -> JSON-schema tools, validated calls, named tool sets.

Build a tool set for an episode with :func:`build_tool_set` over a :class:`ToolContext`,
pass :meth:`ToolRegistry.definitions` to a model (``tools=``), and run the model's calls with
:meth:`ToolContext.call`, which validates the arguments first and never raises.
"""

from agentic_env.agents.tools.registry import (
    Tool,
    ToolRegistry,
    build_tool_set,
    register_tool_set,
    tool_set_names,
)
from agentic_env.agents.tools.robot import EpisodeLog, LoggedCall, ToolContext
from agentic_env.agents.tools.schema import ToolSpec, tool_spec, validate_arguments

__all__ = [
    "EpisodeLog",
    "LoggedCall",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "ToolSpec",
    "build_tool_set",
    "register_tool_set",
    "tool_set_names",
    "tool_spec",
    "validate_arguments",
]
