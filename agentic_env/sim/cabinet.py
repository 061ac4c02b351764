"""A kitchen cabinet with one drawer: a static carcass and a drawer on a slide joint.

:func:`add_cabinet` adds it to an ``MjSpec``; the helpers below read its state back from a
compiled model (privileged: tasks, tests and scripted experts use them, agents do not).

**Cabinet frame.** Origin at the centre of the carcass's bottom face (it stands on its
origin), z up, **-x is the front normal** (the front faces -x, the drawer pulls out along
-x), y across the front. ``add_cabinet(..., yaw=0)`` therefore makes a cabinet standing at
``+x`` of the robot face the robot.

**Carcass.** Box walls (bottom, top, sides, back), a shelf under the drawer slot and a front
panel below it, all static (welded to the world); the top panel's upper face is a surface
things can stand on. **Drawer.** The top drawer: a front plate flush with the carcass front
when closed, an open-top box behind it (floor, sides, back) that objects can be placed in,
and a bar handle on the front plate. It slides on the joint ``<name>_drawer_slide`` along
the front normal; the joint reads the opening (0 = closed, up to :attr:`CabinetSpec.
drawer_travel`). Slide damping and dry friction make a released drawer stay where it is left.
Contacts between the drawer and the carcass are excluded (the slide joint guides it).

**Handle and grasp frame.** The handle is a round horizontal bar (``<name>_handle`` geom)
on two posts standing off the front plate. The site ``<name>_handle`` sits at the bar's
centre and its frame *is* the TCP grasp frame of the fin-ray gripper (see
``assets/finray_gripper.xml``):

* z (approach) points into the cabinet, against the front normal, so a TCP approaching along
  its z reaches the bar with the fingertips short of the front plate by
  ``handle_standoff - 0.018`` m (12 mm by default);
* y (the closing axis) is vertical, up: the pads squeeze the bar from above and below. A round
  bar makes the grasp insensitive to small pitch errors, and the fully open fingers straddle
  it with about 3 cm of room above and below;
* x runs along the bar (to the cabinet's +y side, where the wrist camera then sits).

A straight pull along -z of this frame is the drawer's slide direction. Of the two equivalent
grasps (closing axis up or down) the one with y up is the UR5e-friendlier. Placement: with the
default 0.22 m travel the whole open / close sequence (pre-grasp 0.1 m in front, full pull,
0.1 m retreat) plans without wrist flips for a cabinet facing the robot (yaw 0) with its
handle at x 0.5-0.75 m, |y| >= 0.15 m, 0.15-0.45 m above the table (robot base frame). Keep
the line of the pull at least about 0.15 m from the base's vertical axis: a pull aimed at the
base drives the UR5e through its shoulder singularity (reported as ``unreachable``).

Names: body ``<name>`` (carcass), body ``<name>_drawer``, joint ``<name>_drawer_slide``, geoms
``<name>_top`` (the top surface), ``<name>_handle``, ``<name>_drawer_floor``, ...; sites
``<name>_handle`` and ``<name>_drawer_interior`` (a box site filling the drawer's inner
volume, hidden in group 5).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from agentic_env.contract.actions import top_down_pose
from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.rotations import yaw_quat
from agentic_env.sim.props import PROP_FRICTION, PROP_SOLREF

_BOX = mujoco.mjtGeom.mjGEOM_BOX
_CYLINDER = mujoco.mjtGeom.mjGEOM_CYLINDER
#: Rotation of the handle site in the drawer frame: columns x = +y, y = +z, z = +x (cabinet).
_HANDLE_ROTATION = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
#: Site group that default renders hide.
_HIDDEN_GROUP = 5


@dataclass(frozen=True)
class CabinetSpec:
    """A cabinet with one drawer (all lengths in metres, full sizes, not half sizes).

    Attributes:
        name: prefix of every name of the cabinet (the carcass body's name).
        size: outer size of the carcass (depth along the front normal, width, height).
        panel_thickness: thickness of the carcass's walls.
        drawer_inner_size: inner size of the drawer box (depth, width, height of the walls
            above the floor).
        drawer_wall_thickness: thickness of the drawer's floor and walls.
        drawer_front_thickness: thickness of the drawer's front plate.
        drawer_travel: largest opening (slide range 0..travel); at most the inner depth.
        drawer_clearance: gap between the drawer and the slot in the carcass.
        drawer_headroom: gap between the top of the drawer walls and the top panel, so that
            objects sticking out of the drawer by this much still pass.
        handle_length: length of the handle bar.
        handle_radius: radius of the bar (1.6 cm thick by default).
        handle_standoff: distance from the front plate to the bar's axis.
        post_radius: radius of the two posts holding the bar.
        slide_damping: viscous damping of the slide, N s/m.
        slide_friction: dry friction of the slide (``frictionloss``), N: what keeps a released
            drawer where it was left.
        drawer_density: density of the drawer's parts, kg/m^3.
        carcass_rgba: colour of the carcass.
        front_rgba: colour of the drawer front and the lower front panel.
        drawer_rgba: colour of the drawer box.
        handle_rgba: colour of the handle.
    """

    name: str = "cabinet"
    size: tuple[float, float, float] = (0.30, 0.46, 0.30)
    panel_thickness: float = 0.015
    drawer_inner_size: tuple[float, float, float] = (0.24, 0.36, 0.07)
    drawer_wall_thickness: float = 0.01
    drawer_front_thickness: float = 0.018
    drawer_travel: float = 0.22
    drawer_clearance: float = 0.003
    drawer_headroom: float = 0.015
    handle_length: float = 0.11
    handle_radius: float = 0.008
    handle_standoff: float = 0.03
    post_radius: float = 0.005
    slide_damping: float = 10.0
    slide_friction: float = 2.0
    drawer_density: float = 600.0
    carcass_rgba: tuple[float, float, float, float] = (0.86, 0.83, 0.76, 1.0)
    front_rgba: tuple[float, float, float, float] = (0.45, 0.58, 0.52, 1.0)
    drawer_rgba: tuple[float, float, float, float] = (0.74, 0.62, 0.46, 1.0)
    handle_rgba: tuple[float, float, float, float] = (0.62, 0.63, 0.66, 1.0)

    def __post_init__(self) -> None:
        depth, width, height = self.size
        inner_depth, inner_width, inner_height = self.drawer_inner_size
        t, wall, gap = self.panel_thickness, self.drawer_wall_thickness, self.drawer_clearance
        problems = []
        if min(*self.size, *self.drawer_inner_size, t, wall, self.drawer_front_thickness,
               self.handle_length, self.handle_radius, self.post_radius) <= 0:
            problems.append("sizes and thicknesses must be positive")
        if inner_width + 2 * wall > width - 2 * t - 2 * gap:
            problems.append(f"the drawer ({inner_width + 2 * wall:.3f} m wide outside) does not "
                            f"fit between the side panels ({width - 2 * t - 2 * gap:.3f} m)")
        if self.drawer_front_thickness + inner_depth + wall > depth - t - gap:
            problems.append("the drawer is deeper than the carcass")
        if self.slot_height + 2 * t > height:
            problems.append(f"the drawer slot ({self.slot_height:.3f} m) does not fit in a "
                            f"{height:.3f} m tall carcass")
        if not 0 < self.drawer_travel <= inner_depth:
            problems.append(f"drawer_travel {self.drawer_travel} must be in (0, inner depth]")
        if self.handle_standoff <= self.handle_radius:
            problems.append("the handle bar must stand off the front plate")
        if self.handle_length / 2 - 2 * self.post_radius <= 0.015:
            problems.append("the handle is too short to grasp between its posts")
        if problems:
            raise InvalidConfigError(f"cabinet {self.name!r}: " + "; ".join(problems))

    @property
    def slot_height(self) -> float:
        """Height of the drawer's opening in the carcass, metres."""
        return (self.drawer_wall_thickness + self.drawer_inner_size[2] + self.drawer_headroom
                + 2 * self.drawer_clearance)

    @property
    def slot_centre_height(self) -> float:
        """Height of the slot's (and the handle's) centre above the carcass bottom, metres."""
        return self.size[2] - self.panel_thickness - self.slot_height / 2


def add_cabinet(
    spec: mujoco.MjSpec, cabinet: CabinetSpec, pos_world: np.ndarray, yaw: float = 0.0
) -> None:
    """Add ``cabinet`` to ``spec`` standing with its bottom centre at ``pos_world`` (world
    frame, metres), turned by ``yaw`` (rad) about z; at yaw 0 its front faces -x."""
    name = cabinet.name
    depth, width, height = cabinet.size
    t = cabinet.panel_thickness
    carcass = spec.worldbody.add_body(name=name, pos=np.asarray(pos_world, dtype=float),
                                      quat=yaw_quat(yaw))
    solid = {"type": _BOX, "solref": PROP_SOLREF, "friction": PROP_FRICTION, "condim": 4}
    wood = {**solid, "rgba": cabinet.carcass_rgba}
    front_x = -depth / 2
    slot_top = height - t
    slot_bottom = slot_top - cabinet.slot_height
    carcass.add_geom(name=f"{name}_bottom", size=[depth / 2, width / 2, t / 2],
                     pos=[0, 0, t / 2], **wood)
    carcass.add_geom(name=f"{name}_top", size=[depth / 2, width / 2, t / 2],
                     pos=[0, 0, height - t / 2], **wood)
    for sign, side in ((1.0, "left"), (-1.0, "right")):
        carcass.add_geom(name=f"{name}_{side}", size=[depth / 2, t / 2, height / 2 - t],
                         pos=[0, sign * (width / 2 - t / 2), height / 2], **wood)
    carcass.add_geom(name=f"{name}_back", size=[t / 2, width / 2 - t, height / 2 - t],
                     pos=[depth / 2 - t / 2, 0, height / 2], **wood)
    carcass.add_geom(name=f"{name}_shelf", size=[depth / 2 - t, width / 2 - t, t / 2],
                     pos=[0, 0, slot_bottom - t / 2], **wood)
    lower = slot_bottom - t
    carcass.add_geom(name=f"{name}_lower_front", size=[t / 2, width / 2 - t, lower / 2],
                     pos=[front_x + t / 2, 0, lower / 2], **{**solid, "rgba": cabinet.front_rgba})

    _add_drawer(spec, carcass, cabinet, [front_x, 0.0, (slot_top + slot_bottom) / 2])
    spec.add_exclude(name=f"{name}_drawer_in_carcass", bodyname1=name,
                     bodyname2=f"{name}_drawer")


def _add_drawer(
    spec: mujoco.MjSpec, carcass: mujoco.MjsBody, cabinet: CabinetSpec, origin: list[float]
) -> None:
    """The drawer body: origin at the centre of its front plate's outer face (when closed, on
    the carcass front plane at the slot's centre height); +x points into the cabinet."""
    name = cabinet.name
    _, width, _ = cabinet.size
    inner_depth, inner_width, inner_height = cabinet.drawer_inner_size
    wall, gap = cabinet.drawer_wall_thickness, cabinet.drawer_clearance
    front = cabinet.drawer_front_thickness
    half_slot = cabinet.slot_height / 2
    drawer = carcass.add_body(name=f"{name}_drawer", pos=origin)
    drawer.add_joint(
        name=f"{name}_drawer_slide", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[-1, 0, 0],
        range=[0.0, cabinet.drawer_travel], damping=cabinet.slide_damping,
        frictionloss=cabinet.slide_friction, armature=0.2,
    )
    solid = {"type": _BOX, "solref": PROP_SOLREF, "friction": PROP_FRICTION, "condim": 4,
             "density": cabinet.drawer_density}
    box = {**solid, "rgba": cabinet.drawer_rgba}
    drawer.add_geom(name=f"{name}_drawer_front",
                    size=[front / 2, width / 2 - cabinet.panel_thickness - gap, half_slot - gap],
                    pos=[front / 2, 0, 0], **{**solid, "rgba": cabinet.front_rgba})
    floor_top = -half_slot + gap + wall
    centre_x = front + inner_depth / 2
    drawer.add_geom(name=f"{name}_drawer_floor",
                    size=[inner_depth / 2, inner_width / 2 + wall, wall / 2],
                    pos=[centre_x, 0, floor_top - wall / 2], **box)
    for sign, side in ((1.0, "left"), (-1.0, "right")):
        drawer.add_geom(name=f"{name}_drawer_{side}",
                        size=[inner_depth / 2, wall / 2, inner_height / 2],
                        pos=[centre_x, sign * (inner_width / 2 + wall / 2),
                             floor_top + inner_height / 2], **box)
    drawer.add_geom(name=f"{name}_drawer_back",
                    size=[wall / 2, inner_width / 2 + wall, (inner_height + wall) / 2],
                    pos=[front + inner_depth + wall / 2, 0, floor_top + (inner_height - wall) / 2],
                    **box)
    interior = drawer.add_site(name=f"{name}_drawer_interior", type=_BOX,
                               size=[inner_depth / 2, inner_width / 2, inner_height / 2],
                               pos=[centre_x, 0, floor_top + inner_height / 2],
                               rgba=[0.2, 0.8, 0.2, 0.3])
    interior.group = _HIDDEN_GROUP

    # handle: a bar along y on two posts, its axis handle_standoff in front of the plate
    metal = {"solref": PROP_SOLREF, "friction": PROP_FRICTION, "condim": 4,
             "density": 2700.0, "rgba": cabinet.handle_rgba}
    standoff, half_length = cabinet.handle_standoff, cabinet.handle_length / 2
    drawer.add_geom(name=f"{name}_handle", type=_CYLINDER,
                    size=[cabinet.handle_radius, half_length, 0],
                    pos=[-standoff, 0, 0], quat=[np.sqrt(0.5), np.sqrt(0.5), 0, 0], **metal)
    post_y = half_length - 2 * cabinet.post_radius
    for sign, side in ((1.0, "left"), (-1.0, "right")):
        drawer.add_geom(name=f"{name}_handle_post_{side}", type=_CYLINDER,
                        size=[cabinet.post_radius, standoff / 2, 0],
                        pos=[-standoff / 2, sign * post_y, 0],
                        quat=[np.sqrt(0.5), 0, np.sqrt(0.5), 0], **metal)
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, _HANDLE_ROTATION.flatten())
    handle = drawer.add_site(name=f"{name}_handle", pos=[-standoff, 0, 0], quat=quat,
                             size=[0.006, 0, 0], rgba=[1, 0.5, 0, 1])
    handle.group = _HIDDEN_GROUP


