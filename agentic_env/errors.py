"""Exception hierarchy of agentic_env.

Every error a user can trigger derives from :class:`AgenticEnvError`, so callers can catch
the package's errors without catching unrelated ones. Messages name the valid values or
limits so that the fix is obvious from the message alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


class AgenticEnvError(Exception):
    """Base class of every error raised by agentic_env."""


class InvalidActionError(AgenticEnvError, ValueError):
    """An action does not match the action space (unknown primitive id, wrong shape or type)."""


class InvalidConfigError(AgenticEnvError, ValueError):
    """A configuration value is out of range or names something that does not exist."""


class SimulationDivergedError(AgenticEnvError, RuntimeError):
    """MuJoCo reported an unstable simulation (bad accelerations) and reset retries ran out."""


class RenderingUnavailableError(AgenticEnvError, RuntimeError):
    """No OpenGL backend could be created for offscreen rendering."""


class MotionPlanningError(AgenticEnvError, RuntimeError):
    """An arm path cannot be planned. ``reason`` is ``unreachable`` or ``collision``.

    (Symbolic planning failures are :class:`agentic_env.pddl.planning.PlanNotFoundError`.)
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def check_keys(data: Mapping[str, Any], valid: Iterable[str], where: str) -> None:
    """Refuse keys of ``data`` not in ``valid``, naming them and the valid ones.

    Raises:
        InvalidConfigError: an unknown key.
    """
    valid = tuple(valid)
    unknown = [k for k in data if k not in valid]
    if unknown:
        raise InvalidConfigError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}; "
                                 f"valid: {', '.join(valid)}")
