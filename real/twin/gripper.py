"""Twin gripper: the world's MuJoCo servo behind the emulated controller and a pty.

:class:`TwinServo` is the :class:`~agentic_env.real.twin.servo_emulator.ServoModel` of the
simulated fin-ray gripper; :func:`serial_gripper_twin` puts it behind a
:class:`~agentic_env.real.twin.servo_emulator.ServoControllerEmulator` and returns the same
:class:`~agentic_env.real.drivers.gripper_serial.SerialGripper` the real cell uses, talking
the documented line protocol over a pseudo-terminal.
"""

from __future__ import annotations

from agentic_env.real.drivers.gripper_serial import SerialGripper
from agentic_env.real.twin.servo_emulator import ServoControllerEmulator
from agentic_env.real.twin.world import TwinWorld
from agentic_env.robot.constants import GRIPPER_FORCE_LIMIT, GRIPPER_SPEED_LIMIT


class TwinServo:
    """The simulated gripper servo (speed and force limits are reported, not simulated:
    the MuJoCo servo runs at its model's limits)."""

    def __init__(self, world: TwinWorld) -> None:
        self.world = world
        self._limits = (GRIPPER_SPEED_LIMIT, GRIPPER_FORCE_LIMIT)

    def command(self, width: float) -> None:
        """New width target, metres."""
        with self.world.lock:
            self.world.gripper_target = width

    def hold(self) -> None:
        """Stop at the present width."""
        with self.world.lock:
            self.world.gripper_target = self.world.gripper_width()

    def position(self) -> float:
        """Present width, metres."""
        return self.world.gripper_width()

    def target(self) -> float:
        """Width target, metres."""
        return self.world.gripper_target

    def moving(self) -> bool:
        """Whether the width changed in the last control period."""
        return self.world.gripper_moving()

    def blocked(self) -> bool:
        """Stopped more than 1 mm short of a closing target (an object between the pads)."""
        with self.world.lock:
            width = self.world.gripper_width()
            return not self.world.gripper_moving() and width > self.world.gripper_target + 1e-3

    def set_limits(self, speed: float, force: float) -> None:
        """Record the speed (m/s) and force (N) limits."""
        self._limits = (speed, force)

    def limits(self) -> tuple[float, float]:
        """Speed (m/s) and force (N) limits."""
        return self._limits


def serial_gripper_twin(world: TwinWorld, timeout: float = 0.1, retries: int = 2
                        ) -> tuple[SerialGripper, ServoControllerEmulator]:
    """A started emulated controller for the world's gripper and the serial driver for it
    (not yet connected). Close the emulator after disconnecting the driver."""
    emulator = ServoControllerEmulator(TwinServo(world)).start()
    return SerialGripper(emulator.port, timeout=timeout, retries=retries), emulator
