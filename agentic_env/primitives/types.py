"""What a primitive is asked and what it reports: settings, outcomes, failure reasons, and the
decoding of a primitive action dict (the ``control_mode="primitive"`` contract)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum

import numpy as np

from agentic_env.contract.spaces import PRIMITIVES, Workspace
from agentic_env.errors import InvalidActionError
from agentic_env.robot.motion import MotionLimits


class FailureReason(StrEnum):
    """Why a primitive failed."""

    UNREACHABLE = "unreachable"
    COLLISION = "collision"
    TIMEOUT = "timeout"
    NOTHING_GRASPED = "nothing_grasped"
    INVALID_PARAMETERS = "invalid_parameters"
    SIM_DIVERGED = "sim_diverged"
    #: Real robot only: the safety layer stopped the arm (``info["safety_fault"]`` says why).
    SAFETY_FAULT = "safety_fault"
    #: Real robot only: the operator declined the primitive (``--confirm-each-step``).
    OPERATOR_DECLINED = "operator_declined"
    #: The e-stop is pressed: the motion was refused (or stopped) and nothing moves until it
    #: is released (sim and real; on the real robot see ``RealEnv.estop``).
    ESTOP = "estop"


@dataclass(frozen=True)
class PrimitiveOutcome:
    """Result of one primitive, reported in ``info["primitive"]``.

    Attributes:
        name: primitive id.
        ok: whether it completed.
        reason: ``""`` on success, else a :class:`FailureReason` value.
        message: human-readable detail (what failed, where, which limit).
        sim_duration: robot-clock time the primitive took, seconds.
    """

    name: str
    ok: bool
    reason: str = ""
    message: str = ""
    sim_duration: float = 0.0

    def as_info(self) -> dict[str, object]:
        """Plain-dict form for ``info``."""
        return asdict(self)


@dataclass(frozen=True)
class PrimitiveConfig:
    """Tunables of the primitives.

    Attributes:
        motion: speed caps and planning resolution.
        workspace: box that target poses must lie in.
        approach_distance: default pre-grasp / pre-place offset along the TCP z axis, m.
        lift_height: vertical lift after a grasp, metres.
        transit_height: TCP height (base frame) at which pick and place cross the table
            between objects, metres.
        open_margin: extra opening beyond the requested pick width, metres.
        min_grasp_width: a closed gripper reading below this means nothing is held, metres.
        position_tolerance: TCP settling tolerance, metres.
        rotation_tolerance: TCP settling tolerance, radians.
        settle_time: longest wait for the TCP or the gripper to settle, seconds.
        timeout: longest total duration of one primitive (robot clock), seconds.
        drawer_distance: default pull / push distance of ``open_drawer`` / ``close_drawer``,
            metres.
        drawer_speed: TCP speed cap while pulling or pushing a drawer, m/s (peak of the
            minimum-jerk profile; the mean is 0.53 x this).
        stall_lag: distance by which the measured TCP may trail the commanded one during a
            drawer stroke before the arm counts as stalled (blocked), metres.
        drawer_min_fraction: an ``open_drawer`` fails (``timeout``) if the hand pulled the
            handle less than this fraction of the requested distance.
        place_touchdown: a ``place`` whose held object meets its support early releases
            there when the arm stalls at most this far short of the place pose along its
            approach axis (and at most half this far off it sideways), metres.
        grasp_touchdown: the same for a ``pick`` whose fingers meet the object or the table
            just before the grasp pose: it closes where the arm stalled, metres.
    """

    motion: MotionLimits = field(default_factory=MotionLimits)
    workspace: Workspace = field(default_factory=Workspace)
    approach_distance: float = 0.1
    lift_height: float = 0.12
    transit_height: float = 0.25
    open_margin: float = 0.02
    min_grasp_width: float = 0.004
    position_tolerance: float = 0.003
    rotation_tolerance: float = 0.03
    settle_time: float = 1.0
    timeout: float = 30.0
    drawer_distance: float = 0.2
    drawer_speed: float = 0.12
    stall_lag: float = 0.01
    drawer_min_fraction: float = 0.8
    place_touchdown: float = 0.02
    grasp_touchdown: float = 0.008


#: How much wider than the held object the gripper opens to release it in a place, metres.
RELEASE_OPENING = 0.03


@dataclass(frozen=True)
class PrimitiveCommand:
    """A primitive action, checked once (:func:`parse_primitive_action`).

    Attributes:
        name: one of :data:`~agentic_env.contract.spaces.PRIMITIVES`.
        pose: target TCP pose, (7,) base frame: x, y, z (m), qw, qx, qy, qz.
        width: gripper opening, metres.
        distance: drawer stroke, metres (0 = the default).
    """

    name: str
    pose: np.ndarray
    width: float
    distance: float


def parse_primitive_action(action: object) -> PrimitiveCommand:
    """Check a primitive action's structure once (a :class:`PrimitiveCommand` is returned
    as it is).

    Raises:
        InvalidActionError: naming the valid keys, ids and shapes.
    """
    if isinstance(action, PrimitiveCommand):
        return action
    if not isinstance(action, dict):
        raise InvalidActionError(
            "a primitive action is a dict with keys 'primitive', 'pose', 'width', 'distance' "
            f"(see agentic_env.contract.actions); got {type(action).__name__}"
        )
    missing = {"primitive", "pose", "width", "distance"} - set(action)
    if missing:
        raise InvalidActionError(f"primitive action is missing keys {sorted(missing)}")
    primitive_id = action["primitive"]
    if isinstance(primitive_id, str):
        name = primitive_id
    else:
        try:
            index = int(np.asarray(primitive_id).item())
        except (TypeError, ValueError):
            raise InvalidActionError(
                f"primitive id must be an int in 0..{len(PRIMITIVES) - 1} or a name; valid: "
                f"{', '.join(PRIMITIVES)}"
            ) from None
        if not 0 <= index < len(PRIMITIVES):
            raise InvalidActionError(
                f"unknown primitive id {index}; valid ids: "
                + ", ".join(f"{i}={n}" for i, n in enumerate(PRIMITIVES))
            )
        name = PRIMITIVES[index]
    if name not in PRIMITIVES:
        raise InvalidActionError(f"unknown primitive {name!r}; valid: {', '.join(PRIMITIVES)}")
    pose = np.asarray(action["pose"], dtype=float)
    if pose.shape != (7,):
        raise InvalidActionError(
            f"'pose' must have shape (7,) = x, y, z, qw, qx, qy, qz; got {pose.shape}"
        )
    scalars = []
    for key in ("width", "distance"):
        value = np.asarray(action[key], dtype=float)
        if value.size != 1:
            raise InvalidActionError(f"{key!r} must be one number (shape (1,)); got {value.shape}")
        scalars.append(float(value.reshape(-1)[0]))
    return PrimitiveCommand(name, pose, scalars[0], scalars[1])
