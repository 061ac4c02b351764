"""The real env's e-stop channel on the twin: while the twin arm's safety status (or the
operator console) reports an e-stop, every motion is refused with ``estop`` and the episode
goes on; the operator's release clears the latched emergency stop."""

from __future__ import annotations

import pytest

pytest.importorskip("serial")

from agentic_env.contract.actions import home, move_to, top_down_pose  # noqa: E402
from agentic_env.real.safety import SafetyFaultError  # noqa: E402

NEAR_POSE = top_down_pose([0.45, -0.05, 0.22])


def test_the_twins_estop_refuses_every_motion_until_released(twin_env) -> None:
    env, twin = twin_env
    twin.arm.emergency_stop()
    assert env.estop.pressed() and env.estop.controller_pressed()
    commands = twin.arm.commands
    for action in (move_to(NEAR_POSE), home()):
        _, _, terminated, truncated, info = env.step(action)
        assert not terminated and not truncated  # the episode goes on
        assert info["primitive"]["reason"] == "estop" and not info["primitive"]["ok"]
        assert info["estop"] == {"active": True}
    assert twin.arm.commands == commands  # no motion command reached the controller
    with pytest.raises(SafetyFaultError, match="still reports"):
        env.release_estop()  # the controller is still e-stopped: nothing is cleared
    twin.arm.release_emergency_stop()
    env.release_estop()
    assert env.safety_fault is None and not env.estop.pressed()
    info = env.step(move_to(NEAR_POSE))[4]
    assert info["primitive"]["ok"] and info["estop"] == {"active": False}


def test_the_operator_console_holds_the_estop(twin_env) -> None:
    env, twin = twin_env
    env.estop.press()
    assert not env.estop.controller_pressed()
    assert env.step(move_to(NEAR_POSE))[4]["primitive"]["reason"] == "estop"
    assert env.wait(0.01)["estop"] == {"active": True}
    env.release_estop()
    assert env.step(move_to(NEAR_POSE))[4]["primitive"]["ok"]
