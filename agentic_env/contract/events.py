"""Scheduled events of a trial: an operator speaking, the e-stop, a person changing the scene.

An :class:`EventSpec` is plain data (a trial spec stores its dict): what happens and when,
either just before the k-th primitive request of the episode (``at_primitive``: 1 = the first;
refused requests count) or at a simulated time (``at_time``, seconds; with
``after_previous`` it counts from the moment the event before it in the schedule fired).
Envs replay a schedule exactly and report every applied event in ``info["events"]`` (the
spec's fields plus ``sim_time``, ``primitive`` and the ``text`` an operator would announce).

While the e-stop is pressed every motion request is refused with the primitive failure
reason ``estop`` and nothing moves. ``goal`` is privileged: the goal facts an utterance
means (a changed preference), read by the scorer and the sim-oracle, never by an agent,
which only gets :func:`announcement`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from agentic_env.errors import InvalidConfigError

#: Event kinds.
EVENT_KINDS: tuple[str, ...] = ("say", "estop", "estop_release", "move_object",
                                "remove_object", "add_object")
#: Kinds that act on one free object (``body``).
OBJECT_KINDS: tuple[str, ...] = ("move_object", "remove_object", "add_object")


@dataclass(frozen=True)
class EventSpec:
    """One scheduled event.

    Attributes:
        kind: one of :data:`EVENT_KINDS`.
        at_primitive: fire just before the k-th primitive request (1 = the first); 0 = use
            ``at_time``.
        at_time: simulated time, seconds (absolute, or after the previous event with
            ``after_previous``); negative = use ``at_primitive``.
        after_previous: ``at_time`` counts from the previous event's firing.
        text: ``say``: the operator's words.
        body: object kinds: the free body (e.g. ``apple-1``).
        shift: ``move_object``: displacement in the base frame's xy plane, metres.
        position: ``add_object``: where it is put, base-frame xy, metres.
        announce: object kinds: an operator announces the change to the robot.
        goal: ``say``: the goal facts the words mean from now on (privileged; empty = the
            goal does not change, e.g. "stop").
    """

    kind: str
    at_primitive: int = 0
    at_time: float = -1.0
    after_previous: bool = False
    text: str = ""
    body: str = ""
    shift: tuple[float, float] = (0.0, 0.0)
    position: tuple[float, float] = (0.0, 0.0)
    announce: bool = True
    goal: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in EVENT_KINDS:
            raise InvalidConfigError(f"unknown event {self.kind!r}; valid: "
                                     f"{', '.join(EVENT_KINDS)}")
        if (self.at_primitive >= 1) == (self.at_time >= 0.0) or self.at_primitive < 0:
            raise InvalidConfigError(
                f"event {self.kind!r}: give exactly one trigger, at_primitive >= 1 or "
                f"at_time >= 0 (got at_primitive={self.at_primitive}, "
                f"at_time={self.at_time})")
        if self.after_previous and self.at_time < 0.0:
            raise InvalidConfigError(f"event {self.kind!r}: after_previous needs at_time")
        if self.kind in OBJECT_KINDS and not self.body:
            raise InvalidConfigError(f"event {self.kind!r} needs a body")
        if self.kind == "say" and not self.text:
            raise InvalidConfigError("a say event needs text")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        data = asdict(self)
        data["shift"], data["position"], data["goal"] = (list(self.shift),
                                                         list(self.position), list(self.goal))
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any] | EventSpec) -> EventSpec:
        """Inverse of :meth:`to_dict` (specs pass through; lists become tuples).

        Raises:
            InvalidConfigError: on an unknown field or an invalid event.
        """
        if isinstance(data, EventSpec):
            return data
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise InvalidConfigError(f"unknown event fields {sorted(unknown)}; valid: "
                                     f"{', '.join(sorted(known))}")
        values = dict(data)
        for name in ("shift", "position", "goal"):
            if name in values:
                values[name] = tuple(values[name])
        return cls(**values)


def announcement(applied: dict[str, Any]) -> str:
    """What the robot is told of an applied event (an ``info["events"]`` entry), or ``""``
    for a change nobody announced."""
    kind, body = applied.get("kind"), applied.get("body", "")
    if kind == "say":
        return f"operator says: {applied.get('text', '')}"
    if kind == "estop":
        return "e-stop pressed: every motion is refused until it is released"
    if kind == "estop_release":
        return "e-stop released: motion is allowed again"
    if not applied.get("announce", True):
        return ""
    return {"move_object": f"a person moved {body}",
            "remove_object": f"a person removed {body} from the table",
            "add_object": f"a person put {body} on the table"}.get(str(kind), "")


def parse_events(items: Any) -> tuple[EventSpec, ...]:
    """A schedule from a list of dicts or specs (``None`` = none).

    Raises:
        InvalidConfigError: not a list, or an invalid event.
    """
    if items is None:
        return ()
    if not isinstance(items, list | tuple):
        raise InvalidConfigError(f"events: expected a list of events, got {items!r}")
    return tuple(EventSpec.from_dict(item) for item in items)
