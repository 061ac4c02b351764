"""Parse a model's raw text into a JSON object and check it against the query's schema.

The validator covers the JSON-schema subset the prompts use: ``type`` (a name or a list of
names: ``object``, ``array``, ``string``, ``number``, ``integer``, ``boolean``, ``null``),
``properties``, ``required``, ``items``, ``enum``, ``minItems``/``maxItems`` and
``minimum``/``maximum``. Other keywords (``description``, ``title``...) are ignored. Problems
come back as readable lines (``$.objects[2].name: expected string, got integer``) so they can
be shown to the model in a correction note and stored in traces.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from agentic_env.agents.models.base import MalformedResponseError
from agentic_env.agents.models.coordinates import read_point_markup
from agentic_env.errors import InvalidConfigError

#: JSON type names the validator knows.
JSON_TYPES: tuple[str, ...] = ("object", "array", "string", "number", "integer", "boolean", "null")

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
#: A reasoning block some models write before their answer (``<think>...</think>``).
_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_SNIPPET_CHARS = 200


def _type_of(value: Any) -> str:
    """JSON type name of a decoded JSON value (``integer`` for whole numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _matches_type(value: Any, name: str) -> bool:
    if name not in JSON_TYPES:
        raise InvalidConfigError(
            f"schema type {name!r} is not supported; use one of {', '.join(JSON_TYPES)}"
        )
    actual = _type_of(value)
    return actual == name or (name == "number" and actual == "integer")


def validate(value: Any, schema: Mapping[str, Any], path: str = "$") -> list[str]:
    """Check a decoded JSON value against a schema of the supported subset.

    Args:
        value: the decoded JSON (dicts, lists, str, int, float, bool, None).
        schema: the schema; an empty mapping accepts anything.
        path: JSONPath-like location of ``value``, used as the prefix of every problem.

    Returns:
        One line per problem, ``"<path>: <what was expected>"``; empty when ``value`` is valid.

    Raises:
        InvalidConfigError: the schema names a type outside :data:`JSON_TYPES`.
    """
    problems: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        names = [expected] if isinstance(expected, str) else list(expected)
        if not any(_matches_type(value, name) for name in names):
            wanted = " or ".join(names)
            return [f"{path}: expected {wanted}, got {_type_of(value)}"]

    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(json.dumps(option) for option in schema["enum"])
        problems.append(f"{path}: expected one of {allowed}, got {json.dumps(value)}")

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{path}: expected at least {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{path}: expected at most {schema['maximum']}, got {value}")

    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                problems.append(f"{path}: missing required property {key!r}")
        for key, subschema in schema.get("properties", {}).items():
            if key in value:
                problems.extend(validate(value[key], subschema, f"{path}.{key}"))

    if isinstance(value, list):
        count = len(value)
        if "minItems" in schema and count < schema["minItems"]:
            problems.append(f"{path}: expected at least {schema['minItems']} items, got {count}")
        if "maxItems" in schema and count > schema["maxItems"]:
            problems.append(f"{path}: expected at most {schema['maxItems']} items, got {count}")
        if "items" in schema:
            for index, item in enumerate(value):
                problems.extend(validate(item, schema["items"], f"{path}[{index}]"))
    return problems


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= _SNIPPET_CHARS:
        return repr(flat)
    return repr(flat[:_SNIPPET_CHARS]) + f" ... ({len(text)} characters)"


def _first_object(text: str) -> dict[str, Any] | None:
    """The first JSON object that decodes starting at some ``{`` of ``text``, else ``None``."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def extract_json(text: str) -> dict[str, Any]:
    """Find the JSON object in a model's answer.

    Reasoning blocks (``<think>...</think>``, ``<thinking>``, ``<reasoning>``) are dropped
    first, so a draft inside them is never taken for the answer. Then accepts, in this
    order: the whole text as one JSON object; the first fenced block (three backticks, with
    ``json`` or bare) holding an object; the first decodable object embedded in
    surrounding prose; Molmo's point markup, read as a pointing answer
    (:func:`~agentic_env.agents.models.coordinates.read_point_markup`).

    Raises:
        MalformedResponseError: no JSON object can be found; the message says what the text
            looked like and why it was refused.
    """
    text = _REASONING.sub("", text)
    stripped = text.strip()
    if not stripped:
        raise MalformedResponseError("the answer is empty; expected one JSON object")
    try:
        whole = json.loads(stripped)
    except json.JSONDecodeError as exc:
        whole_error: str | None = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    else:
        if isinstance(whole, dict):
            return whole
        whole_error = f"it is a JSON {_type_of(whole)}, not an object"
    for block in _FENCE.findall(text):
        found = _first_object(block)
        if found is not None:
            return found
    found = _first_object(text) or read_point_markup(text)
    if found is not None:
        return found
    raise MalformedResponseError(
        f"no JSON object found in the answer ({whole_error}); expected one JSON object, "
        f"optionally inside ```json fences; the answer was {_snippet(text)}"
    )
