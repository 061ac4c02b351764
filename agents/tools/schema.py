"""Typed Python functions to JSON-schema tool definitions, and argument validation.

A tool's name, description and parameters all come from the function itself, so the code,
the schema a model sees and the docs never drift:

* the first docstring paragraph is the description; the ``Args:`` section describes each
  parameter, and ``in [LOW, HIGH]`` in a parameter's description becomes its
  ``minimum`` / ``maximum``;
* type hints give the JSON types: ``float`` (number), ``int`` (integer), ``bool``, ``str``,
  ``Literal[...]`` and :class:`enum.Enum` subclasses (an ``enum``), ``list[T]`` (array), and
  ``T | None`` (may be null);
* parameters without a default are required.

:func:`validate_arguments` checks a call's arguments against the schema before anything runs
and lists every problem together with the valid names, values or range. It is total: whatever
a client sends (huge integers, deep nesting, odd keys) comes back as problems, never an
exception, and a problem quotes at most a short :func:`~agentic_env.text.excerpt` of the
value.
"""

from __future__ import annotations

import enum
import inspect
import math
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentic_env.errors import InvalidConfigError
from agentic_env.text import excerpt

_RANGE = re.compile(r"\bin \[\s*(-?[\d.]+(?:e-?\d+)?)\s*,\s*(-?[\d.]+(?:e-?\d+)?)\s*\]")
_ARG_LINE = re.compile(r"^(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")
_SECTIONS = ("Args:", "Returns:", "Raises:", "Example:", "Examples:", "Note:", "Yields:")


@dataclass(frozen=True)
class ToolSpec:
    """A tool as a model sees it.

    Attributes:
        name: the function name.
        description: the docstring's first paragraph.
        parameters: JSON schema of the arguments (an ``object`` with ``properties`` and
            ``required``; ``additionalProperties`` is false).
    """

    name: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=dict)

    def definition(self) -> dict[str, Any]:
        """The OpenAI / litellm function-calling definition of the tool."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description,
            "parameters": dict(self.parameters)}}


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(first paragraph joined on one line, ``{parameter: description}`` of ``Args:``)."""
    text = inspect.cleandoc(doc or "")
    summary = " ".join(text.split("\n\n", 1)[0].split()) if text else ""
    args: dict[str, str] = {}
    current: str | None = None
    in_args = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in _SECTIONS:
            in_args = stripped == "Args:"
            current = None
            continue
        if not in_args or not stripped:
            continue
        match = _ARG_LINE.match(stripped)
        if match and line.startswith("    ") and not line.startswith("        "):
            current = match.group(1)
            args[current] = match.group(2)
        elif current is not None:
            args[current] += " " + stripped
    return summary, args