# -- state of a compiled cabinet (privileged) ----------------------------------------------------


def set_cabinet_pose(model: mujoco.MjModel, name: str, pos_world: np.ndarray, yaw: float) -> None:
    """Move the (static) cabinet ``name`` in a compiled model: bottom centre at ``pos_world``
    (world, metres), turned by ``yaw`` (rad). Call ``mj_forward`` afterwards."""
    body = model.body(name).id
    model.body_pos[body] = pos_world
    model.body_quat[body] = yaw_quat(yaw)


def _slide_addresses(model: mujoco.MjModel, name: str) -> tuple[int, int]:
    joint = model.joint(f"{name}_drawer_slide").id
    return int(model.jnt_qposadr[joint]), int(model.jnt_dofadr[joint])


def drawer_opening(model: mujoco.MjModel, data: mujoco.MjData, name: str) -> float:
    """How far the drawer of cabinet ``name`` is pulled out, metres (0 = closed)."""
    return float(data.qpos[_slide_addresses(model, name)[0]])


def set_drawer_opening(
    model: mujoco.MjModel, data: mujoco.MjData, name: str, opening: float
) -> None:
    """Put the drawer at ``opening`` metres (clamped to its travel), at rest."""
    qpos, dof = _slide_addresses(model, name)
    low, high = model.jnt_range[model.joint(f"{name}_drawer_slide").id]
    data.qpos[qpos] = float(np.clip(opening, low, high))
    data.qvel[dof] = 0.0


