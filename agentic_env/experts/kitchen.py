"""Scripted expert of ``AgenticEnv/Kitchen-v0`` (privileged: reads the true sim state).

The closed-loop expert of :func:`agentic_env.experts.closed_loop.closed_loop_actions` executes
the Fast Downward reference plan, grounding each step here (:meth:`KitchenExpert.primitive_for`);
:data:`agentic_env.experts.EXPERTS` names it the ``kitchen`` task's expert. Poses are 4x4 TCP
poses in the robot base frame, metres; yaws are about its vertical, radians.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.contract.actions import close_drawer, open_drawer, pick, place, top_down_pose
from agentic_env.contract.workcell import ROBOT_PREFIX
from agentic_env.errors import InvalidConfigError
from agentic_env.experts.closed_loop import closed_loop_actions
from agentic_env.geometry.rotations import fold_angle, rotation_z, wrap_angle, yaw_of
from agentic_env.pddl.planning import PlanStep
from agentic_env.robot.constants import TCP_SITE, TCP_TO_FINGERTIP
from agentic_env.sim.cabinet import drawer_interior, drawer_interior_pose, handle_pose
from agentic_env.sim.state import SceneState
from agentic_env.tasks.predicates import lowest_point

if TYPE_CHECKING:
    from agentic_env.tasks.kitchen.task import KitchenTask


#: Fingertip clearance above whatever is below a grasped item, metres.
_FINGERTIP_CLEARANCE = 0.008
#: Release height of a placed item's bottom above its support, metres.
_RELEASE_GAP = 0.01
#: Approach distance of picks from and places into the drawer: a pre-pose this high above
#: the target makes the transit climb over the open drawer's walls and past the carcass with
#: the carried item (a 0.1 m approach would cross them at the 0.25 m transit height).
_HIGH_APPROACH = 0.25
#: Approach distance of places on the table: an item lifted out of the drawer (its bottom at
#: ~0.32 m) travels nearly level to the pre-place pose, its bottom 0.31 m high there: above
#: the drawer's walls (0.28 m) and the carcass top (0.30 m) all the way.
_TABLE_APPROACH = 0.3


class KitchenExpert:
    """Grounds kitchen plan steps with ground-truth poses for one task instance."""

    def __init__(self, task: KitchenTask) -> None:
        self.task = task

    def actions(self, scene: SceneState) -> Iterator[dict[str, Any]]:
        """Execute the Fast Downward reference plan with ground-truth poses, replanning when
        a step fails (:func:`~agentic_env.experts.closed_loop.closed_loop_actions`)."""
        return closed_loop_actions(self.task, scene, self.primitive_for)

    def grasp_pose(self, scene: SceneState, name: str) -> np.ndarray:
        """Top-down grasp (4x4, base frame) of item ``name`` at its grasp point, closing
        across it, the fingertips at least 8 mm above the item's lowest point."""
        item = self.task.items[name]
        rotation = scene.body_rotation(name)
        position = scene.body_position(name) + rotation @ np.asarray(item.grasp)
        axis = rotation[:, 2]
        if item.round and abs(axis[2]) > 0.7 and self.task.in_drawer(scene, name):
            yaw = self.outward_yaw(scene)  # upright in the drawer: as it was placed there
        elif item.round and abs(axis[2]) > 0.7:  # upright: any yaw, keep the wrist centred
            yaw = 0.0
        elif item.round:  # a cylinder on its side: close across its axis
            yaw = fold_angle(float(np.arctan2(axis[1], axis[0])) + np.pi / 2)
        else:
            yaw = fold_angle(yaw_of(rotation))
        position[2] = max(position[2],
                          lowest_point(scene, name) + TCP_TO_FINGERTIP + _FINGERTIP_CLEARANCE)
        return top_down_pose(position, yaw)

    def _tcp(self, scene: SceneState) -> tuple[np.ndarray, float]:
        site = scene.data.site(ROBOT_PREFIX + TCP_SITE)
        return site.xpos - scene.base_pos, yaw_of(site.xmat.reshape(3, 3))

    def place_pose(self, scene: SceneState, name: str, target_xy: np.ndarray, surface: float,
                   yaw: float | None = None) -> np.ndarray:
        """TCP pose that puts the held item's centre over ``target_xy`` with its bottom
        ``_RELEASE_GAP`` above ``surface`` (base-frame height), the TCP turned to ``yaw``
        (``None``: as now)."""
        tcp, tcp_yaw = self._tcp(scene)
        target_yaw = tcp_yaw if yaw is None else yaw
        turn = wrap_angle(target_yaw - tcp_yaw)
        offset = rotation_z(turn)[:2, :2] @ (self.task.item_centre(scene, name)[:2] - tcp[:2])
        hang = max(tcp[2] - lowest_point(scene, name), TCP_TO_FINGERTIP)
        position = np.array([*(np.asarray(target_xy) - offset), surface + hang + _RELEASE_GAP])
        return top_down_pose(position, target_yaw)

    def primitive_for(self, step: PlanStep, scene: SceneState) -> dict[str, Any]:
        """Ground one plan step with ground-truth poses.

        * ``pick`` / ``pick-from`` / ``pick-from-drawer``: a top grasp (:meth:`grasp_pose`);
          from the drawer with a 0.25 m approach, so the empty gripper comes down over the
          drawer's front and walls rather than through them;
        * ``place-on-table``: the free table spot farthest from everything
          (:meth:`free_table_spot`), released 1 cm above the table, 0.3 m
          approach (an item coming out of the drawer stays above the drawer's walls on the
          way);
        * ``place-in``: the item's centre over the container's centre, released 1 cm above
          its floor;
        * ``place-in-drawer``: :meth:`_drawer_place_pose` with a 0.25 m approach: the
          default transit height (0.25 m) is below the cabinet top (0.30 m), so the carried
          item climbs from 0.25 m to the pre-place pose 0.25 m above the release, crossing
          the drawer's walls and passing the carcass high enough (the reset layout keeps the
          low part of that way clear, see :meth:`KitchenTask.clear_mask`);
        * ``open-drawer``: ``open_drawer`` at the handle's grasp pose, pulling
          ``open_distance``; ``close-drawer``: ``close_drawer`` pushing 3 cm more than the
          drawer is open (it stops, successfully, where the drawer closes).
        """
        name, args = step.name, step.args
        if name in ("pick", "pick-from", "pick-from-drawer") and args[0] in self.task.items:
            approach = _HIGH_APPROACH if name == "pick-from-drawer" else 0.0
            return pick(self.grasp_pose(scene, args[0]), self.task.items[args[0]].grasp_width,
                        approach)
        # on the table and in containers the item may turn by pi with the parallel gripper:
        # take the wrist yaw of the two nearer zero (e.g. after the drawer's outward yaw)
        folded = fold_angle(self._tcp(scene)[1])
        if name == "place-on-table":
            target = self.free_table_spot(scene, args[0])
            return place(self.place_pose(scene, args[0], target, 0.0, folded), _TABLE_APPROACH)
        if name == "place-in" and args[1] in self.task.containers:
            container = self.task.containers[args[1]]
            centre = scene.body_position(args[1])
            return place(self.place_pose(scene, args[0], centre[:2],
                                         centre[2] + container.floor_top, folded))
        if name == "place-in-drawer":
            return place(self._drawer_place_pose(scene, args[0]), _HIGH_APPROACH)
        if name == "open-drawer":
            return open_drawer(self._handle_pose(scene), self.task.config.open_distance)
        if name == "close-drawer":
            distance = min(self.task.opening(scene) + 0.03, 0.3)
            return close_drawer(self._handle_pose(scene), distance)
        raise InvalidConfigError(
            f"kitchen has no primitive for {step}; valid: pick, pick-from, pick-from-drawer, "
            "place-on-table, place-in, place-in-drawer, open-drawer, close-drawer")

    def free_table_spot(self, scene: SceneState, name: str) -> np.ndarray:
        """A table spot (x, y; base frame, metres) in the item area farthest from the other
        items and the containers (the item's footprint counts at least 5 cm: the opening
        fingers), clear of the cabinet with its drawer out and reached from the drawer beside
        the carcass (:meth:`KitchenTask.clear_mask`)."""
        task = self.task
        cfg = task.config
        x0, x1, y0, y1 = cfg.area
        reach = max(task.items[name].footprint, 0.05)
        occupied = [(task.item_centre(scene, o)[:2], task.items[o].footprint)
                    for o in task.items if o != name]
        occupied += [(scene.body_position(c)[:2], spec.footprint)
                     for c, spec in task.containers.items()]
        xs, ys = np.meshgrid(np.linspace(x0 + 0.02, x1 - 0.02, 12),
                             np.linspace(y0 + 0.02, y1 - 0.02, 18))
        xy = np.stack([xs.ravel(), ys.ravel()], axis=1)
        clearance = np.min([np.linalg.norm(xy - c, axis=1) - r - reach for c, r in occupied],
                           axis=0)
        valid = (np.linalg.norm(xy, axis=1) <= cfg.max_reach - 0.02) & task.clear_mask(
            xy, reach, reach, to_table=True)
        if not valid.any():
            return np.array([(x0 + x1) / 2, (y0 + y1) / 2])
        return xy[int(np.argmax(np.where(valid, clearance, -np.inf)))]

    def _handle_pose(self, scene: SceneState) -> np.ndarray:
        """TCP pose (4x4, base frame) that grasps the drawer's handle."""
        return handle_pose(scene.model, scene.data, self.task.cabinet, scene.base_pos)

    def _drawer_place_pose(self, scene: SceneState, name: str) -> np.ndarray:
        """Place pose in the open drawer: at the middle of its pulled-out part along its
        depth, across it where it is farthest from the items already inside.

        The fingers close across the drawer and the tool x axis (where the wrist camera sits)
        points out of the cabinet (:meth:`outward_yaw`): towards the carcass the gripper then
        reaches only 2.8 cm (the servo housing's half depth), where closing along the depth
        would bring a finger carriage or the housing (4.5-6 cm) close to the carcass top
        panel, which is at the height of the gripper body."""
        pose, half = drawer_interior(scene.model, scene.data, self.task.cabinet, scene.base_pos)
        nominal = drawer_interior_pose(scene.model, scene.data, self.task.cabinet, scene.base_pos)
        across = pose[:3, 1]
        reach = self.task.items[name].footprint
        limit = max(half[1] - reach - 0.015, 0.0)
        others = []
        for other in self.task.items:
            if other != name and self.task.in_drawer(scene, other):
                lateral = float(across @ (self.task.item_centre(scene, other) - pose[:3, 3]))
                others.append((lateral, self.task.items[other].footprint))
        best, best_score = 0.0, -np.inf
        for lateral in np.linspace(-limit, limit, 15):
            score = min((abs(lateral - o) - r - reach for o, r in others), default=1.0)
            score = min(score, 0.05) - 1e-3 * abs(lateral)  # enough room: prefer the middle
            if score > best_score:
                best, best_score = float(lateral), score
        target = nominal[:3, 3] + best * across
        floor = float(pose[2, 3] - half[2])
        return self.place_pose(scene, name, target[:2], floor, self.outward_yaw(scene))

    def outward_yaw(self, scene: SceneState) -> float:
        """Yaw of a top-down TCP whose x axis points out of the drawer (fingers closing
        across it), radians."""
        pose, _ = drawer_interior(scene.model, scene.data, self.task.cabinet, scene.base_pos)
        return float(np.arctan2(-pose[1, 0], -pose[0, 0]))
