"""Tool registries: typed functions exposed as tools, validated calls, named tool sets.

A :class:`ToolRegistry` holds the tools one agent (or one MCP server) exposes. Each tool is a
typed, documented function returning a :class:`~agentic_env.agents.skills.result.SkillResult`;
its schema comes from :func:`~agentic_env.agents.tools.schema.tool_spec`. :meth:`ToolRegistry.call`
never raises into the agent loop: an unknown tool or bad arguments come back as ``BAD_ARGS``
before the function runs (so nothing moves), and an error inside a tool comes back as a
result too.

Named tool sets (``--tools NAME``) are built by factories registered with
:func:`register_tool_set`; a factory takes the episode's
:class:`~agentic_env.agents.tools.robot.ToolContext` and returns the set's functions. The
``primitives`` set is registered by :mod:`agentic_env.agents.tools.primitives`; the ALRM and
planner-executor sets register theirs the same way over the skill layer.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import logging
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentic_env.agents.skills.result import SkillCode, SkillResult, fail
from agentic_env.agents.tools.schema import ToolSpec, tool_spec, validate_arguments
from agentic_env.errors import AgenticEnvError, InvalidConfigError
from agentic_env.text import excerpt, safe_text

if TYPE_CHECKING:
    from agentic_env.agents.tools.robot import ToolContext

logger = logging.getLogger(__name__)
#: Longest message of a failed call, characters (a tool's error may quote what it was given).
MESSAGE_CHARS = 1_000

ToolFunction = Callable[..., SkillResult]
#: Builds a tool set's functions for one episode.
ToolSetFactory = Callable[["ToolContext"], Sequence[ToolFunction]]


@dataclass(frozen=True)
class Tool:
    """One registered tool: its spec and the function that runs it."""

    spec: ToolSpec
    function: ToolFunction

    @property
    def name(self) -> str:
        """The tool's name."""
        return self.spec.name


def _enum_converters(function: ToolFunction) -> dict[str, type[enum.Enum]]:
    hints = typing.get_type_hints(function)
    return {name: hint for name, hint in hints.items()
            if inspect.isclass(hint) and issubclass(hint, enum.Enum)}