def drawer_travel(model: mujoco.MjModel, name: str) -> float:
    """Largest opening of the drawer of cabinet ``name``, metres."""
    return float(model.jnt_range[model.joint(f"{name}_drawer_slide").id, 1])


def _site_pose(data: mujoco.MjData, site: str, base_pos: np.ndarray) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3] = data.site(site).xmat.reshape(3, 3)
    pose[:3, 3] = data.site(site).xpos - np.asarray(base_pos)
    return pose


def handle_pose(
    model: mujoco.MjModel, data: mujoco.MjData, name: str, base_pos: np.ndarray
) -> np.ndarray:
    """TCP grasp pose (4x4) of the handle of cabinet ``name`` in the robot base frame.

    The base frame is the world translated by ``base_pos`` (world-aligned). z points into the
    cabinet (the approach), y up (the closing axis), x along the bar; see the module docstring.
    ``model`` is unused but kept for a uniform signature.
    """
    del model
    return _site_pose(data, f"{name}_handle", base_pos)


def drawer_interior(
    model: mujoco.MjModel, data: mujoco.MjData, name: str, base_pos: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Pose (4x4, base frame) of the centre of the drawer's inner volume, axes as the
    cabinet's (x into the cabinet, z up), and its half extents (3,), metres."""
    site = model.site(f"{name}_drawer_interior").id
    return _site_pose(data, f"{name}_drawer_interior", base_pos), model.site_size[site].copy()


def inside_drawer(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    name: str,
    position: np.ndarray,
    base_pos: np.ndarray,
    margin: float = 0.0,
) -> bool:
    """Whether ``position`` (base frame, m) lies in the drawer's inner volume; ``margin``
    (m) extends the volume upwards, for objects sticking out above the walls."""
    pose, half = drawer_interior(model, data, name, base_pos)
    local = pose[:3, :3].T @ (np.asarray(position) - pose[:3, 3])
    return bool(abs(local[0]) <= half[0] and abs(local[1]) <= half[1]
                and -half[2] <= local[2] <= half[2] + margin)


def drawer_interior_pose(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    name: str,
    base_pos: np.ndarray,
    height: float = 0.04,
) -> np.ndarray:
    """A top-down TCP pose (4x4, base frame) for placing an item in the open drawer.

    The TCP is ``height`` metres above the drawer floor, centred across the drawer and, along
    its depth, at the middle of the part of the floor that is pulled out of the carcass
    (but no deeper than the floor's centre): with the drawer open far enough, the gripper
    descends clear of the carcass. The fingers close along the drawer's depth axis and the
    yaw is folded into [-pi/2, pi/2]. For an item held at its centre with half height ``h``,
    ``height = h + 0.01`` releases it 1 cm above the floor.
    """
    interior, half = drawer_interior(model, data, name, base_pos)
    site = model.site(f"{name}_drawer_interior").id
    front_edge = model.site_pos[site][0] - half[0]  # interior front, behind the plate
    exposed = drawer_opening(model, data, name) - front_edge
    depth_in = float(np.clip(exposed / 2, 0.0, half[0]))  # behind the interior's front edge
    inward = interior[:3, 0]
    position = interior[:3, 3] + inward * (depth_in - half[0])
    position[2] += height - half[2]
    yaw = float(np.arctan2(inward[1], inward[0])) + np.pi / 2
    yaw = (yaw + np.pi / 2) % np.pi - np.pi / 2
    return top_down_pose(position, yaw)
