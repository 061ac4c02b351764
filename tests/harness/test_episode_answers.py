"""Speed work must not change what an episode does: a few short sim-oracle episodes make the
same decisions as the recording in ``data/oracle_episodes.json`` — the same model verdicts,
the same primitives in the same order, the same outcome and score — with every pose and
distance within ``POSE_TOLERANCE`` of the recorded one. Not the last bits: floating point
differs between CPUs (another vendor's or BLAS kernel's rounding moves a pose by far less than
a millimetre), while a changed decision moves one by centimetres.

The recording was made before the episode loop was made faster (PDDL parse cache, one
segmentation render per observation, vectorised grasp sampling, cheap trace frames). Record it
again (only after a deliberate change of behaviour) with
``MUJOCO_GL=egl python tests/harness/test_episode_answers.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.harness.runner import run_episode

FIXTURE = Path(__file__).parent / "data" / "oracle_episodes.json"
#: Largest accepted difference of a recorded action's pose, width or distance entry (m, or
#: unit quaternion components).
POSE_TOLERANCE = 2e-3
#: (task, seed) of the recorded episodes: short ones that still pick, place, turn and open.
EPISODES: tuple[tuple[str, int], ...] = (("stacking", 1), ("reorientation", 0), ("kitchen", 1))


def record_episode(task: str, seed: int, monkeypatch: pytest.MonkeyPatch,
                   trace_root: Path | None = None) -> dict[str, Any]:
    """Run one perfect sim-oracle episode (lab) and return its actions, verdicts and score."""
    actions: list[dict[str, Any]] = []
    act = EnvRobotIO.act

    def recording_act(self: EnvRobotIO, action: dict[str, Any]) -> Any:
        actions.append({key: np.asarray(value, float).ravel().tolist()
                        for key, value in sorted(action.items())})
        return act(self, action)

    monkeypatch.setattr(EnvRobotIO, "act", recording_act)
    result = run_episode(EpisodeSpec(task, seed=seed, realism="ideal"), trace_root=trace_root)
    monkeypatch.undo()
    return {
        "task": task, "seed": seed, "actions": actions,
        "calls": [[c.module, c.verdict] for c in result.calls],
        "success": result.success, "score": result.score, "progress": result.progress,
        "replans": result.replans, "sim_s": result.sim_s,
    }


def _assert_same(recorded: dict[str, Any], now: dict[str, Any]) -> None:
    where = f"{now['task']} seed {now['seed']}"
    assert now["calls"] == recorded["calls"], where
    assert len(now["actions"]) == len(recorded["actions"]), where
    for index, (old, new) in enumerate(zip(recorded["actions"], now["actions"], strict=True)):
        assert old.keys() == new.keys(), f"{where} action {index}"
        for key in old:
            tolerance = 0.0 if key == "primitive" else POSE_TOLERANCE
            np.testing.assert_allclose(new[key], old[key], rtol=0, atol=tolerance,
                                       err_msg=f"{where} action {index} {key}")
    for key in ("success", "score", "progress", "replans"):
        assert now[key] == recorded[key], f"{where} {key}"
    assert now["sim_s"] == pytest.approx(recorded["sim_s"], rel=0.02), where


@pytest.mark.slow
@pytest.mark.parametrize(("task", "seed"), EPISODES)
def test_episode_answers_unchanged(task: str, seed: int, monkeypatch: pytest.MonkeyPatch,
                                   tmp_path: Path) -> None:
    recorded = {(e["task"], e["seed"]): e for e in json.loads(FIXTURE.read_text())}
    # with the trace and its video on: recording must not change the episode either
    _assert_same(recorded[task, seed], record_episode(task, seed, monkeypatch, tmp_path))


if __name__ == "__main__":
    with pytest.MonkeyPatch.context() as patch:
        episodes = [record_episode(task, seed, patch) for task, seed in EPISODES]
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text("[\n" + ",\n".join(json.dumps(e) for e in episodes) + "\n]\n")
    sys.exit(0)
