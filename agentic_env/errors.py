"""Exception hierarchy of agentic_env.

Every error a user can trigger derives from :class:`AgenticEnvError`, so callers can catch
the package's errors without catching unrelated ones. Messages name the valid values or
limits so that the fix is obvious from the message alone.
"""

from __future__ import annotations


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
