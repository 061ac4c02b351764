"""An emulated gripper servo controller speaking the line protocol over a pseudo-terminal.

:class:`ServoControllerEmulator` plays the gripper's microcontroller: a thread reads
requests from the controller end of a pseudo-terminal pair (``os.openpty``) and answers them
as documented in ``docs/gripper_protocol.md``; the host end is an ordinary serial device
path for :class:`~agentic_env.real.drivers.gripper_serial.SerialGripper` (real pyserial
I/O). The servo behind it is a :class:`ServoModel`: :class:`KinematicServo` (rate-limited, in
wall-clock time) for protocol tests, or the MuJoCo gripper of the twin.

Fault injection: :meth:`~ServoControllerEmulator.garble_replies` (corrupt bytes in the next
replies), :meth:`~ServoControllerEmulator.drop_replies` (stay silent: host timeouts),
:meth:`~ServoControllerEmulator.slow_replies` (replies split and late),
:meth:`~ServoControllerEmulator.latch_fault` (servo overload) and
:meth:`~ServoControllerEmulator.disconnect` (the cable is pulled).
"""

from __future__ import annotations

import logging
import os
import select
import threading
import time
import tty
from collections.abc import Callable
from types import TracebackType
from typing import Protocol, Self

from agentic_env.real.drivers.protocol import (
    DEVICE_NAME,
    MAX_LINE,
    PROTOCOL_VERSION,
    REQUEST_ARITY,
    Command,
    ErrorCode,
    FrameError,
    Message,
    Reply,
    StatusFlag,
    decode,
    encode,
    metres_to_um,
    um_to_metres,
)
from agentic_env.robot.constants import (
    GRIPPER_FORCE_LIMIT,
    GRIPPER_SPEED_LIMIT,
    GRIPPER_WIDTH_RANGE,
)

logger = logging.getLogger(__name__)


class ServoModel(Protocol):
    """The servo the emulated controller drives (widths in metres)."""

    def command(self, width: float) -> None:
        """New width target, metres."""
        ...

    def hold(self) -> None:
        """Stop at the present width."""
        ...

    def position(self) -> float:
        """Present width, metres."""
        ...

    def target(self) -> float:
        """Width target, metres."""
        ...

    def moving(self) -> bool:
        """Whether the width is changing."""
        ...

    def blocked(self) -> bool:
        """Stopped short of the target by an object."""
        ...

    def set_limits(self, speed: float, force: float) -> None:
        """Speed (m/s) and force (N) limits."""
        ...

    def limits(self) -> tuple[float, float]:
        """Speed (m/s) and force (N) limits."""
        ...


