"""The e-stop channel the real env obeys: the UR controller's safety status plus an operator
console.

While :meth:`EStopChannel.pressed` holds, :class:`~agentic_env.real.real_env.RealEnv`
refuses every motion with the primitive failure reason ``estop`` (as the sim does) instead
of ending the episode. The channel is pressed when the controller's safety status bits show
an emergency stop (the pendant's or the cell's e-stop; on the twin, the twin arm's bits) or
when the operator console holds it (:meth:`press`). Releasing is the operator's act:
:meth:`release` lets go of the console's hold, and the env then clears a latched
emergency-stop fault only if the controller no longer reports one
(:meth:`RealEnv.release_estop`).
"""

from __future__ import annotations

from agentic_env.real.drivers.base import ArmDriver, DriverError, SafetyBits

#: Safety status bits that mean an emergency stop.
ESTOP_BITS = (SafetyBits.EMERGENCY_STOPPED | SafetyBits.ROBOT_EMERGENCY_STOPPED
              | SafetyBits.SYSTEM_EMERGENCY_STOPPED)


class EStopChannel:
    """Whether the e-stop is pressed, from the controller and the operator console.

    Args:
        arm: the arm driver whose safety status is read (hardware or twin).
    """

    def __init__(self, arm: ArmDriver) -> None:
        self._arm = arm
        self._console = False

    def press(self) -> None:
        """The operator console's e-stop button: hold every motion from now on."""
        self._console = True

    def release(self) -> None:
        """The operator console lets go (the controller's own e-stop is released on the
        cell's button and the pendant)."""
        self._console = False

    def controller_pressed(self) -> bool:
        """Whether the controller reports an emergency stop (``False`` without a link: a
        lost link is a fault of its own)."""
        try:
            bits = SafetyBits(self._arm.read_state().safety_bits)
        except DriverError:
            return False
        return bool(bits & ESTOP_BITS)

    def pressed(self) -> bool:
        """Whether the console holds the e-stop or the controller reports one."""
        return self._console or self.controller_pressed()
