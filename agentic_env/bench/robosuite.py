"""``agentic-env bench-robosuite``: env steps per second against robosuite, in both worlds.

Runs, in turns (``--rounds`` times; each round's ratios are measured back to back, so that
background load hits them alike, and their median is the figure):

* this env (``joint_position`` control at 20 Hz, both cameras RGB + depth at 640x480, every
  observation rendered and checked) in the **ideal** world and in the **realistic** one, on
  the stacking task's layout;
* robosuite's ``Lift`` with a Panda (its own operational-space controller at 20 Hz, two
  cameras RGB + depth at 640x480, every observation checked), in another Python
  interpreter: robosuite pins its own dependencies and is no dependency of this project.
  Install it in a virtual environment of its own (``python -m venv rs && rs/bin/pip install
  robosuite==1.5.2 mujoco==3.3.0``: robosuite 1.5.2 fails on mujoco 3.17's joint types) and
  pass that interpreter as ``--robosuite-python``.

Both take uniformly random actions within their action spaces (seeded) and reset once before
timing; reset time is printed too. It prints steps per second of each and the ratios to
robosuite, the realistic world's against the target (:data:`ROBOSUITE_RATIO_TARGET`)::

    MUJOCO_GL=egl agentic-env bench-robosuite --robosuite-python rs/bin/python

:func:`world_figures` splits a run's result into one measurement per world of this env (its
steps/s beside robosuite's and the ratios), as the results database records them.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.sim.realism import REALISM_LEVELS

#: Smallest accepted ratio of the realistic world's env steps/s to robosuite's.
ROBOSUITE_RATIO_TARGET = 5.0
#: Camera resolution of both simulators (width, height), pixels.
RESOLUTION = (640, 480)
#: Control rate of both, Hz.
CONTROL_HZ = 20

#: The robosuite side, run by ``--robosuite-python`` (argv: steps, seed, width, height, control
#: rate); prints one JSON line.
_ROBOSUITE_SCRIPT = """
import json, sys, time
import numpy as np
import robosuite
steps, seed, width, height, hz = (int(value) for value in sys.argv[1:6])
cameras = ["frontview", "robot0_eye_in_hand"]
env = robosuite.make("Lift", robots="Panda", has_renderer=False,
                     has_offscreen_renderer=True, use_camera_obs=True, camera_names=cameras,
                     camera_widths=width, camera_heights=height, camera_depths=True,
                     control_freq=hz, horizon=10 ** 9, ignore_done=True)
start = time.perf_counter()
env.reset()
reset_s = time.perf_counter() - start
low, high = env.action_spec
rng = np.random.default_rng(seed)
for _ in range(3):
    env.step(rng.uniform(low, high))
start = time.perf_counter()
for _ in range(steps):
    obs = env.step(rng.uniform(low, high))[0]
    for name in cameras:
        assert obs[name + "_image"].shape == (height, width, 3)
        assert obs[name + "_depth"].shape[:2] == (height, width)
elapsed = time.perf_counter() - start
print(json.dumps({"steps_per_s": steps / elapsed, "reset_s": reset_s,
                  "version": robosuite.__version__}))
