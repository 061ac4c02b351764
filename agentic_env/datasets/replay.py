"""Open-loop replay of a recorded demonstration (``agentic-env replay-demo``).

Rebuilds the episode's trial from its TrialSpec (bitwise: same object poses, dressing and
instruction), then sends the recorded actions one control period at a time, without looking
at the result: ``action`` (joint targets + gripper width) in ``joint_position`` mode, or
``action.ee_delta`` in ``ee_delta`` mode. The report says whether the outcome (success,
progress) is reproduced and how far the replayed robot drifts from the recorded one.

Limits: the recorded joint targets are float32 (the primitives sent float64), so the replay
is close but not bitwise; contact-rich moments can amplify that. Disturbances are triggered by
primitive events, which low-level replay does not have, so an episode recorded with
disturbances replays without them (the report says so). ``ee_delta`` actions are clipped to
[-1, 1] by the env and re-solved by IK, so that mode drifts where the expert moved faster than
the ``ee_delta`` scale.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agentic_env.datasets.reader import DatasetReader
from agentic_env.errors import InvalidConfigError

#: Replay modes -> the dataset column they send.
MODES: dict[str, str] = {"joint_position": "action", "ee_delta": "action.ee_delta"}
#: Joint drift (rad) under which a replay counts as faithful.
JOINT_TOLERANCE = 0.01


@dataclass(frozen=True)
class ReplayReport:
    """Fidelity of one open-loop replay.

    Attributes:
        episode: episode index in the dataset.
        mode: ``joint_position`` or ``ee_delta``.
        frames: frames compared.
        recorded_success / replayed_success: the task outcome in the recording / the replay.
        recorded_progress / replayed_progress: fraction of goal predicates satisfied, 0..1.
        initial_state_error: max |state| difference at frame 0 (reset reproduction).
        max_joint_error: largest joint position difference over the episode, rad.
        final_joint_error: joint difference at the last frame, rad.
        max_tcp_error: largest TCP position difference, metres.
        max_gripper_error: largest gripper width difference, metres.
        disturbances_skipped: disturbances the recording applied that replay cannot.
    """

    episode: int
    mode: str
    frames: int
    recorded_success: bool
    replayed_success: bool
    recorded_progress: float
    replayed_progress: float
    initial_state_error: float
    max_joint_error: float
    final_joint_error: float
    max_tcp_error: float
    max_gripper_error: float
    disturbances_skipped: int

    @property
    def outcome_reproduced(self) -> bool:
        """Same success and the same progress."""
        return (self.recorded_success == self.replayed_success
                and abs(self.recorded_progress - self.replayed_progress) < 1e-9)

    @property
    def faithful(self) -> bool:
        """Outcome reproduced and the joints never drifted more than :data:`JOINT_TOLERANCE`."""
        return self.outcome_reproduced and self.max_joint_error < JOINT_TOLERANCE


def replay_episode(root: str | Path, episode: int = 0, mode: str = "joint_position",
                   resolution: tuple[int, int] = (64, 48)) -> ReplayReport:
    """Replay ``episode`` of the dataset at ``root`` open-loop and compare.

    Args:
        root: dataset folder.
        episode: episode index.
        mode: ``joint_position`` (exact targets) or ``ee_delta``.
        resolution: camera resolution of the replay env (images are not compared; small is
            fast).

    Raises:
        InvalidConfigError: on an unknown mode or an episode index out of range.
    """
    from agentic_env.contract.workcell import SceneConfig
    from agentic_env.envs.sim_env import SimEnv

    if mode not in MODES:
        raise InvalidConfigError(f"unknown replay mode {mode!r}; valid: {', '.join(MODES)}")
    reader = DatasetReader(root)
    if not 0 <= episode < len(reader):
        raise InvalidConfigError(f"episode {episode} is out of range 0..{len(reader) - 1}")
    row = reader.episodes[episode]
    trial = reader.trial(episode)
    frames = reader.frames(episode)
    actions = frames[MODES[mode]]
    scene = SceneConfig.at_resolution(*resolution)
    env = SimEnv(task=trial["task"], setting=trial["setting"], scene=scene, control_mode=mode,
                 control_hz=reader.fps, max_episode_steps=len(actions) + 1,
                 realism=trial.get("realism", "ideal"))  # the world it was recorded in
    try:
        obs, info = env.reset(options={"trial": trial})
        recorded = frames["observation.state"]
        states = [np.concatenate([obs["joint_positions"], obs["gripper_width"]])]
        tcp = [obs["tcp_pose"][:3]]
        for action in actions[:-1]:  # the last frame's action only holds the final targets
            obs, _, _, _, info = env.step(action)
            states.append(np.concatenate([obs["joint_positions"], obs["gripper_width"]]))
            tcp.append(obs["tcp_pose"][:3])
    finally:
        env.close()
    replayed = np.asarray(states)
    joint_error = np.abs(replayed[:, :6] - recorded[:, :6]).max(axis=1)
    tcp_error = np.linalg.norm(np.asarray(tcp) - frames["observation.tcp_pose"][:, :3], axis=1)
    return ReplayReport(
        episode=episode, mode=mode, frames=len(recorded),
        recorded_success=bool(row["agentic_env/success"]),
        replayed_success=bool(info["success"]),
        recorded_progress=float(row["agentic_env/progress"]),
        replayed_progress=float(info["progress"]),
        initial_state_error=float(np.abs(replayed[0] - recorded[0]).max()),
        max_joint_error=float(joint_error.max()),
        final_joint_error=float(joint_error[-1]),
        max_tcp_error=float(tcp_error.max()),
        max_gripper_error=float(np.abs(replayed[:, 6] - recorded[:, 6]).max()),
        disturbances_skipped=len(json.loads(row["agentic_env/disturbances_applied"])),
    )


def format_report(report: ReplayReport) -> str:
    """Human-readable summary of a replay."""
    verdict = "FAITHFUL" if report.faithful else (
        "OUTCOME REPRODUCED" if report.outcome_reproduced else "NOT REPRODUCED")
    lines = [
        f"episode {report.episode} ({report.mode}, {report.frames} frames): {verdict}",
        f"  success recorded {report.recorded_success} / replayed {report.replayed_success}; "
        f"progress {report.recorded_progress:.2f} / {report.replayed_progress:.2f}",
        f"  joint drift max {report.max_joint_error:.2e} rad (final "
        f"{report.final_joint_error:.2e}); TCP drift max {report.max_tcp_error * 1000:.2f} mm; "
        f"gripper max {report.max_gripper_error * 1000:.2f} mm; reset error "
        f"{report.initial_state_error:.1e}",
    ]
    if report.disturbances_skipped:
        lines.append(f"  {report.disturbances_skipped} recorded disturbances were not replayed "
                     "(they are triggered by primitive events)")
    return "\n".join(lines)