class KinematicServo:
    """A rate-limited servo in wall-clock time that stops at an optional object width.

    Args:
        width: initial opening, metres.
        obstacle: width of an object between the pads (closing stops there), or ``None``.
        clock: time source, seconds.
    """

    def __init__(self, width: float = GRIPPER_WIDTH_RANGE[1], obstacle: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._start_width = self._target = width
        self._start_time = clock()
        self.obstacle = obstacle
        self.speed = GRIPPER_SPEED_LIMIT
        self.force = GRIPPER_FORCE_LIMIT

    def _limit(self) -> float:
        if self.obstacle is not None and self._target < self.obstacle <= self._start_width:
            return self.obstacle
        return self._target

    def position(self) -> float:
        """Present width, metres."""
        goal = self._limit()
        travel = self.speed * (self._clock() - self._start_time)
        step = min(travel, abs(goal - self._start_width))
        return self._start_width + step * (1.0 if goal >= self._start_width else -1.0)

    def command(self, width: float) -> None:
        """New width target, metres."""
        self._start_width, self._start_time = self.position(), self._clock()
        self._target = width

    def hold(self) -> None:
        """Stop at the present width."""
        self.command(self.position())

    def target(self) -> float:
        """Width target, metres."""
        return self._target

    def moving(self) -> bool:
        """Whether the width is still changing."""
        return abs(self.position() - self._limit()) > 1e-7

    def blocked(self) -> bool:
        """Stopped at the object, short of the target."""
        return not self.moving() and self._limit() != self._target

    def set_limits(self, speed: float, force: float) -> None:
        """Speed (m/s) and force (N) limits."""
        self.command(self.position())
        self.speed, self.force = speed, force

    def limits(self) -> tuple[float, float]:
        """Speed (m/s) and force (N) limits."""
        return self.speed, self.force


class ServoControllerEmulator:
    """The gripper's microcontroller, answering on a pseudo-terminal (see module docstring).

    Args:
        servo: the servo it drives.

    Attributes:
        port: path of the host end, to open with pyserial.
        requests: number of well-formed requests answered.
    """

    def __init__(self, servo: ServoModel) -> None:
        self.servo = servo
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        self.port = os.ttyname(self._slave)
        self.requests = 0
        self._lock = threading.Lock()
        self._garble = 0
        self._drop = 0
        self._slow: tuple[int, float] = (0, 0.0)
        self._fault = False
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="servo-emulator", daemon=True)

    def start(self) -> Self:
        """Start answering requests."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop the thread and close both ends (safe to call twice)."""
        self._closed.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        for fd in (self._master, self._slave):
            if fd >= 0:
                os.close(fd)
        self._master = self._slave = -1

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- fault injection --------------------------------------------------------------------

    def garble_replies(self, count: int) -> None:
        """Flip a bit in each of the next ``count`` replies (the checksum no longer matches)."""
        with self._lock:
            self._garble += count

    def drop_replies(self, count: int) -> None:
        """Answer nothing to the next ``count`` requests (the host times out)."""
        with self._lock:
            self._drop += count

    def slow_replies(self, count: int, pause: float) -> None:
        """Send each of the next ``count`` replies in two pieces ``pause`` s apart (a busy
        controller: the host sees a partial line, then the rest, possibly after its
        timeout)."""
        with self._lock:
            self._slow = (count, pause)

    def latch_fault(self) -> None:
        """Latch a servo fault (overload): moves are refused until ``CLEAR``."""
        with self._lock:
            self._fault = True
        self.servo.hold()

    def disconnect(self) -> None:
        """Pull the cable: close the controller end; the host's next I/O fails."""
        self._closed.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        os.close(self._master)
        self._master = -1

    # -- serving ----------------------------------------------------------------------------

    def _serve(self) -> None:
        buffer = b""
        while not self._closed.is_set():
            ready, _, _ = select.select([self._master], [], [], 0.01)
            if not ready:
                continue
            try:
                chunk = os.read(self._master, 256)
            except OSError:  # the host end was closed
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                self._answer(line)
            if len(buffer) > MAX_LINE:  # noise without a newline: resynchronise
                buffer = b""

    def _answer(self, line: bytes) -> None:
        reply = self._handle(line)
        with self._lock:
            if self._drop:
                self._drop -= 1
                return
            data = encode(reply)
            if self._garble:
                self._garble -= 1
                data = data[:3] + bytes([data[3] ^ 0x01]) + data[4:]
            slow, pause = self._slow
            if slow:
                self._slow = (slow - 1, pause)
        pieces = [data[:2], data[2:]] if slow else [data]
        try:
            for index, piece in enumerate(pieces):
                if index:
                    time.sleep(pause)
                os.write(self._master, piece)
        except OSError as error:
            logger.debug("reply not written: %s", error)

    def _handle(self, line: bytes) -> Message:
        try:
            request = decode(line)
        except FrameError as error:
            return _error(error.seq, ErrorCode.BAD_CHECKSUM, "garbled request")
        seq, word = request.seq, request.word
        if word not in REQUEST_ARITY:
            return _error(seq, ErrorCode.UNKNOWN_COMMAND, f"unknown command {word}")
        if len(request.fields) != REQUEST_ARITY[word]:
            return _error(seq, ErrorCode.BAD_ARGUMENT,
                          f"{word} takes {REQUEST_ARITY[word]} fields")
        try:
            values = [request.int_field(i) for i in range(len(request.fields))]
        except FrameError:
            return _error(seq, ErrorCode.BAD_ARGUMENT, "fields must be non-negative integers")
        self.requests += 1
        return self._execute(seq, word, values)

    def _execute(self, seq: int | None, word: str, values: list[int]) -> Message:
        servo = self.servo
        ok = Message(seq, Reply.OK)
        if word == Command.HELLO:
            return Message(seq, Reply.ID, (DEVICE_NAME, str(PROTOCOL_VERSION)))
        if word == Command.READ:
            return Message(seq, Reply.POSITION,
                           (str(metres_to_um(servo.position())), str(int(servo.moving()))))
        if word == Command.STATUS:
            flags = ((StatusFlag.MOVING if servo.moving() else 0)
                     | (StatusFlag.BLOCKED if servo.blocked() else 0)
                     | (StatusFlag.FAULT if self._fault else 0))
            speed, force = servo.limits()
            return Message(seq, Reply.STATUS, (
                f"{int(flags):X}", str(metres_to_um(servo.position())),
                str(metres_to_um(servo.target())), str(metres_to_um(speed)),
                str(round(force * 1000))))
        if word == Command.CLEAR:
            with self._lock:
                self._fault = False
            return ok
        if word == Command.STOP:
            servo.hold()
            return ok
        if self._fault:
            return _error(seq, ErrorCode.SERVO_FAULT, "servo fault latched; send C to clear")
        value = values[0]
        if word == Command.SET_POSITION:
            if value > metres_to_um(GRIPPER_WIDTH_RANGE[1]):
                return _error(seq, ErrorCode.OUT_OF_RANGE,
                              f"width {value} um outside 0..{metres_to_um(GRIPPER_WIDTH_RANGE[1])}")
            servo.command(um_to_metres(value))
            return ok
        speed, force = servo.limits()
        if word == Command.SET_SPEED:
            if not 0 < value <= metres_to_um(GRIPPER_SPEED_LIMIT):
                return _error(seq, ErrorCode.OUT_OF_RANGE,
                              f"speed {value} um/s outside 1..{metres_to_um(GRIPPER_SPEED_LIMIT)}")
            servo.set_limits(um_to_metres(value), force)
            return ok
        if not 0 < value <= round(GRIPPER_FORCE_LIMIT * 1000):  # SET_FORCE
            return _error(seq, ErrorCode.OUT_OF_RANGE,
                          f"force {value} mN outside 1..{round(GRIPPER_FORCE_LIMIT * 1000)}")
        servo.set_limits(speed, value / 1000.0)
        return ok


def _error(seq: int | None, code: ErrorCode, text: str) -> Message:
    return Message(seq, Reply.ERROR, (str(int(code)), text.replace(",", ";")))
