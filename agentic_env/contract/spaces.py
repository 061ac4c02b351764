"""The observation and action contract shared by the sim env and the real env.

Observation (``gymnasium.spaces.Dict``), for each configured camera ``<cam>`` in
``("shoulder", "wrist")``:

============================  ===============  ===============================================
key                           shape, dtype     meaning
============================  ===============  ===============================================
``<cam>_rgb``                 (H, W, 3) uint8  colour image
``<cam>_depth``               (H, W) float32   depth along the optical axis, metres; 0 = no
                                               return (outside the device's range)
``<cam>_intrinsics``          (3, 3) float32   pinhole matrix of the OpenCV camera frame
                                               (x right, y down, z forward), pixels
``<cam>_extrinsics``          (4, 4) float32   pose of that camera frame in the robot base
                                               frame (maps camera points to base points)
``joint_positions``           (6,) float32     arm joints, shoulder pan to wrist 3, radians
``tcp_pose``                  (7,) float32     TCP in the base frame: x, y, z (m), quaternion
                                               w, x, y, z; TCP z = approach axis, y = closing
``gripper_width``             (1,) float32     distance between the pads, metres (0-0.085)
============================  ===============  ===============================================

The robot base frame is the UR controller's base frame: origin at the base flange centre,
z up; the table top is the plane z = 0. Actions are documented with their spaces below.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.camera import CameraConfig
from agentic_env.robot.constants import GRIPPER_WIDTH_RANGE

#: Primitive ids, in the order of the ``primitive`` Discrete action.
PRIMITIVES: tuple[str, ...] = (
    "home",
    "move_to",
    "pick",
    "place",
    "open_gripper",
    "close_gripper",
    "open_drawer",
    "close_drawer",
)
#: Low-level control modes and the primitive mode.
CONTROL_MODES: tuple[str, ...] = ("primitive", "ee_delta", "joint_position")
#: Arm joint limits (rad), the same for sim and real; the elbow is limited to +-pi.
JOINT_LOWER = np.array([-2 * np.pi, -2 * np.pi, -np.pi, -2 * np.pi, -2 * np.pi, -2 * np.pi])
JOINT_UPPER = -JOINT_LOWER


@dataclass(frozen=True)
class Workspace:
    """Axis-aligned box (robot base frame, metres) that primitive target poses must lie in."""

    low: tuple[float, float, float] = (0.15, -0.65, -0.02)
    high: tuple[float, float, float] = (0.95, 0.65, 0.70)

    def contains(self, position: np.ndarray) -> bool:
        """Whether ``position`` (3,) lies inside the box."""
        return bool(np.all(position >= self.low) and np.all(position <= self.high))

    def describe(self) -> str:
        """Human-readable bounds for error messages."""
        axes = zip("xyz", self.low, self.high, strict=True)
        return ", ".join(f"{a} in [{lo:.2f}, {hi:.2f}]" for a, lo, hi in axes) + " m"


@dataclass(frozen=True)
class EEDeltaScale:
    """Scaling of the ``ee_delta`` action ([-1, 1]^7) to motion per control period.

    Attributes:
        linear_speed: TCP speed at ``|action|`` = 1, m/s (per axis, base frame).
        angular_speed: rotation speed at ``|action|`` = 1, rad/s (about base-frame axes).
    """

    linear_speed: float = 0.25
    angular_speed: float = 1.0


def observation_space(cameras: Sequence[CameraConfig]) -> spaces.Dict:
    """The observation space for the given cameras (see the module docstring)."""
    entries: dict[str, spaces.Space] = {}
    for cam in cameras:
        h, w = cam.height, cam.width
        entries[f"{cam.name}_rgb"] = spaces.Box(0, 255, (h, w, 3), np.uint8)
        entries[f"{cam.name}_depth"] = spaces.Box(0.0, cam.depth_max, (h, w), np.float32)
        entries[f"{cam.name}_intrinsics"] = spaces.Box(-np.inf, np.inf, (3, 3), np.float32)
        entries[f"{cam.name}_extrinsics"] = spaces.Box(-np.inf, np.inf, (4, 4), np.float32)
    entries["joint_positions"] = spaces.Box(
        JOINT_LOWER.astype(np.float32), JOINT_UPPER.astype(np.float32), (6,), np.float32
    )
    entries["tcp_pose"] = spaces.Box(-np.inf, np.inf, (7,), np.float32)
    entries["gripper_width"] = spaces.Box(
        GRIPPER_WIDTH_RANGE[0], GRIPPER_WIDTH_RANGE[1], (1,), np.float32
    )
    return spaces.Dict(entries)


def primitive_action_space(workspace: Workspace) -> spaces.Dict:
    """Primitive actions: ``{"primitive": id, "pose": (7,), "width": (1,), "distance": (1,)}``.

    * ``primitive``: index into :data:`PRIMITIVES`.
    * ``pose``: TCP target in the base frame, x, y, z (m) and quaternion w, x, y, z (any
      non-zero norm; it is normalised). Used by ``move_to``, ``pick`` (the grasp pose),
      ``place`` (the TCP pose at release) and ``open_drawer`` / ``close_drawer`` (the TCP
      grasp pose of the drawer's handle: z = approach, pointing into the cabinet along the
      drawer's slide; y = closing axis across the bar, e.g. vertical for a horizontal bar;
      see :func:`agentic_env.sim.cabinet.handle_pose`).
    * ``width``: pre-grasp opening for ``pick``, metres (0-0.085); the gripper opens 2 cm
      wider than this before the approach. The drawer primitives ignore it (they open fully).
    * ``distance``, metres (0-0.3):

      - ``pick`` / ``place``: approach/retreat distance along the TCP z axis; 0 selects the
        default (0.1 m).
      - ``open_drawer``: how far to pull the grasped handle out, along -z of ``pose``;
        ``close_drawer``: how far to push it in, along +z. 0 selects the default (0.2 m).
        Both approach the handle from 0.1 m in front of it and retreat by 0.1 m after
        releasing it. ``close_drawer`` stops early, successfully, where the drawer stops (its
        closed end).
    """
    low = np.array([*workspace.low, -1, -1, -1, -1], dtype=np.float32)
    high = np.array([*workspace.high, 1, 1, 1, 1], dtype=np.float32)
    return spaces.Dict(
        {
            "primitive": spaces.Discrete(len(PRIMITIVES)),
            "pose": spaces.Box(low, high, (7,), np.float32),
            "width": spaces.Box(*GRIPPER_WIDTH_RANGE, (1,), np.float32),
            "distance": spaces.Box(0.0, 0.3, (1,), np.float32),
        }
    )


def ee_delta_action_space() -> spaces.Box:
    """``ee_delta``: [dx, dy, dz, drx, dry, drz, gripper] in [-1, 1].

    Translation and rotation (axis-angle) are in the base frame, scaled by
    :class:`EEDeltaScale` times the control period; ``gripper`` maps -1 -> closed (0 m) and
    +1 -> open (0.085 m) as an absolute width target.
    """
    return spaces.Box(-1.0, 1.0, (7,), np.float32)


def joint_position_action_space() -> spaces.Box:
    """``joint_position``: six absolute arm joint targets (rad) and a gripper width (m).

    Targets are rate-limited to the joint speed limit (pi rad/s) and the servo speed.
    """
    low = np.array([*JOINT_LOWER, GRIPPER_WIDTH_RANGE[0]], dtype=np.float32)
    high = np.array([*JOINT_UPPER, GRIPPER_WIDTH_RANGE[1]], dtype=np.float32)
    return spaces.Box(low, high, (7,), np.float32)


def check_env_options(control_mode: str, render_mode: str | None, control_hz: float) -> None:
    """Raise unless the options the sim and the real env share are valid.

    Args:
        control_mode: one of :data:`CONTROL_MODES`.
        render_mode: ``None`` or ``"rgb_array"``.
        control_hz: control rate of the low-level modes, Hz (1-500).

    Raises:
        InvalidConfigError: naming the valid values.
    """
    if control_mode not in CONTROL_MODES:
        raise InvalidConfigError(
            f"unknown control_mode {control_mode!r}; valid: {', '.join(CONTROL_MODES)}")
    if render_mode not in (None, "rgb_array"):
        raise InvalidConfigError(f"render_mode {render_mode!r}; valid: None, 'rgb_array'")
    if not 1.0 <= control_hz <= 500.0:
        raise InvalidConfigError(f"control_hz={control_hz} is outside 1..500 Hz")


def action_space(control_mode: str, workspace: Workspace) -> spaces.Space:
    """The action space of ``control_mode`` (primitive targets bounded by ``workspace``)."""
    if control_mode == "primitive":
        return primitive_action_space(workspace)
    return {"ee_delta": ee_delta_action_space,
            "joint_position": joint_position_action_space}[control_mode]()


def episode_step_limit(control_mode: str, max_episode_steps: int | None) -> int:
    """``max_episode_steps``, or the default truncation bound of ``control_mode``: 40
    primitives or 500 control periods."""
    return max_episode_steps or (40 if control_mode == "primitive" else 500)
