"""The MuJoCo implementation of the low-level control loop
(:class:`~agentic_env.robot.interface.LowLevelRobot`)."""

from __future__ import annotations

import mujoco
import numpy as np

from agentic_env.robot.constants import GRIPPER_SPEED_LIMIT, GRIPPER_WIDTH_RANGE, JOINT_SPEED_LIMIT
from agentic_env.robot.interface import StepStatus
from agentic_env.robot.kinematics import ArmKinematics
from agentic_env.robot.model import RobotIndices, is_descendant
from agentic_env.sim.realism.servo import ServoError

_DIVERGENCE_WARNINGS = np.array(
    [
        int(mujoco.mjtWarning.mjWARN_BADQACC),
        int(mujoco.mjtWarning.mjWARN_BADQPOS),
        int(mujoco.mjtWarning.mjWARN_BADQVEL),
    ]
)


#: Fraction of the servo damping cancelled by velocity feed-forward. 1.0 removes the tracking
#: lag of smooth paths entirely but overshoots step commands by up to 11 %; 0.8 leaves no
#: overshoot on any joint while keeping Cartesian paths within about a millimetre.
FEEDFORWARD_GAIN = 0.8


class SimRobot:
    """:class:`LowLevelRobot` over a MuJoCo model of the workcell.

    Arm servos are integrator actuators (see ``assets/ur5e.xml``): per control period the
    reference ramps linearly from its previous value to the (rate-limited) target inside the
    physics, with velocity feed-forward, so Python runs once per control period and the
    ``n_substeps`` physics steps run in one ``mj_step`` call.

    Attributes:
        servo_error: the gripper servo's position error (realistic world): width targets
            go through :meth:`ServoError.commanded`; ``None`` = exact (ideal world).
    """

    servo_error: ServoError | None = None

    def __init__(
        self,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        kinematics: ArmKinematics,
        control_dt: float,
        robot_prefix: str,
    ) -> None:
        self.model = model
        self.data = data
        self.kinematics = kinematics
        self.n_substeps = max(1, round(control_dt / model.opt.timestep))
        self._control_dt = self.n_substeps * model.opt.timestep
        self.idx = RobotIndices.from_model(model, robot_prefix)
        arm = self.idx.arm_actuators
        self._arm_act = model.actuator_actadr[arm]
        self._gripper_act = int(model.actuator_actadr[self.idx.gripper_actuator])
        damping_over_stiffness = -model.actuator_biasprm[arm, 2] / model.actuator_gainprm[arm, 0]
        self._lead = FEEDFORWARD_GAIN * damping_over_stiffness
        self._joint_lower = model.jnt_range[model.dof_jntid[self.idx.arm_dof], 0]
        self._joint_upper = model.jnt_range[model.dof_jntid[self.idx.arm_dof], 1]
        robot_geom = np.isin(model.geom_bodyid, list(self.idx.robot_bodies))
        gripper_root = model.body(robot_prefix + "gripper/gripper_base").id
        gripper_bodies = [b for b in self.idx.robot_bodies if is_descendant(model, b, gripper_root)]
        self._robot_geom = robot_geom
        self._arm_geom = robot_geom & ~np.isin(model.geom_bodyid, gripper_bodies)
        base_body = self.idx.base_body
        self._arm_geom &= model.geom_bodyid != base_body
        self._static_geom = (model.body_weldid[model.geom_bodyid] == 0) & ~robot_geom
        self._q_ref = np.zeros(6)
        self._width_ref = 0.0
        self._warning_counts = data.warning.number[_DIVERGENCE_WARNINGS].copy()
        self.sync_reference()

    @property
    def control_dt(self) -> float:
        """Control period, seconds (a whole number of physics steps)."""
        return self._control_dt

    @property
    def time(self) -> float:
        """Simulation time, seconds."""
        return float(self.data.time)

    def sync_reference(self) -> None:
        """Make the servo references equal the measured state (after a reset or a fault)."""
        self._q_ref = self.joint_positions()
        self._width_ref = self.gripper_width()
        self.data.act[self._arm_act] = self._q_ref
        self.data.act[self._gripper_act] = self._width_ref
        self.data.ctrl[:] = 0.0
        self._warning_counts = self.data.warning.number[_DIVERGENCE_WARNINGS].copy()

    def restore_reference(self, joint_reference: np.ndarray, width_reference: float) -> None:
        """Restore servo references saved with :meth:`joint_reference` (after unpickling)."""
        self._q_ref = np.asarray(joint_reference, dtype=float).copy()
        self._width_ref = float(width_reference)

    def joint_positions(self) -> np.ndarray:
        """Measured arm joint positions (6,), radians."""
        return self.data.qpos[self.idx.arm_qpos].copy()

    def joint_velocities(self) -> np.ndarray:
        """Measured arm joint velocities (6,), rad/s."""
        return self.data.qvel[self.idx.arm_dof].copy()

    def joint_reference(self) -> np.ndarray:
        """Last commanded arm joint reference (6,), radians."""
        return self._q_ref.copy()

    def gripper_width(self) -> float:
        """Servo width reading (tendon length), metres between the pads."""
        return float(self.data.ten_length[self.idx.width_tendon])

    def gripper_reference(self) -> float:
        """Last commanded gripper width reference, metres."""
        return self._width_ref

    def send(self, joint_target: np.ndarray, width_target: float) -> StepStatus:
        """Run one control period towards the targets; see :class:`LowLevelRobot`."""
        period = self._control_dt
        target = np.clip(joint_target, self._joint_lower, self._joint_upper)
        max_delta = JOINT_SPEED_LIMIT * period
        delta = np.clip(target - self._q_ref, -max_delta, max_delta)
        velocity = delta / period
        data = self.data
        data.act[self._arm_act] = self._q_ref + self._lead * velocity
        data.ctrl[self.idx.arm_actuators] = velocity
        self._q_ref = self._q_ref + delta
        width = min(max(float(width_target), GRIPPER_WIDTH_RANGE[0]), GRIPPER_WIDTH_RANGE[1])
        if self.servo_error is not None:
            width = self.servo_error.commanded(width)
        max_width_delta = GRIPPER_SPEED_LIMIT * period
        width_delta = min(max(width - self._width_ref, -max_width_delta), max_width_delta)
        data.act[self._gripper_act] = self._width_ref
        data.ctrl[self.idx.gripper_actuator] = width_delta / period
        self._width_ref += width_delta
        mujoco.mj_step(self.model, data, nstep=self.n_substeps)
        counts = data.warning.number[_DIVERGENCE_WARNINGS]
        diverged = bool(np.any(counts > self._warning_counts))
        self._warning_counts = counts
        return StepStatus(diverged=diverged)

    def unexpected_contact(self) -> str | None:
        """See :meth:`LowLevelRobot.unexpected_contact`."""
        ncon = self.data.ncon
        if ncon == 0:
            return None
        pairs = self.data.contact.geom[:ncon]
        robot = self._robot_geom[pairs]
        arm = self._arm_geom[pairs]
        static = self._static_geom[pairs]
        bad = arm.any(axis=1) | (robot[:, 0] & static[:, 1]) | (robot[:, 1] & static[:, 0])
        if not bad.any():
            return None
        g1, g2 = pairs[int(np.argmax(bad))]
        return f"robot contact between {self._geom_name(g1)!r} and {self._geom_name(g2)!r}"

    def _geom_name(self, geom: int) -> str:
        model = self.model
        name = model.geom(geom).name
        return name or f"geom of body {model.body(model.geom_bodyid[geom]).name}"

