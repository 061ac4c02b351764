"""The gripper servo's position error in the realistic world.

The host commands widths in integer micrometres (``docs/gripper_protocol.md``); the servo
behind the rack stops anywhere inside its dead band around the target. Per episode the
servo draws one offset inside the dead band (converted to width through the rack); every
commanded width is shifted by it, rounded to the protocol's resolution and kept in the
opening range. The grip force needs no model of its own: the protocol's force limit
(20 N) is the model actuator's force range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from agentic_env.robot.constants import GRIPPER_WIDTH_RANGE
from agentic_env.sim.realism import section


def servo_params() -> dict[str, Any]:
    """The ``[servo]`` table (resolution, dead band, pulse span, stroke)."""
    return section("servo")


def deadband_width() -> float:
    """The servo's dead band as a width between the pads, metres."""
    params = servo_params()
    return float(params["deadband_us"] / params["pulse_span_us"] * params["stroke"])


@dataclass(frozen=True)
class ServoError:
    """One episode's servo error.

    Attributes:
        offset: where in its dead band the servo settles, metres of width, within
            +-:func:`deadband_width` / 2.
        resolution: width step of a command, metres (the protocol's micrometre).
    """

    offset: float
    resolution: float

    def to_dict(self) -> dict[str, float]:
        """``{"offset": m, "resolution": m}`` (JSON-ready)."""
        return {"offset": self.offset, "resolution": self.resolution}

    def commanded(self, width_target: float) -> float:
        """The width the servo actually goes to for ``width_target``, metres."""
        steps = np.round((width_target + self.offset) / self.resolution)
        return float(np.clip(steps * self.resolution, *GRIPPER_WIDTH_RANGE))


def draw_servo_error(rng: np.random.Generator) -> ServoError:
    """One episode's error: an offset uniform in the dead band (one draw from ``rng``)."""
    half = deadband_width() / 2.0
    return ServoError(float(rng.uniform(-half, half)), float(servo_params()["resolution"]))