"""


def _own_steps(realism: str, steps: int, seed: int) -> dict[str, float]:
    """Env steps/s and reset seconds of this env in world ``realism``."""
    env = SimEnv(task="stacking", control_mode="joint_position", control_hz=CONTROL_HZ,
                 scene=SceneConfig.at_resolution(*RESOLUTION), realism=realism)
    try:
        env.action_space.seed(seed)
        start = time.perf_counter()
        env.reset(seed=seed)
        reset_s = time.perf_counter() - start
        for _ in range(3):
            env.step(env.action_space.sample())
        start = time.perf_counter()
        for _ in range(steps):
            obs = env.step(env.action_space.sample())[0]
            for camera in ("shoulder", "wrist"):
                assert obs[f"{camera}_rgb"].shape == (RESOLUTION[1], RESOLUTION[0], 3)
                assert obs[f"{camera}_depth"].shape == (RESOLUTION[1], RESOLUTION[0])
        return {"steps_per_s": steps / (time.perf_counter() - start), "reset_s": reset_s}
    finally:
        env.close()


def _robosuite_steps(python: Path, steps: int, seed: int) -> dict[str, Any]:
    """robosuite's env steps/s and reset seconds, measured by ``python``."""
    environment = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    command = [str(python), "-c", _ROBOSUITE_SCRIPT, str(steps), str(seed), *map(str, RESOLUTION),
               str(CONTROL_HZ)]
    done = subprocess.run(command, capture_output=True, text=True, env=environment,
                          check=False)
    if done.returncode != 0:
        raise InvalidConfigError(
            f"robosuite did not run with {python} (exit {done.returncode}): "
            f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'no output'}; "
            "install it there with: pip install robosuite==1.5.2 mujoco==3.3.0")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(python: Path, steps: int, rounds: int, seed: int) -> dict[str, Any]:
    """Every simulator ``rounds`` times in turn. Each round's ratios of this env's worlds to
    robosuite (``per_round``: measured back to back, under the same load), their median
    (``ratio_to_robosuite``: one outlier round, e.g. a background burst during one
    simulator's turn, moves it little), and each simulator's median steps/s and fastest
    reset (``simulators``); each round's steps/s per simulator (``steps_per_round``: an
    outlier ratio says which side it came from)."""
    measured: list[dict[str, dict[str, Any]]] = []
    for _ in range(rounds):
        turn = {realism: _own_steps(realism, steps, seed) for realism in REALISM_LEVELS}
        turn["robosuite"] = _robosuite_steps(python, steps, seed)
        measured.append(turn)
    per_round = [{realism: turn[realism]["steps_per_s"] / turn["robosuite"]["steps_per_s"]
                  for realism in REALISM_LEVELS} for turn in measured]
    steps_per_round = [{name: figures["steps_per_s"] for name, figures in turn.items()}
                       for turn in measured]
    simulators = {name: {**measured[0][name],
                         "steps_per_s": statistics.median(t[name]["steps_per_s"]
                                                          for t in measured),
                         "reset_s": min(t[name]["reset_s"] for t in measured)}
                  for name in measured[0]}
    return {"resolution": list(RESOLUTION), "control_hz": CONTROL_HZ, "steps": steps,
            "rounds": rounds, "simulators": simulators, "per_round": per_round,
            "steps_per_round": steps_per_round,
            "ratio_to_robosuite": {realism: statistics.median(r[realism] for r in per_round)
                                   for realism in REALISM_LEVELS}}


def world_figures(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """:func:`run`'s ``result`` per world of this env (world -> figures), as the results
    database records them: ``steps_per_s`` (median of rounds, env steps per second) and
    ``reset_s`` (fastest reset, seconds), robosuite's same two figures and its ``version``,
    ``ratio_to_robosuite`` (median of the rounds' ratios) and ``ratio_per_round``, the
    ``resolution`` (``WxH``, pixels) and ``control_hz`` (Hz); ``target`` (the smallest
    accepted ratio) and ``passed`` for the realistic world, ``None`` for the others."""
    robosuite = result["simulators"]["robosuite"]
    width, height = result["resolution"]
    figures: dict[str, dict[str, Any]] = {}
    for realism, ratio in result["ratio_to_robosuite"].items():
        own = result["simulators"][realism]
        target = ROBOSUITE_RATIO_TARGET if realism == "realistic" else None
        figures[realism] = {
            "steps_per_s": own["steps_per_s"], "reset_s": own["reset_s"],
            "robosuite_steps_per_s": robosuite["steps_per_s"],
            "robosuite_reset_s": robosuite["reset_s"],
            "robosuite_version": robosuite.get("version"),
            "ratio_to_robosuite": ratio,
            "ratio_per_round": [r[realism] for r in result["per_round"]],
            "resolution": f"{width}x{height}", "control_hz": result["control_hz"],
            "target": target, "passed": None if target is None else ratio >= target}
    return figures
