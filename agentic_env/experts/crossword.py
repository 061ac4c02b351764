"""Scripted expert of ``AgenticEnv/Crossword-v0`` (privileged: reads the true sim state).

It executes the Fast Downward reference plan of the true problem with ground-truth poses;
:data:`agentic_env.experts.EXPERTS` names it the ``crossword`` task's expert. Frames: positions
are in the robot base frame (metres), yaws about its vertical (radians).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.contract.actions import pick, place, top_down_pose
from agentic_env.contract.workcell import ROBOT_PREFIX
from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.rotations import face_up_axis, face_yaw, yaw_of
from agentic_env.pddl.planning import PlanStep
from agentic_env.robot.constants import (
    ARM_JOINTS,
    HOME_JOINT_POSITIONS,
    TCP_SITE,
    TCP_TO_FINGERTIP,
)
from agentic_env.sim.state import SceneState, body_box
from agentic_env.tasks import symbolic

if TYPE_CHECKING:
    from agentic_env.tasks.crossword.task import CrosswordTask

_TCP = ROBOT_PREFIX + TCP_SITE
_WRIST_JOINT = ROBOT_PREFIX + ARM_JOINTS[5]
_WRIST_HOME = float(HOME_JOINT_POSITIONS[5])
#: Largest wrist-3 angle the expert plans for (the joint stops at +-2 pi), rad.
_WRIST_LIMIT = 2 * np.pi - 0.6


def _wrap(angle: float) -> float:
    """``angle`` wrapped into (-pi, pi] (:func:`~agentic_env.geometry.rotations.wrap_angle`
    wraps into [-pi, pi))."""
    return float(-((-angle + np.pi) % (2 * np.pi) - np.pi))


def _bearing_change(start: np.ndarray, end: np.ndarray) -> float:
    """Change of bearing (rad) about the robot base from point ``start`` to ``end`` (x, y)."""
    return _wrap(np.arctan2(end[1], end[0]) - np.arctan2(start[1], start[0]))


class CrosswordExpert:
    """Grounds and executes crossword plan steps for one task instance."""

    def __init__(self, task: CrosswordTask) -> None:
        self.task = task

    def primitive_for(self, step: PlanStep, scene: SceneState) -> dict[str, Any]:
        """Ground-truth primitive of a plan step.

        ``pick`` / ``pick-from-slot``: a top grasp across the block's faces, fingers along
        the face axis with more room around the block. ``place-in-slot``: the block's centre
        onto the slot's, faces along the slot's axes, fingers along the axis without filled
        neighbours. ``place-on-table``: onto the free table spot farthest from other blocks.
        """
        if step.name in ("pick", "pick-from-slot"):
            return self._pick_action(scene, step.args[0])
        if step.name == "place-in-slot":
            return self._place_in_slot_action(scene, step.args[0], step.args[1])
        if step.name == "place-on-table":
            return self._place_on_table_action(scene, step.args[0])
        raise InvalidConfigError(f"crossword has no primitive for {step}; valid: pick, "
                                 "pick-from-slot, place-in-slot, place-on-table")

    def actions(self, scene: SceneState) -> Iterator[dict[str, Any]]:
        """Execute the Fast Downward reference plan with ground-truth poses.

        The plan's pick-place pairs are independent, so they are reordered: blocks taken
        out of slots first, then crossing slots before the others (a crossing is filled
        before its neighbours, so its fingers never reach beside a block). Each pick turns
        its grasp so that the block's letter ends upright on the board, choosing between the
        two such grasps the one that keeps the wrist nearer its home angle (over a long
        episode the wrist would otherwise wind up to its +-2 pi stops).
        """
        plan = symbolic.reference_plan(self.task, scene)
        for pair in self._ordered_pairs(plan):
            if len(pair) == 2 and pair[1].name == "place-in-slot":
                block, slot = pair[1].args
                yield self._pick_action(scene, pair[0].args[0], target_slot=slot)
                yield self._place_in_slot_action(scene, block, slot)
            else:
                for step in pair:
                    yield self.primitive_for(step, scene)

    def _ordered_pairs(self, plan: list[PlanStep]) -> list[tuple[PlanStep, ...]]:
        pairs: list[tuple[PlanStep, ...]] = []
        index = 0
        while index < len(plan):
            step = plan[index]
            following = plan[index + 1] if index + 1 < len(plan) else None
            if step.name.startswith("pick") and following is not None and \
                    following.name.startswith("place"):
                pairs.append((step, following))
                index += 2
            else:
                pairs.append((step,))
                index += 1
        slots = self.task.active_slots()
        crossings = {slots[n - 1] for n in self.task.puzzle.crossings()}

        def key(item: tuple[int, tuple[PlanStep, ...]]) -> tuple[int, int]:
            position, pair = item
            if len(pair) == 1:
                return (0, position)
            if pair[0].name == "pick-from-slot":
                return (1, position)
            target = pair[1].args[1] if pair[1].name == "place-in-slot" else ""
            return (2 if target in crossings else 3, position)

        # a leading single step (e.g. a place while already holding) stays first
        return [pair for _, pair in sorted(enumerate(pairs), key=key)]

    @staticmethod
    def _tcp_yaw(scene: SceneState) -> float:
        return yaw_of(scene.data.site(_TCP).xmat.reshape(3, 3), 0)

    def _neighbour_axes(self, scene: SceneState, xy: np.ndarray, exclude: str) -> list[bool]:
        """Whether a block stands next to ``xy`` along the board's x and y axes."""
        pitch = self.task.config.slot_pitch
        c, s = np.cos(self.task.board_yaw), np.sin(self.task.board_yaw)
        busy = [False, False]
        for block in self.task.active_blocks():
            if block == exclude:
                continue
            d = scene.body_position(block)[:2] - xy
            local = np.array([c * d[0] + s * d[1], -s * d[0] + c * d[1]])
            for axis in (0, 1):
                if abs(local[axis]) < 1.5 * pitch and abs(local[1 - axis]) < 0.5 * pitch:
                    busy[axis] = True
        return busy

    def _clearance(self, scene: SceneState, xy: np.ndarray, yaw: float, exclude: str) -> float:
        """Free distance beside ``xy`` along the closing axis of a grasp at ``yaw``."""
        closing = np.array([-np.sin(yaw), np.cos(yaw)])
        free = np.inf
        for block in self.task.active_blocks():
            if block == exclude:
                continue
            d = scene.body_position(block)[:2] - xy
            if abs(d @ closing) < 0.12 and abs(d @ np.array([closing[1], -closing[0]])) < 0.05:
                free = min(free, abs(d @ closing))
        return free

    def _pick_action(self, scene: SceneState, block: str,
                     target_slot: str | None = None) -> dict[str, Any]:
        cfg = self.task.config
        position = scene.body_position(block)
        rotation = scene.body_rotation(block)
        upright = face_up_axis(rotation) == 2 and rotation[2, 2] > 0
        if target_slot is not None and upright:
            # grasp so that the letter (the block's +y on its top face) ends along the
            # board's +y with the fingers across the slot's free axis; of the two such
            # grasps, the one that keeps the wrist nearer its home angle over pick and place
            free_axis = self._slot_grasp_axis(scene, target_slot, block)
            letter_up = yaw_of(rotation, 1)
            turn = self.task.board_yaw + np.pi / 2 - letter_up  # carried turn, pick to place
            slot_xy = scene.body_position(target_slot)[:2]

            def wrist_cost(yaw: float) -> float:
                at_pick = self._wrist_after(scene, position[:2], yaw)
                at_place = at_pick + _bearing_change(position[:2], slot_xy) - turn
                return max(abs(at_pick - _WRIST_HOME), abs(at_place - _WRIST_HOME))

            yaw = min((_wrap(free_axis * np.pi / 2 + letter_up - np.pi / 2 + k * np.pi)
                       for k in (0, 1)), key=wrist_cost)
        else:
            base = face_yaw(rotation)
            yaw = max((_wrap(base + k * np.pi / 2) for k in (-1, 0, 1, 2)),
                      key=lambda g: (min(self._clearance(scene, position[:2], g, block), 0.09),
                                     -abs(self._wrist_after(scene, position[:2], g)
                                          - _WRIST_HOME)))
        low = body_box(scene, block).low[2]
        position[2] = max(position[2], low + TCP_TO_FINGERTIP + 0.008)
        return pick(top_down_pose(position, yaw), width=2 * cfg.block_half_size)

    def _wrist_after(self, scene: SceneState, xy: np.ndarray, yaw: float) -> float:
        """Predicted wrist-3 angle (rad) once the TCP points down at ``xy`` with ``yaw``.

        For a top-down TCP the wrist angle follows the shoulder pan minus the TCP yaw; the
        primitives' Cartesian paths turn the TCP the short way round, so the prediction is
        the current angle plus the change of bearing minus the wrapped change of yaw. Choosing
        among grasps that are equivalent for the block by this keeps the wrist away from its
        +-2 pi limits over a long episode.
        """
        wrist = float(scene.data.joint(_WRIST_JOINT).qpos[0])
        tcp = scene.data.site(_TCP).xpos - scene.base_pos
        return wrist + _bearing_change(tcp[:2], xy) - _wrap(yaw - self._tcp_yaw(scene))

    def _slot_grasp_axis(self, scene: SceneState, slot: str, block: str) -> int:
        """0: fingers close along the board's y axis; 1: along its x axis."""
        xy = scene.body_position(slot)[:2]
        busy = self._neighbour_axes(scene, xy, block)
        if busy[0] != busy[1]:
            return 0 if busy[0] else 1  # keep the fingers off the axis with neighbours
        number = self.task.active_slots().index(slot) + 1
        return 1 if self.task.puzzle.down_only(number) else 0

    def _held_offset(self, scene: SceneState, block: str) -> tuple[np.ndarray, float, float]:
        """(block centre - TCP) in the base frame, the block's letter yaw and the TCP yaw."""
        tcp = scene.data.site(_TCP).xpos - scene.base_pos
        rotation = scene.body_rotation(block)
        return scene.body_position(block) - tcp, yaw_of(rotation, 1), self._tcp_yaw(scene)

    def _place_pose(self, scene: SceneState, block: str, xy: np.ndarray, surface: float,
                    yaw: float) -> np.ndarray:
        """TCP pose that puts the held block's centre over ``xy``, 4 mm above ``surface``."""
        cfg = self.task.config
        offset, _, tcp_yaw = self._held_offset(scene, block)
        turn = yaw - tcp_yaw
        c, s = np.cos(turn), np.sin(turn)
        shifted = np.array([c * offset[0] - s * offset[1], s * offset[0] + c * offset[1]])
        drop = np.clip(offset[2], -cfg.block_half_size, cfg.block_half_size)
        z = max(surface + cfg.block_half_size - drop + 0.004,
                surface + TCP_TO_FINGERTIP + 0.004)
        return top_down_pose(np.array([*(xy - shifted), z]), yaw)

    def _place_in_slot_action(self, scene: SceneState, block: str,
                              slot: str) -> dict[str, Any]:
        axis = self._slot_grasp_axis(scene, slot, block)
        _, letter_yaw, tcp_yaw = self._held_offset(scene, block)
        rotation = scene.body_rotation(block)
        # turn so that the letter points along the board's +y; among the four 90-degree
        # variants keep the fingers along the free axis and the wrist clear of its stops,
        # then the letter upright, then the wrist nearest its home angle
        ideal = tcp_yaw + (self.task.board_yaw + np.pi / 2 - letter_yaw)
        upright = face_up_axis(rotation) == 2 and rotation[2, 2] > 0
        if not upright:
            ideal = tcp_yaw + _wrap(self.task.board_yaw - face_yaw(rotation))

        xy = scene.body_position(slot)[:2]

        def cost(k: int) -> tuple[bool, bool, bool, float]:
            yaw = ideal + k * np.pi / 2
            axis_error = abs(_wrap(2 * (yaw - self.task.board_yaw - axis * np.pi / 2))) / 2
            wrist = self._wrist_after(scene, xy, yaw)
            return (axis_error > np.pi / 4, abs(wrist) > _WRIST_LIMIT, k != 0 and upright,
                    abs(wrist - _WRIST_HOME))

        k = min(range(4), key=cost)
        yaw = tcp_yaw + _wrap(ideal + k * np.pi / 2 - tcp_yaw)
        return place(self._place_pose(scene, block, xy, self.task.config.board_top, yaw))

    def _place_on_table_action(self, scene: SceneState, block: str) -> dict[str, Any]:
        others = [scene.body_position(b)[:2] for b in self.task.active_blocks() if b != block]
        spots = self.task.table_spots()
        best = max(spots, key=lambda p: min((np.linalg.norm(p - o) for o in others),
                                            default=np.inf))
        _, _, tcp_yaw = self._held_offset(scene, block)
        return place(self._place_pose(scene, block, best, 0.0, tcp_yaw))