def _schema_of(hint: Any, where: str) -> dict[str, Any]:
    """JSON schema of a type hint (the subset in the module docstring)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(members) != 1:
            raise InvalidConfigError(f"{where}: only 'T | None' unions are supported")
        schema = _schema_of(members[0], where)
        schema["type"] = [schema["type"], "null"]
        return schema
    if origin is typing.Literal:
        values = list(typing.get_args(hint))
        kind = {str: "string", int: "integer", float: "number", bool: "boolean"}
        return {"type": kind[type(values[0])], "enum": values}
    if inspect.isclass(hint) and issubclass(hint, enum.Enum):
        values = [member.value for member in hint]
        return {"type": "string" if isinstance(values[0], str) else "integer", "enum": values}
    if origin in (list, tuple) or hint in (list, tuple):
        items = typing.get_args(hint)
        schema: dict[str, Any] = {"type": "array"}
        if items:
            schema["items"] = _schema_of(items[0], where)
        return schema
    simple = {bool: "boolean", int: "integer", float: "number", str: "string"}
    if hint in simple:
        return {"type": simple[hint]}
    raise InvalidConfigError(f"{where}: type {hint!r} has no JSON-schema mapping")


def tool_spec(function: Callable[..., Any], name: str | None = None) -> ToolSpec:
    """The :class:`ToolSpec` of a typed, documented function (rules in the module docstring).

    Raises:
        InvalidConfigError: a parameter has no type hint or no ``Args:`` entry, or a type has
            no JSON-schema mapping (a tool's documentation must be complete).
    """
    tool_name = name or function.__name__
    summary, documented = parse_docstring(function.__doc__)
    if not summary:
        raise InvalidConfigError(f"tool {tool_name!r} needs a docstring")
    hints = typing.get_type_hints(function)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter in inspect.signature(function).parameters.values():
        if parameter.name == "self":
            continue
        where = f"tool {tool_name!r}, parameter {parameter.name!r}"
        if parameter.name not in hints or parameter.name not in documented:
            raise InvalidConfigError(f"{where} needs a type hint and an 'Args:' entry")
        schema = _schema_of(hints[parameter.name], where)
        description = documented[parameter.name]
        schema["description"] = description
        bounds = _RANGE.search(description)
        if bounds:
            schema["minimum"], schema["maximum"] = float(bounds.group(1)), float(bounds.group(2))
        if parameter.default is inspect.Parameter.empty:
            required.append(parameter.name)
        else:
            default = parameter.default
            schema["default"] = default.value if isinstance(default, enum.Enum) else default
        properties[parameter.name] = schema
    return ToolSpec(tool_name, summary, {"type": "object", "properties": properties,
                                         "required": required, "additionalProperties": False})


def _check(name: str, value: Any, schema: Mapping[str, Any]) -> tuple[Any, str | None]:
    """(the value converted to its Python type, the problem or ``None``)."""
    kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if value is None:
        return (None, None) if "null" in kinds else (None, f"{name} must not be null")
    kind = kinds[0]
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return value, f"{name} must be a number, got {excerpt(value)}"
        if isinstance(value, int) and value.bit_length() > 1000:  # float() would overflow
            return value, f"{name} must be a finite number, got {excerpt(value)}"
        value = float(value)
        if not math.isfinite(value):
            return value, f"{name} must be finite, got {value!r}"
    elif kind == "integer":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            return value, f"{name} must be an integer, got {excerpt(value)}"
    elif kind == "boolean" and not isinstance(value, bool):
        return value, f"{name} must be true or false, got {excerpt(value)}"
    elif kind == "string" and not isinstance(value, str):
        return value, f"{name} must be a string, got {excerpt(value)}"
    elif kind == "array":
        if not isinstance(value, list | tuple):
            return value, f"{name} must be an array, got {excerpt(value)}"
        if "items" not in schema:
            return list(value), None
        checked = []
        for i, item in enumerate(value):  # up to the first bad item
            checked.append(_check(f"{name}[{i}]", item, schema["items"]))
            if checked[-1][1] is not None:
                return value, checked[-1][1]
        return [item for item, _ in checked], None
    if "enum" in schema and not _member(value, schema["enum"]):
        valid = ", ".join(repr(v) for v in schema["enum"])
        return value, f"{name}={excerpt(value)} is not one of {valid}"
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None and not low <= value <= high:
        return value, f"{name}={excerpt(value)} is out of range [{low:g}, {high:g}]"
    return value, None


def _member(value: Any, allowed: list[Any]) -> bool:
    """``value in allowed`` for JSON values (no unhashable or cross-type surprises)."""
    return any(type(value) is type(option) and value == option for option in allowed)


def validate_arguments(spec: ToolSpec, arguments: Any) -> tuple[dict[str, Any], list[str]]:
    """Check a call's arguments against ``spec``.

    Returns:
        (the arguments converted to their Python types with defaults filled in, every
        problem found); the call may go ahead only when the list is empty.
    """
    if not isinstance(arguments, Mapping):
        return {}, [f"arguments must be a JSON object, got {type(arguments).__name__}"]
    properties = spec.parameters["properties"]
    problems: list[str] = []
    unknown = sorted(key if isinstance(key, str) and len(key) <= 40 else excerpt(key, 40)
                     for key in arguments if key not in properties)
    if unknown:
        valid = ", ".join(properties) or "none"
        listed = ", ".join(unknown[:10]) + (f" and {len(unknown) - 10} more"
                                            if len(unknown) > 10 else "")
        problems.append(f"unknown argument(s) {listed}; valid: {valid}")
    values: dict[str, Any] = {}
    for name, schema in properties.items():
        if name not in arguments:
            if name in spec.parameters["required"]:
                problems.append(f"missing required argument {name} ({schema['description']})")
            else:
                values[name] = schema["default"]
            continue
        values[name], problem = _check(name, arguments[name], schema)
        if problem:
            problems.append(problem)
    return values, problems
