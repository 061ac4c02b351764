"""The fin-ray gripper's serial line protocol (see ``docs/gripper_protocol.md``).

Every message is one ASCII line, NMEA style::

    $<seq>,<word>[,<field>...]*<XX>\\n

``seq`` is the request number (0-255, echoed by the reply so that late replies are told
apart), ``word`` the command or reply word and ``XX`` two upper-case hex digits: the XOR of
every byte between ``$`` and ``*``. Lengths are micrometres, speeds micrometres per second,
forces millinewtons, all non-negative integers.

This module only encodes and decodes; :mod:`agentic_env.real.drivers.gripper_serial` (host)
and :mod:`agentic_env.real.twin.servo_emulator` (controller) do the I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, IntFlag

#: Protocol version the host speaks; the controller reports its own in the ``ID`` reply.
PROTOCOL_VERSION = 1
#: Controller identity string in the ``ID`` reply.
DEVICE_NAME = "FINRAY-SERVO"
#: Longest accepted line, bytes including ``$`` and the newline.
MAX_LINE = 96
#: Sequence numbers wrap at this value.
SEQ_MODULO = 256
#: Sequence field of a reply to a request whose sequence number could not be read.
UNKNOWN_SEQ = "-"


class Command:
    """Request words (host -> controller).

    ``HELLO``: identify (reply ``ID,<name>,<version>``). ``SET_POSITION,<um>``: move to a
    width. ``READ``: present width (reply ``POS,<um>,<moving 0|1>``). ``SET_SPEED,<um/s>``,
    ``SET_FORCE,<mN>``: limits for later moves. ``STATUS``: full state (reply ``ST,...``).
    ``CLEAR``: clear a latched servo error. ``STOP``: hold the present width.
    """

    HELLO = "H"
    SET_POSITION = "P"
    READ = "R"
    SET_SPEED = "V"
    SET_FORCE = "F"
    STATUS = "S"
    CLEAR = "C"
    STOP = "X"


class Reply:
    """Reply words (controller -> host)."""

    OK = "OK"
    ID = "ID"
    POSITION = "POS"
    STATUS = "ST"
    ERROR = "ERR"


class ErrorCode(IntEnum):
    """Codes of ``ERR,<code>,<text>`` replies."""

    BAD_CHECKSUM = 1
    UNKNOWN_COMMAND = 2
    BAD_ARGUMENT = 3
    OUT_OF_RANGE = 4
    SERVO_FAULT = 5


class StatusFlag(IntFlag):
    """Bits of the ``flags`` field (hex) of the ``ST`` reply."""

    MOVING = 0x1
    BLOCKED = 0x2  # stopped short of the target by an object (force limit reached)
    FAULT = 0x4  # latched servo error (overload, over-temperature); cleared by CLEAR
    OVERHEAT = 0x8


#: Number of integer fields each request takes.
REQUEST_ARITY: dict[str, int] = {
    Command.HELLO: 0, Command.SET_POSITION: 1, Command.READ: 0, Command.SET_SPEED: 1,
    Command.SET_FORCE: 1, Command.STATUS: 0, Command.CLEAR: 0, Command.STOP: 0,
}


class FrameError(ValueError):
    """A line is not a well-formed message (missing ``$``/``*``, bad checksum or fields)."""

    def __init__(self, message: str, seq: int | None = None, bad_checksum: bool = False) -> None:
        super().__init__(message)
        self.seq = seq
        self.bad_checksum = bad_checksum


@dataclass(frozen=True)
class Message:
    """One decoded line: sequence number (``None`` when the sender could not read it), word
    and fields (strings)."""

    seq: int | None
    word: str
    fields: tuple[str, ...] = ()

    def int_field(self, index: int) -> int:
        """Field ``index`` as a non-negative integer.

        Raises:
            FrameError: if it is missing or not a non-negative decimal integer.
        """
        try:
            text = self.fields[index]
        except IndexError:
            raise FrameError(f"{self.word} has no field {index}", self.seq) from None
        if not text.isdigit():
            raise FrameError(f"{self.word} field {index} is not a non-negative integer: "
                             f"{text!r}", self.seq)
        return int(text)


def checksum(body: bytes) -> int:
    """XOR of ``body``'s bytes (the text between ``$`` and ``*``)."""
    value = 0
    for byte in body:
        value ^= byte
    return value


def encode(message: Message) -> bytes:
    """The wire form of ``message``, newline included."""
    seq = UNKNOWN_SEQ if message.seq is None else str(message.seq % SEQ_MODULO)
    body = ",".join([seq, message.word, *message.fields]).encode("ascii")
    return b"$" + body + b"*" + f"{checksum(body):02X}".encode("ascii") + b"\n"


def decode(line: bytes) -> Message:
    """Parse one line (with or without its newline).

    Raises:
        FrameError: on anything but a well-formed line with a correct checksum. Its ``seq``
            is set when the sequence number was readable, ``bad_checksum`` when only the
            checksum was wrong.
    """
    line = line.strip(b"\r\n")
    if len(line) > MAX_LINE:
        raise FrameError(f"line longer than {MAX_LINE} bytes")
    start, star = line.find(b"$"), line.rfind(b"*")
    if start != 0 or star < 0 or len(line) != star + 3:
        raise FrameError(f"not a $...*XX line: {line[:40]!r}")
    body = line[1:star]
    try:
        text = body.decode("ascii")
        sent = int(line[star + 1:], 16)
    except (UnicodeDecodeError, ValueError):
        raise FrameError(f"non-ASCII bytes or bad checksum digits: {line[:40]!r}") from None
    parts = text.split(",")
    seq = int(parts[0]) if parts[0].isdigit() and int(parts[0]) < SEQ_MODULO else None
    if checksum(body) != sent:
        raise FrameError(f"checksum {sent:02X} != {checksum(body):02X}", seq, bad_checksum=True)
    if len(parts) < 2 or (seq is None and parts[0] != UNKNOWN_SEQ) or not parts[1]:
        raise FrameError(f"need <seq>,<word>: {text!r}", seq)
    return Message(seq, parts[1], tuple(parts[2:]))


def metres_to_um(value: float) -> int:
    """Metres -> integer micrometres (rounded, never negative)."""
    return max(0, round(value * 1e6))


def um_to_metres(value: int) -> float:
    """Integer micrometres -> metres."""
    return value * 1e-6
