"""TrialSpec: everything needed to rebuild one trial exactly, in sim or on a real table.

A trial spec is plain data (JSON): the task and setting, the seed, the pose of every free
object (robot base frame, metres, quaternion w x y z, *before* physics settles), the
instruction and its paraphrase category, the structured goal, task-specific state (fixture
positions, letters, drawer opening...), the appearance randomisation that was applied and the
disturbances to inject. ``env.reset(options={"trial": spec})`` rebuilds it; every reset puts
the spec of the trial it made in ``info["trial"]``. ``realism`` records the world the trial
was made in (:mod:`agentic_env.sim.realism`); an env replays a trial in its own world, so a
realistic trial can be replayed ideal to tell the world's failures from the agent's.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentic_env.errors import InvalidConfigError

SPEC_VERSION = 1


@dataclass(frozen=True)
class ObjectPose:
    """Pose of one free object in the robot base frame.

    Attributes:
        name: body name.
        position: x, y, z in metres.
        quaternion: w, x, y, z (unit).
    """

    name: str
    position: tuple[float, float, float]
    quaternion: tuple[float, float, float, float]


@dataclass(frozen=True)
class TrialSpec:
    """One reproducible trial (see the module docstring)."""

    task: str
    setting: str
    seed: int
    objects: tuple[ObjectPose, ...]
    instruction: str
    instruction_category: str
    goal: dict[str, Any]
    task_state: dict[str, Any] = field(default_factory=dict)
    dressing: dict[str, Any] = field(default_factory=dict)
    disturbances: tuple[dict[str, Any], ...] = ()
    events: tuple[dict[str, Any], ...] = ()
    variant: dict[str, Any] = field(default_factory=dict)
    realism: str = "ideal"
    version: int = SPEC_VERSION

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    def to_json(self) -> str:
        """Pretty JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    def save(self, path: str | Path) -> None:
        """Write the spec as JSON."""
        Path(path).write_text(self.to_json())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrialSpec:
        """Inverse of :meth:`to_dict`.

        Raises:
            InvalidConfigError: on a missing field or an unsupported version.
        """
        if data.get("version", SPEC_VERSION) != SPEC_VERSION:
            raise InvalidConfigError(
                f"trial spec version {data.get('version')} is not supported (expected "
                f"{SPEC_VERSION})"
            )
        try:
            objects = tuple(
                ObjectPose(o["name"], tuple(o["position"]), tuple(o["quaternion"]))
                for o in data["objects"]
            )
            return cls(
                task=data["task"], setting=data["setting"], seed=int(data["seed"]),
                objects=objects, instruction=data["instruction"],
                instruction_category=data["instruction_category"], goal=data["goal"],
                task_state=data.get("task_state", {}), dressing=data.get("dressing", {}),
                disturbances=tuple(data.get("disturbances", ())),
                events=tuple(data.get("events", ())), variant=data.get("variant", {}),
                realism=data.get("realism", "ideal"),
            )
        except KeyError as missing:
            raise InvalidConfigError(f"trial spec is missing the field {missing}") from None

    @classmethod
    def from_json(cls, text: str) -> TrialSpec:
        """Parse JSON text written by :meth:`to_json`."""
        return cls.from_dict(json.loads(text))

    @classmethod
    def load(cls, path: str | Path) -> TrialSpec:
        """Read a spec written by :meth:`save`."""
        return cls.from_json(Path(path).read_text())


