"""What a tool call returns: a short status code, one sentence for the model, data for the trace.

The codes are those of the skill layer's ``SkillResult`` (see DESIGN.md, "Agents on one skill
layer"); this module is the one place to unify them with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

#: Longest rendering of a result's data appended to the model's text, characters.
MAX_DATA_CHARS = 600


class ToolCode(StrEnum):
    """Outcome of a tool call, one word an LLM can act on."""

    OK = "OK"
    NOT_FOUND = "NOT_FOUND"
    UNREACHABLE = "UNREACHABLE"
    GRASP_FAILED = "GRASP_FAILED"
    COLLISION = "COLLISION"
    BLOCKED = "BLOCKED"
    ESTOP = "ESTOP"
    BAD_ARGS = "BAD_ARGS"
    TIMEOUT = "TIMEOUT"


@dataclass(frozen=True)
class ToolResult:
    """Result of one tool call.

    Attributes:
        code: the outcome (``OK`` on success).
        message: one sentence for the model (what happened, what to change).
        data: structured, JSON-ready details for the trace and for clients that parse them.
    """

    code: ToolCode
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return self.code is ToolCode.OK

    def render(self) -> str:
        """Short text for the model: ``CODE: message`` plus compact JSON data if any."""
        text = f"{self.code.value}: {self.message}"
        if self.data:
            data = json.dumps(self.data, sort_keys=True, default=str, separators=(",", ":"))
            if len(data) > MAX_DATA_CHARS:
                data = data[:MAX_DATA_CHARS - 3] + "..."
            text += f" {data}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for traces: ``{"ok", "code", "message", "data"}``."""
        return {"ok": self.ok, "code": self.code.value, "message": self.message,
                "data": dict(self.data)}


def ok(message: str, **data: Any) -> ToolResult:
    """An ``OK`` result."""
    return ToolResult(ToolCode.OK, message, data)


def fail(code: ToolCode, message: str, **data: Any) -> ToolResult:
    """A failed result with ``code``."""
    return ToolResult(code, message, data)
