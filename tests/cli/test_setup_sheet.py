"""The setup sheet command writes a picture and a trial spec that rebuilds the same scene."""

from __future__ import annotations

from pathlib import Path

import imageio.v2 as imageio
import numpy as np

from agentic_env.cli import setup_sheet
from agentic_env.contract.trial import TrialSpec
from agentic_env.envs.sim_env import SimEnv


def test_setup_sheet_writes_a_drawing_and_a_replayable_trial(tmp_path: Path) -> None:
    assert setup_sheet.main(["--task", "stacking", "--seed", "3", "--out", str(tmp_path)]) == 0
    sheet = imageio.imread(tmp_path / "setup_sheet.png")
    assert sheet.ndim == 3 and sheet.shape[0] > 500
    assert (sheet < 128).mean() > 0.005  # lines, labels and objects were drawn
    spec = TrialSpec.load(tmp_path / "trial.json")
    assert spec.task == "stacking" and spec.seed == 3
    env = SimEnv(task="stacking", realism="ideal")
    try:
        _, info = env.reset(options={"trial": spec})
        assert info["instruction"] == spec.instruction
        for pose in spec.objects:
            if pose.position[2] > 0:  # on the table (parked cubes lie on the floor)
                np.testing.assert_allclose(env.trial.objects[spec.objects.index(pose)].position,
                                           pose.position)
    finally:
        env.close()
