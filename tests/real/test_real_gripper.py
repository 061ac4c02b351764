"""The gripper line protocol over a pseudo-terminal pair with real pyserial I/O, against the
emulated servo controller: normal commands, garbled bytes both ways, timeouts, disconnects."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("serial")

from agentic_env.real.drivers.base import CommandRejectedError, ConnectionLostError  # noqa: E402
from agentic_env.real.drivers.gripper_serial import (  # noqa: E402
    GripperTimeoutError,
    SerialGripper,
)
from agentic_env.real.drivers.protocol import (  # noqa: E402
    ErrorCode,
    FrameError,
    Message,
    Reply,
    checksum,
    decode,
    encode,
)
from agentic_env.real.twin.servo_emulator import (  # noqa: E402
    KinematicServo,
    ServoControllerEmulator,
)


@pytest.fixture
def emulator() -> Iterator[ServoControllerEmulator]:
    with ServoControllerEmulator(KinematicServo(width=0.085)) as controller:
        yield controller


@pytest.fixture
def gripper(emulator: ServoControllerEmulator) -> Iterator[SerialGripper]:
    with SerialGripper(emulator.port, timeout=0.15, retries=2) as driver:
        yield driver


def wait_until_still(gripper: SerialGripper, limit: float = 2.0) -> None:
    deadline = time.monotonic() + limit
    while gripper.status().moving:
        assert time.monotonic() < deadline, "the servo never stopped"
        time.sleep(0.01)


def test_frames_round_trip_and_reject_corruption() -> None:
    message = Message(17, "P", ("42000",))
    wire = encode(message)
    assert wire == b"$17,P,42000*" + f"{checksum(b'17,P,42000'):02X}".encode() + b"\n"
    assert decode(wire) == message
    assert wire == b"$17,P,42000*60\n"  # the example in docs/gripper_protocol.md
    corrupted = wire.replace(b"42000", b"42001")
    with pytest.raises(FrameError) as error:
        decode(corrupted)
    assert error.value.bad_checksum and error.value.seq == 17
    for garbage in (b"", b"17,P*00", b"$17,P", b"\x00\xff$1,R*00", b"$" + b"9" * 200 + b"*00"):
        with pytest.raises(FrameError):
            decode(garbage)


def test_position_speed_force_and_status(gripper: SerialGripper) -> None:
    assert gripper.read_position() == pytest.approx(0.085)
    gripper.set_speed(0.1)
    gripper.set_force(15.0)
    gripper.set_position(0.03)
    assert gripper.status().moving
    wait_until_still(gripper)
    status = gripper.status()
    assert status.width == pytest.approx(0.03, abs=1e-6)
    assert status.target == pytest.approx(0.03)
    assert status.speed == pytest.approx(0.1) and status.force == pytest.approx(15.0)
    assert not status.blocked and not status.fault


def test_closing_on_an_object_reports_blocked(emulator: ServoControllerEmulator,
                                              gripper: SerialGripper) -> None:
    emulator.servo.obstacle = 0.04
    gripper.set_position(0.0)
    wait_until_still(gripper)
    status = gripper.status()
    assert status.blocked and status.width == pytest.approx(0.04, abs=1e-6)
    assert status.target == 0.0


def test_out_of_range_and_servo_fault_are_rejected(emulator: ServoControllerEmulator,
                                                   gripper: SerialGripper) -> None:
    with pytest.raises(CommandRejectedError, match="error 4"):
        gripper.set_speed(5.0)
    emulator.latch_fault()
    assert gripper.status().fault
    with pytest.raises(CommandRejectedError, match="error 5"):
        gripper.set_position(0.02)
    gripper.clear_error()
    gripper.set_position(0.02)
    assert not gripper.status().fault


def test_garbled_replies_are_retried(emulator: ServoControllerEmulator,
                                     gripper: SerialGripper) -> None:
    emulator.garble_replies(2)  # within the two retries
    assert gripper.read_position() == pytest.approx(0.085)
    assert gripper.retried == 1
    emulator.garble_replies(3)
    with pytest.raises(GripperTimeoutError, match="garbled reply"):
        gripper.read_position()
    assert gripper.read_position() == pytest.approx(0.085)  # the link recovers


def test_lost_replies_time_out_then_recover(emulator: ServoControllerEmulator,
                                            gripper: SerialGripper) -> None:
    emulator.drop_replies(1)
    gripper.set_position(0.05)  # answered on the retry
    emulator.drop_replies(3)
    started = time.monotonic()
    with pytest.raises(GripperTimeoutError, match="timeout"):
        gripper.read_position()
    assert time.monotonic() - started >= 3 * 0.15
    assert gripper.status().target == pytest.approx(0.05)


def test_partial_and_late_replies_are_reassembled(emulator: ServoControllerEmulator) -> None:
    # 0.2 s tries: the late half (0.3 s) lands 0.1 s into the second try, clear of both ends
    # even on a loaded machine
    with SerialGripper(emulator.port, timeout=0.2, retries=2) as gripper:
        emulator.slow_replies(1, 0.05)  # split, well within the timeout
        assert gripper.read_position() == pytest.approx(0.085)
        assert gripper.retried == 0
        emulator.slow_replies(1, 0.3)  # the rest arrives after the first try timed out
        assert gripper.read_position() == pytest.approx(0.085)
        assert gripper.retried == 1


def test_garbled_request_bytes_get_a_checksum_error(emulator: ServoControllerEmulator) -> None:
    import serial

    with serial.Serial(emulator.port, 115200, timeout=0.2) as port:
        port.write(b"\x13\xfe noise\n")
        reply = decode(port.read_until(b"\n"))
        assert reply.word == Reply.ERROR and reply.fields[0] == str(int(ErrorCode.BAD_CHECKSUM))
        bad = bytearray(encode(Message(5, "R")))
        bad[2] ^= 0x02  # corrupt the command word, keep the sequence number
        port.write(bytes(bad))
        assert decode(port.read_until(b"\n")).word == Reply.ERROR
        port.write(encode(Message(6, "Z")))
        reply = decode(port.read_until(b"\n"))
        assert reply.seq == 6 and reply.fields[0] == str(int(ErrorCode.UNKNOWN_COMMAND))
        port.write(encode(Message(7, "P", ("-5",))))
        assert decode(port.read_until(b"\n")).fields[0] == str(int(ErrorCode.BAD_ARGUMENT))


def test_disconnect_raises_connection_lost(emulator: ServoControllerEmulator,
                                           gripper: SerialGripper) -> None:
    emulator.disconnect()
    with pytest.raises(ConnectionLostError):
        gripper.read_position()
    gripper.disconnect()  # exit path still closes without raising


def test_silent_port_times_out_on_connect() -> None:
    master, slave = os.openpty()
    try:
        with pytest.raises(GripperTimeoutError):
            SerialGripper(os.ttyname(slave), timeout=0.02, retries=0).connect()
    finally:
        os.close(master)
        os.close(slave)
