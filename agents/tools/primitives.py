"""The ``primitives`` tool set: the robot's primitive actions as tools, plus the instruction,
the robot's own state and ``finish``.

Poses are the TCP's in the robot base frame: position ``x, y, z`` in metres and orientation
``yaw, pitch, roll`` in radians applied to the straight-down grasp frame,
``R = Rz(yaw) Ry(pitch) Rx(roll) diag(1, -1, -1)``. With ``pitch = roll = 0`` the gripper
points straight down and at ``yaw = 0`` its fingers close along the base y axis.

The position ranges in the docstrings are those of the default
:class:`~agentic_env.contract.spaces.Workspace`; the primitive executor enforces the env's
actual one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agentic_env.agents.skills.result import SkillCode, SkillResult, fail, ok
from agentic_env.agents.tools.registry import ToolFunction, register_tool_set
from agentic_env.agents.tools.robot import ToolContext
from agentic_env.contract import actions

#: Straight-down grasp frame: tool x along base x, tool y along -base y, tool z down.
DOWN = np.diag([1.0, -1.0, -1.0])


def pose_matrix(x: float, y: float, z: float, yaw: float, pitch: float, roll: float
                ) -> np.ndarray:
    """4x4 TCP pose (base frame) of a tool pose (conventions in the module docstring)."""
    cy, sy, cp, sp, cr, sr = (np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch),
                              np.cos(roll), np.sin(roll))
    rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    ry = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    rx = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
    pose = np.eye(4)
    pose[:3, :3] = rz @ ry @ rx @ DOWN
    pose[:3, 3] = (x, y, z)
    return pose


def pose_arguments(pose: np.ndarray) -> dict[str, float]:
    """Tool-pose arguments ``x, y, z, yaw, pitch, roll`` of a 4x4 TCP pose (inverse of
    :func:`pose_matrix`; rounded to 0.1 mm and 1 mrad)."""
    rotation = np.asarray(pose)[:3, :3] @ DOWN
    pitch = float(np.arcsin(np.clip(-rotation[2, 0], -1.0, 1.0)))
    yaw = float(np.arctan2(rotation[1, 0], rotation[0, 0]))
    roll = float(np.arctan2(rotation[2, 1], rotation[2, 2]))
    x, y, z = (round(float(v), 4) for v in np.asarray(pose)[:3, 3])
    return {"x": x, "y": y, "z": z, "yaw": round(yaw, 3), "pitch": round(pitch, 3),
            "roll": round(roll, 3)}


def _state(obs: dict[str, np.ndarray]) -> dict[str, Any]:
    tcp = actions.vector_to_pose(obs["tcp_pose"])
    return {"tcp": pose_arguments(tcp), "gripper_width": round(float(obs["gripper_width"][0]), 4)}


def primitive_tools(context: ToolContext) -> Sequence[ToolFunction]:
    """The ``primitives`` tool set's functions over ``context``."""

    def run(action: dict[str, Any], what: str) -> SkillResult:
        result = context.send(action, what)
        if result.code in (SkillCode.BLOCKED, SkillCode.BAD_ARGS):
            return result
        return SkillResult(result.code, result.message, _state(context.episode.obs))

    def get_instruction() -> SkillResult:
        """The task instruction to carry out, in natural language."""
        return ok(context.instruction, instruction=context.instruction)

    def get_robot_state() -> SkillResult:
        """The robot's own state: TCP pose (base frame; x, y, z in m, yaw, pitch, roll in rad)
        and gripper opening (m)."""
        return ok("current robot state.", **_state(context.io.observe()))

    def home() -> SkillResult:
        """Move the arm to its home configuration (clear of the cameras' view of the table)."""
        return run(actions.home(), "home")

    def move_to(x: float, y: float, z: float, yaw: float = 0.0, pitch: float = 0.0,
                roll: float = 0.0) -> SkillResult:
        """Move the TCP in a straight line to a pose, e.g. to look with the wrist camera.

        Args:
            x: TCP position along the base x axis (forward), metres, in [0.15, 0.95].
            y: TCP position along the base y axis (left), metres, in [-0.65, 0.65].
            z: TCP height above the table, metres, in [-0.02, 0.7].
            yaw: rotation about the vertical, radians, in [-3.1416, 3.1416].
            pitch: tilt from straight down about the base y axis, radians, in [-1.571, 1.571].
            roll: tilt about the base x axis, radians, in [-3.1416, 3.1416].
        """
        return run(actions.move_to(pose_matrix(x, y, z, yaw, pitch, roll)), "move_to")

    def pick(x: float, y: float, z: float, yaw: float = 0.0, width: float = 0.085,
             pitch: float = 0.0, roll: float = 0.0, approach: float = 0.0) -> SkillResult:
        """Pick an object: open to width, approach the grasp pose along the tool axis, close,
        lift.

        Args:
            x: grasp TCP position along the base x axis (forward), metres, in [0.15, 0.95].
            y: grasp TCP position along the base y axis (left), metres, in [-0.65, 0.65].
            z: grasp TCP height above the table, metres, in [-0.02, 0.7].
            yaw: rotation about the vertical, radians, in [-3.1416, 3.1416]; at 0 the fingers
                close along the base y axis.
            width: gripper opening before closing, metres, in [0, 0.085].
            pitch: tilt from straight down about the base y axis, radians, in [-1.571, 1.571].
            roll: tilt about the base x axis, radians, in [-3.1416, 3.1416].
            approach: approach distance along the tool axis, metres, in [0, 0.3]; 0 = the
                default (0.1 m).
        """
        return run(actions.pick(pose_matrix(x, y, z, yaw, pitch, roll), width, approach),
                   "pick")

    def place(x: float, y: float, z: float, yaw: float = 0.0, pitch: float = 0.0,
              roll: float = 0.0, approach: float = 0.0) -> SkillResult:
        """Carry the held object until the TCP reaches a pose, release it, retreat.

        Args:
            x: TCP position at release along the base x axis, metres, in [0.15, 0.95].
            y: TCP position at release along the base y axis, metres, in [-0.65, 0.65].
            z: TCP height at release above the table, metres, in [-0.02, 0.7].
            yaw: rotation about the vertical, radians, in [-3.1416, 3.1416].
            pitch: tilt from straight down about the base y axis, radians, in [-1.571, 1.571].
            roll: tilt about the base x axis, radians, in [-3.1416, 3.1416].
            approach: approach distance along the tool axis, metres, in [0, 0.3]; 0 = the
                default (0.1 m).
        """
        return run(actions.place(pose_matrix(x, y, z, yaw, pitch, roll), approach), "place")

    def open_gripper() -> SkillResult:
        """Open the gripper fully (85 mm), releasing whatever it holds."""
        return run(actions.open_gripper(), "open_gripper")

    def close_gripper() -> SkillResult:
        """Close the gripper until it is shut or blocked at its force limit."""
        return run(actions.close_gripper(), "close_gripper")

    def drawer_tool(opening: bool) -> ToolFunction:
        verb, primitive = ("pull", actions.open_drawer) if opening else ("push",
                                                                          actions.close_drawer)

        def move(x: float, y: float, z: float, yaw: float = 0.0, pitch: float = 0.0,
                 roll: float = 0.0, distance: float = 0.0) -> SkillResult:
            return run(primitive(pose_matrix(x, y, z, yaw, pitch, roll), distance),
                       move.__name__)

        move.__name__ = "open_drawer" if opening else "close_drawer"
        move.__doc__ = (
            f"Grasp a drawer handle at a TCP pose (tool axis into the cabinet) and {verb} it "
            f"{'out' if opening else 'in until it stops'}.\n\nArgs:\n"
            "    x: handle grasp TCP position along the base x axis, metres, in [0.15, 0.95].\n"
            "    y: handle grasp TCP position along the base y axis, metres, in [-0.65, 0.65].\n"
            "    z: handle grasp TCP height above the table, metres, in [-0.02, 0.7].\n"
            "    yaw: rotation about the vertical, radians, in [-3.1416, 3.1416].\n"
            "    pitch: tilt from straight down about the base y axis, radians, in "
            "[-1.571, 1.571].\n"
            "    roll: tilt about the base x axis, radians, in [-3.1416, 3.1416].\n"
            f"    distance: {verb} distance, metres, in [0, 0.3]; 0 = the default (0.2 m).\n")
        return move

    def finish(success: bool = True, summary: str = "") -> SkillResult:
        """End the episode; it is then scored. Call it once the instruction is carried out
        (or cannot be).

        Args:
            success: whether you believe the instruction is carried out.
            summary: one or two sentences on what was done.
        """
        if context.log.finished:
            return fail(SkillCode.BLOCKED, "the episode is already finished")
        context.log.finished = True
        context.log.claimed_success = success
        context.log.summary = summary
        return ok("episode finished; it will be scored.", claimed_success=success)

    return (get_instruction, get_robot_state, home, move_to, pick, place, open_gripper,
            close_gripper, drawer_tool(True), drawer_tool(False), finish)


register_tool_set("primitives", primitive_tools)
