"""The UR5e arm with the fin-ray gripper at its flange, composed with ``MjSpec``.

The two models live in ``assets/`` as MJCF written by this project (see the comments at the
top of each file for their sources and parameters). This module attaches the gripper at the
arm's ``attachment_site``; :mod:`agentic_env.robot.constants` holds the names and limits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import mujoco
import numpy as np

from agentic_env.robot.constants import (
    ARM_ACTUATORS,
    ARM_JOINTS,
    BASE_BODY,
    FINGER_SLIDES,
    GRIPPER_ACTUATOR,
    GRIPPER_PREFIX,
    GRIPPER_WIDTH_RANGE,
    GRIPPER_WIDTH_TENDON,
    HOME_JOINT_POSITIONS,
    TCP_SITE,
)


@dataclass(frozen=True)
class RobotIndices:
    """Addresses of the robot's joints and actuators inside one compiled model.

    Attributes:
        arm_qpos: qpos addresses of the six arm joints, shoulder to wrist.
        arm_dof: dof addresses of the six arm joints.
        arm_actuators: actuator ids of the six arm servos.
        gripper_actuator: actuator id of the gripper servo.
        width_tendon: tendon id whose length is the distance between the pads (m).
        tcp_site: site id of the tool centre point.
        base_body: body id of the arm's base (origin of the robot base frame).
        robot_bodies: ids of every body of the arm and gripper.
    """

    arm_qpos: np.ndarray
    arm_dof: np.ndarray
    arm_actuators: np.ndarray
    gripper_actuator: int
    width_tendon: int
    tcp_site: int
    base_body: int
    robot_bodies: frozenset[int]

    @classmethod
    def from_model(cls, model: mujoco.MjModel, prefix: str = "") -> RobotIndices:
        """Look the robot's names up in ``model``.

        Args:
            model: a model containing :func:`robot_spec`.
            prefix: the prefix the robot was attached with (``""`` for the bare robot).
        """
        joint_ids = [model.joint(prefix + name).id for name in ARM_JOINTS]
        base = model.body(prefix + BASE_BODY).id
        robot_bodies = frozenset(
            b for b in range(model.nbody) if is_descendant(model, b, base)
        )
        return cls(
            arm_qpos=np.array([model.jnt_qposadr[j] for j in joint_ids]),
            arm_dof=np.array([model.jnt_dofadr[j] for j in joint_ids]),
            arm_actuators=np.array(
                [model.actuator(prefix + name).id for name in ARM_ACTUATORS]
            ),
            gripper_actuator=model.actuator(prefix + GRIPPER_ACTUATOR).id,
            width_tendon=model.tendon(prefix + GRIPPER_WIDTH_TENDON).id,
            tcp_site=model.site(prefix + TCP_SITE).id,
            base_body=base,
            robot_bodies=robot_bodies,
        )


def is_descendant(model: mujoco.MjModel, body: int, ancestor: int) -> bool:
    """Whether ``body`` is ``ancestor`` or lies below it in the kinematic tree."""
    while body != 0:
        if body == ancestor:
            return True
        body = int(model.body_parentid[body])
    return ancestor == 0


def _asset_text(name: str) -> str:
    return resources.files("agentic_env.assets").joinpath(name).read_text()


def robot_spec() -> mujoco.MjSpec:
    """Return a fresh spec of the UR5e with the fin-ray gripper attached at its flange.

    The spec carries one keyframe, ``home``: arm at :data:`HOME_JOINT_POSITIONS`, gripper
    fully open, every servo reference equal to its joint. Gripper names carry the prefix
    :data:`GRIPPER_PREFIX`.
    """
    arm = mujoco.MjSpec.from_string(_asset_text("ur5e.xml"))
    gripper = mujoco.MjSpec.from_string(_asset_text("finray_gripper.xml"))
    arm.attach(gripper, prefix=GRIPPER_PREFIX, site=arm.site("attachment_site"))
    model = arm.compile()
    data = mujoco.MjData(model)
    idx = RobotIndices.from_model(model)
    data.qpos[idx.arm_qpos] = HOME_JOINT_POSITIONS
    data.act[model.actuator_actadr[idx.arm_actuators]] = HOME_JOINT_POSITIONS
    open_width = GRIPPER_WIDTH_RANGE[1]
    for slide in FINGER_SLIDES:
        data.qpos[model.jnt_qposadr[model.joint(slide).id]] = open_width / 2
    data.act[model.actuator_actadr[idx.gripper_actuator]] = open_width
    arm.add_key(name="home", qpos=data.qpos, act=data.act, ctrl=data.ctrl)
    return arm


def gripper_rest_boxes(names: Sequence[str]) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]],
                                                       float]:
    """The gripper's geoms ``names`` at rest (fingers straight, closed) as boxes in the TCP
    frame, and the widest opening of its servo (m).

    Read from ``assets/finray_gripper.xml`` alone (no scene): each geom's ``(centre, half
    extents)``, both (3,) metres, a cylinder boxed by its bounding box.
    """
    model = mujoco.MjSpec.from_string(_asset_text("finray_gripper.xml")).compile()
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    tcp = data.site("tcp")
    rotation = tcp.xmat.reshape(3, 3)
    boxes = {}
    for name in names:
        size = model.geom(name).size
        centre = rotation.T @ (data.geom(name).xpos - tcp.xpos)
        if model.geom(name).type[0] == mujoco.mjtGeom.mjGEOM_CYLINDER:
            boxes[name] = (centre, np.array([size[0], size[0], size[1]]))
        else:
            boxes[name] = (centre, np.array(size, dtype=float))
    return boxes, float(model.actuator("gripper_servo").actrange[1])
