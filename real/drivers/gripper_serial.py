"""Host side of the gripper line protocol over a serial port (pyserial).

Each request waits for the reply carrying its sequence number. A reply that is garbled
(bad checksum, broken line), an ``ERR,1`` (the controller saw a garbled request) or no reply
within ``timeout`` is retried up to ``retries`` times — every request is idempotent (widths
and limits are absolute), so a late reply to an earlier try of the same request is accepted
too — after which :class:`GripperTimeoutError` is raised. Replies to other requests are
discarded; partial lines wait for their rest. A vanished port
raises :class:`~agentic_env.real.drivers.base.ConnectionLostError`.
"""

from __future__ import annotations

import logging
import time

from agentic_env.real.drivers.base import (
    CommandRejectedError,
    Connectable,
    ConnectionLostError,
    DriverError,
    GripperStatus,
    require,
)
from agentic_env.real.drivers.protocol import (
    DEVICE_NAME,
    MAX_LINE,
    PROTOCOL_VERSION,
    SEQ_MODULO,
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
from agentic_env.robot.constants import GRIPPER_WIDTH_RANGE

logger = logging.getLogger(__name__)
#: Shortest write timeout, seconds: a write only blocks when the port is stuck, and pyserial
#: also counts the time the writing thread waited for the CPU.
_MIN_WRITE_TIMEOUT = 0.5


class GripperTimeoutError(DriverError):
    """The servo controller gave no valid reply within the timeout, after every retry."""


class SerialGripper(Connectable):
    """:class:`~agentic_env.real.drivers.base.GripperDriver` over a serial line.

    Args:
        port: serial device (``/dev/ttyACM0``, or a pseudo-terminal in tests).
        baudrate: bits per second (8N1).
        timeout: longest wait for one reply, seconds.
        retries: extra attempts after a garbled or missing reply.
    """

    def __init__(self, port: str, baudrate: int = 115200, timeout: float = 0.1,
                 retries: int = 2) -> None:
        self.port = port
        self.baudrate = baudrate
        self.timeout = timeout
        self.retries = retries
        self._serial = None
        self._seq = 0
        self._received = b""
        #: Requests that needed a retry (garbled or lost replies), for diagnostics.
        self.retried = 0

    # -- lifecycle --------------------------------------------------------------------------

    def connect(self) -> None:
        """Open the port and check the controller's identity and protocol version.

        Raises:
            MissingDriverError: without pyserial.
            ConnectionLostError: if the port cannot be opened.
            DriverError: on another device or protocol version.
        """
        serial = require("serial", "the gripper driver",
                         "install the 'real' extra: pip install 'agentic-env[real]'")
        try:
            self._serial = serial.Serial(self.port, self.baudrate, timeout=self.timeout,
                                         write_timeout=max(_MIN_WRITE_TIMEOUT, 10 * self.timeout))
        except (serial.SerialException, OSError) as error:
            raise ConnectionLostError(f"cannot open gripper port {self.port}: {error}") from None
        self._serial.reset_input_buffer()
        self._received = b""
        reply = self._request(Command.HELLO)
        name, version = (reply.fields + ("", ""))[:2]
        if reply.word != Reply.ID or name != DEVICE_NAME or version != str(PROTOCOL_VERSION):
            self.disconnect()
            raise DriverError(
                f"{self.port} is not a {DEVICE_NAME} speaking protocol {PROTOCOL_VERSION} "
                f"(it answered {reply.word},{','.join(reply.fields)}); check the port"
            )

    def disconnect(self) -> None:
        """Ask the servo to hold its width (best effort) and close the port."""
        if self._serial is None:
            return
        try:
            self._request(Command.STOP)
        except DriverError as error:
            logger.warning("gripper stop on disconnect failed: %s", error)
        finally:
            self._serial.close()
            self._serial = None

    # -- commands ---------------------------------------------------------------------------

    def set_position(self, width: float) -> None:
        """Command the opening, metres (clamped to 0-0.085)."""
        width = min(max(width, GRIPPER_WIDTH_RANGE[0]), GRIPPER_WIDTH_RANGE[1])
        self._expect_ok(self._request(Command.SET_POSITION, metres_to_um(width)))

    def read_position(self) -> float:
        """Present opening, metres."""
        reply = self._request(Command.READ)
        self._expect(reply, Reply.POSITION)
        return um_to_metres(self._int(reply, 0))

    def set_speed(self, speed: float) -> None:
        """Width speed limit, m/s (> 0)."""
        self._expect_ok(self._request(Command.SET_SPEED, metres_to_um(speed)))

    def set_force(self, force: float) -> None:
        """Grip force limit, newtons (> 0)."""
        self._expect_ok(self._request(Command.SET_FORCE, round(force * 1000)))

    def status(self) -> GripperStatus:
        """Full servo state (``ST,<flags hex>,<width>,<target>,<speed>,<force>``)."""
        reply = self._request(Command.STATUS)
        self._expect(reply, Reply.STATUS)
        try:
            flags = StatusFlag(int(reply.fields[0], 16))
        except (IndexError, ValueError):
            raise DriverError(f"bad status flags in {reply}") from None
        return GripperStatus(
            width=um_to_metres(self._int(reply, 1)), target=um_to_metres(self._int(reply, 2)),
            moving=StatusFlag.MOVING in flags, blocked=StatusFlag.BLOCKED in flags,
            fault=StatusFlag.FAULT in flags, speed=um_to_metres(self._int(reply, 3)),
            force=self._int(reply, 4) / 1000.0,
        )

    def stop(self) -> None:
        """Hold the present width."""
        self._expect_ok(self._request(Command.STOP))

    def clear_error(self) -> None:
        """Clear a latched servo fault (an operator decision: call it only after checking)."""
        self._expect_ok(self._request(Command.CLEAR))

    # -- transport --------------------------------------------------------------------------

    def _request(self, word: str, *args: int) -> Message:
        if self._serial is None:
            raise ConnectionLostError("the gripper is not connected; call connect() first")
        problems = []
        tries: set[int] = set()
        for attempt in range(self.retries + 1):
            seq = self._seq
            self._seq = (self._seq + 1) % SEQ_MODULO
            tries.add(seq)
            self._write(encode(Message(seq, word, tuple(str(a) for a in args))))
            reply, problem = self._await_reply(tries, seq)
            if reply is not None:
                if attempt:
                    self.retried += 1
                return reply
            problems.append(problem)
        raise GripperTimeoutError(
            f"gripper request {word} got no valid reply in {self.retries + 1} tries of "
            f"{self.timeout * 1000:.0f} ms ({'; '.join(problems)}); check the cable and the "
            "controller's power"
        )

    def _await_reply(self, tries: set[int], latest: int) -> tuple[Message | None, str]:
        """A reply to any try of this request (a late answer to an earlier try is as good:
        requests are idempotent), or (None, why not) on timeout or a garbled reply."""
        deadline = time.monotonic() + self.timeout
        problem = "timeout"
        while time.monotonic() < deadline:
            line = self._next_line()
            if line is None:
                continue
            try:
                reply = decode(line)
            except FrameError as error:
                problem = f"garbled reply: {error}"
                if error.seq == latest:
                    return None, problem  # our reply was corrupted: no other one will come
                continue
            if reply.word == Reply.ERROR and reply.fields[:1] == (str(ErrorCode.BAD_CHECKSUM),):
                if reply.seq is None or reply.seq == latest:
                    return None, "the controller saw a garbled request"
                continue
            if reply.seq in tries:
                return reply, ""
        return None, problem

    def _next_line(self) -> bytes | None:
        """The next complete line received (without its newline), or ``None`` after the
        port's read timeout. Partial lines wait in a buffer for their rest."""
        if b"\n" not in self._received:
            self._received += self._read()
        if b"\n" in self._received:
            line, self._received = self._received.split(b"\n", 1)
            return line
        if len(self._received) > MAX_LINE:  # noise without a newline: resynchronise
            self._received = b""
        return None

    def _write(self, data: bytes) -> None:
        import serial

        try:
            self._serial.write(data)
        except (serial.SerialException, OSError) as error:
            raise ConnectionLostError(f"gripper port {self.port} failed: {error}") from None

    def _read(self) -> bytes:
        import serial

        try:
            return self._serial.read_until(b"\n", MAX_LINE)
        except (serial.SerialException, OSError) as error:
            raise ConnectionLostError(f"gripper port {self.port} failed: {error}") from None

    @staticmethod
    def _expect(reply: Message, word: str) -> None:
        if reply.word == Reply.ERROR:
            code = reply.fields[0] if reply.fields else "?"
            text = reply.fields[1] if len(reply.fields) > 1 else ""
            raise CommandRejectedError(f"gripper controller error {code}: {text}")
        if reply.word != word:
            raise DriverError(f"gripper answered {reply.word} where {word} was expected")

    def _expect_ok(self, reply: Message) -> None:
        self._expect(reply, Reply.OK)

    @staticmethod
    def _int(reply: Message, index: int) -> int:
        try:
            return reply.int_field(index)
        except FrameError as error:
            raise DriverError(f"malformed gripper reply: {error}") from None