class ToolRegistry:
    """The tools one agent exposes, by name, in registration order.

    Args:
        functions: typed, documented functions returning a ``SkillResult``.

    Raises:
        InvalidConfigError: two tools share a name or a function's documentation is
            incomplete (see :func:`~agentic_env.agents.tools.schema.tool_spec`).
    """

    def __init__(self, functions: Iterable[ToolFunction] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._enums: dict[str, dict[str, type[enum.Enum]]] = {}
        for function in functions:
            self.register(function)

    def register(self, function: ToolFunction, name: str | None = None) -> Tool:
        """Add ``function`` as a tool (named ``name`` or its own name) and return it."""
        spec = tool_spec(function, name)
        if spec.name in self._tools:
            raise InvalidConfigError(f"tool {spec.name!r} is registered twice")
        tool = Tool(spec, function)
        self._tools[spec.name] = tool
        self._enums[spec.name] = _enum_converters(function)
        return tool

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        """Tool names in registration order."""
        return list(self._tools)

    def get(self, name: str) -> Tool:
        """The tool called ``name``.

        Raises:
            InvalidConfigError: no such tool; the message lists the valid names.
        """
        if name not in self._tools:
            raise InvalidConfigError(f"unknown tool {name!r}; valid: {', '.join(self._tools)}")
        return self._tools[name]

    def specs(self) -> list[ToolSpec]:
        """Every tool's spec."""
        return [tool.spec for tool in self._tools.values()]

    def definitions(self) -> list[dict[str, Any]]:
        """Every tool in the OpenAI / litellm function-calling format (``tools=``)."""
        return [tool.spec.definition() for tool in self._tools.values()]

    def call(self, name: str, arguments: Mapping[str, Any] | Any) -> SkillResult:
        """Validate ``arguments`` and run the tool; never raises.

        Returns:
            ``BAD_ARGS`` naming what was wrong and the valid names, values or ranges when
            the tool is unknown or the arguments do not fit its schema (the function is not
            called); the tool's own result otherwise. A package error raised by a tool comes
            back as ``BLOCKED`` with its message, any other exception as ``BLOCKED`` naming
            it (and is logged with its traceback). A failure's message (a tool's own
            failure too) is capped at :data:`MESSAGE_CHARS`, so it can quote at most a part
            of what was sent.
        """
        if not isinstance(name, str) or name not in self._tools:
            return fail(SkillCode.BAD_ARGS, f"there is no tool {excerpt(name, 60)}; valid "
                        f"tools: {', '.join(self._tools)}", tool=safe_text(name, 60))
        tool = self._tools[name]
        try:
            values, problems = validate_arguments(tool.spec, arguments)
        except Exception as error:  # validation is total; this guards the episode anyway
            logger.exception("validating the arguments of %s raised", name)
            values, problems = {}, [f"the arguments could not be checked "
                                    f"({type(error).__name__})"]
        if problems:
            return fail(SkillCode.BAD_ARGS, _capped(f"{name} was not run: "
                                                    + "; ".join(problems)), tool=name)
        for key, kind in self._enums[name].items():
            values[key] = kind(values[key])
        try:
            result = tool.function(**values)
        except AgenticEnvError as error:
            logger.info("tool %s failed: %s", name, _capped(error))
            return fail(SkillCode.BLOCKED, _capped(f"{name} failed: {error}"), tool=name)
        except Exception as error:  # a bug in a tool must not end the agent's episode
            logger.exception("tool %s raised", name)
            return fail(SkillCode.BLOCKED, _capped(f"{name} failed with an internal error "
                                                   f"({type(error).__name__}: {error})"),
                        tool=name)
        if result.ok or len(result.message) <= MESSAGE_CHARS:
            return result
        return dataclasses.replace(result, message=_capped(result.message))


def _capped(message: object) -> str:
    return safe_text(message, MESSAGE_CHARS, controls=True)


_TOOL_SETS: dict[str, ToolSetFactory] = {}


def register_tool_set(name: str, factory: ToolSetFactory) -> None:
    """Make ``--tools name`` build its tools with ``factory``.

    Raises:
        InvalidConfigError: ``name`` is already registered (or is ``all``).
    """
    if name in _TOOL_SETS or name == "all":
        raise InvalidConfigError(f"tool set {name!r} is already registered")
    _TOOL_SETS[name] = factory


#: The tool sets that ship with the project and the module that registers each.
BUILTIN_TOOL_SETS: dict[str, str] = {
    "primitives": "agentic_env.agents.tools.primitives",
    "alrm": "agentic_env.agents.alrm.tools",
    "planner": "agentic_env.agents.planner_executor.tools",
}


def tool_set_names() -> list[str]:
    """Registered tool-set names: the built-in ones (:data:`BUILTIN_TOOL_SETS`, in that
    order) first, then any a user registered. ``all`` is accepted too: the union of every
    set, where the earlier set wins a name clash (``pick`` is the primitives set's)."""
    for module in BUILTIN_TOOL_SETS.values():
        importlib.import_module(module)
    builtin = [name for name in BUILTIN_TOOL_SETS if name in _TOOL_SETS]
    return builtin + [name for name in _TOOL_SETS if name not in BUILTIN_TOOL_SETS]


def build_tool_set(name: str, context: ToolContext) -> ToolRegistry:
    """The registry of tool set ``name`` (or ``all``: the union, by name) for one episode.

    Raises:
        InvalidConfigError: unknown name; the message lists the valid ones.
    """
    names = tool_set_names()
    if name != "all" and name not in names:
        raise InvalidConfigError(f"unknown tool set {name!r}; valid: {', '.join(names)}, all")
    registry = ToolRegistry()
    for set_name in names if name == "all" else [name]:
        for function in _TOOL_SETS[set_name](context):
            if function.__name__ not in registry:
                registry.register(function)
    return registry
