"""What every skill returns: a short code, one sentence an LLM can act on, and data."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


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
    #: A safety fault or the operator stopped the robot.
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
}


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
        code = _REASON_CODES.get(str(status.get("reason", "")), SkillCode.BAD_ARGS)
        return cls(code, f"{what} failed: {status.get('message') or status.get('reason')}",
                   data)
