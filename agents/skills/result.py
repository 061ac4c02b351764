"""What every skill returns: a short code, one sentence an LLM can act on, and data."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

#: Longest rendering of a result's data appended to the model's text, characters.
MAX_DATA_CHARS = 600
#: Joins a failure's sentence and the sentence of the retry it led to, when that failed too
#: (:func:`after_retry`): ``"<first failure>; retried <how>: <retry's failure>"``.
RETRY_JOIN = "; retried "


class SkillCode(StrEnum):
    """Outcome of a skill."""

    OK = "OK"
    #: The target was not seen, after every view the skill may take.
    NOT_FOUND = "NOT_FOUND"
    #: No plannable motion reaches the pose (the arm did not move).
    UNREACHABLE = "UNREACHABLE"
    #: No grasp was accepted, or the gripper closed on nothing.
    GRASP_FAILED = "GRASP_FAILED"
    #: The arm or the held object hit something.
    COLLISION = "COLLISION"
    #: The goal is occupied or in the way (no free spot, a blocked place).
    BLOCKED = "BLOCKED"
    #: A safety fault, the e-stop or the operator stopped the robot.
    ESTOP = "ESTOP"
    #: The request itself is invalid.
    BAD_ARGS = "BAD_ARGS"
    #: The motion did not finish in time (e.g. a place that met the table early).
    TIMEOUT = "TIMEOUT"


#: Primitive failure reasons (``info["primitive"]["reason"]``) as skill codes.
_REASON_CODES = {
    "unreachable": SkillCode.UNREACHABLE, "collision": SkillCode.COLLISION,
    "timeout": SkillCode.TIMEOUT, "nothing_grasped": SkillCode.GRASP_FAILED,
    "invalid_parameters": SkillCode.BAD_ARGS, "sim_diverged": SkillCode.COLLISION,
    "safety_fault": SkillCode.ESTOP, "operator_declined": SkillCode.ESTOP,
    "estop": SkillCode.ESTOP,
}


def code_for_reason(reason: str) -> SkillCode:
    """The skill code of a primitive's failure reason (``info["primitive"]["reason"]``);
    an unknown reason counts as ``BAD_ARGS``."""
    return _REASON_CODES.get(reason, SkillCode.BAD_ARGS)


@dataclass(frozen=True)
class SkillResult:
    """Outcome of one skill call.

    Attributes:
        code: what happened (:class:`SkillCode`).
        message: one sentence on it, for a log or an LLM.
        data: the skill's product (a located target, the grasp used...), by name.
    """

    code: SkillCode
    message: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether the skill did what it was asked."""
        return self.code is SkillCode.OK

    @classmethod
    def from_status(cls, status: dict[str, Any], what: str, **data: Any) -> SkillResult:
        """The result of a skill that ran one primitive with ``status`` (its report).

        Args:
            what: the skill's action in a few words, e.g. ``"place of red-cube-1"``.
        """
        if status.get("ok"):
            return cls(SkillCode.OK, f"{what} done", data)
        code = code_for_reason(str(status.get("reason", "")))
        return cls(code, f"{what} failed: {status.get('message') or status.get('reason')}",
                   data)

    def render(self) -> str:
        """Short text for a model: ``CODE: message`` plus compact JSON data if any."""
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


def after_retry(first: SkillResult, retry: SkillResult, how: str) -> SkillResult:
    """The outcome of ``retry``, made because ``first`` failed (``how``: what was done
    before it, e.g. ``"from the wrist view above it"``).

    A successful retry is returned as it is. A failed one keeps its own code and data (what
    the agent reacts to: the state the retry left), with ``data["first_code"]`` the first
    failure's code; its sentence is the first failure's, the retry's appended after
    :data:`RETRY_JOIN`, so whatever classifies a failure by its cause reads the first one
    (:func:`first_cause`).
    """
    if retry.ok:
        return retry
    return SkillResult(retry.code, f"{first.message}{RETRY_JOIN}{how}: {retry.message}",
                       {**retry.data, "first_code": first.code.value})


def first_cause(message: str) -> str:
    """The first failure's sentence of a failed result's ``message`` (or of a report that
    quotes it): the text before :data:`RETRY_JOIN`, all of it when nothing was retried."""
    return message.split(RETRY_JOIN, 1)[0]


def ok(message: str, **data: Any) -> SkillResult:
    """An ``OK`` result."""
    return SkillResult(SkillCode.OK, message, data)


def fail(code: SkillCode, message: str, **data: Any) -> SkillResult:
    """A failed result with ``code``."""
    return SkillResult(code, message, data)
