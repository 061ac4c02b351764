"""Names and physical limits of the UR5e with the fin-ray gripper, shared by sim and real.

The MJCF names are the ones ``assets/`` uses (the gripper's under :data:`GRIPPER_PREFIX`), so
no other module hard-codes them. Frames: the robot base frame is the UR controller's base frame
(DH frame 0): origin at the centre of the mounting flange, z up along the first joint axis. The
tool centre point (TCP) frame has z along the approach direction and y along the finger closing
direction.
"""

from __future__ import annotations

import numpy as np

ARM_JOINTS: tuple[str, ...] = (
    "shoulder_pan_joint",
    "shoulder_lift_joint",
    "elbow_joint",
    "wrist_1_joint",
    "wrist_2_joint",
    "wrist_3_joint",
)
ARM_ACTUATORS: tuple[str, ...] = (
    "shoulder_pan",
    "shoulder_lift",
    "elbow",
    "wrist_1",
    "wrist_2",
    "wrist_3",
)
#: Prefix of the gripper's names inside the robot spec.
GRIPPER_PREFIX = "gripper/"
GRIPPER_ACTUATOR = GRIPPER_PREFIX + "gripper_servo"
GRIPPER_WIDTH_TENDON = GRIPPER_PREFIX + "width"
FINGER_SLIDES: tuple[str, ...] = (GRIPPER_PREFIX + "left_slide", GRIPPER_PREFIX + "right_slide")
TCP_SITE = GRIPPER_PREFIX + "tcp"
WRIST_CAMERA = GRIPPER_PREFIX + "wrist"
BASE_BODY = "base"
FINGER_PAD_GEOMS: tuple[str, ...] = tuple(
    GRIPPER_PREFIX + name
    for name in ("left_middle_pad", "left_tip_pad", "right_middle_pad", "right_tip_pad")
)

#: Joint speed limit of every UR5e joint, rad/s (180 deg/s).
JOINT_SPEED_LIMIT = np.pi
#: Gripper opening range between the pads, metres.
GRIPPER_WIDTH_RANGE = (0.0, 0.085)
#: Maximum width rate of the gripper servo, m/s.
GRIPPER_SPEED_LIMIT = 0.1
#: Maximum grip force, newtons.
GRIPPER_FORCE_LIMIT = 20.0
#: Distance from the TCP to the fingertips along the approach axis, metres.
TCP_TO_FINGERTIP = 0.018
#: Joint configuration the robot rests in (rad): TCP 0.35 m above the table at x = 0.4 m,
#: pointing down, fingers closing along the base y axis.
HOME_JOINT_POSITIONS = np.array([2.8019, -1.8441, 1.8291, -1.5558, -1.5708, -1.9105])
