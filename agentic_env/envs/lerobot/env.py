"""One benchmark task (in one setting) as LeRobot's evaluation loop expects a gym env.

:class:`LeRobotBenchmarkEnv` is the task in ``joint_position`` mode at 20 Hz with both cameras
at the policy's resolution. Observations are what LeRobot's ``preprocess_observation`` turns
into the dataset exporter's feature names (:mod:`agentic_env.contract.features`):

==========================  ======================================  ==================
raw key                     policy feature                          shape, dtype
==========================  ======================================  ==================
``pixels/<cam>``            ``observation.images.<cam>``            H, W, 3 uint8
``agent_pos``               ``observation.state``                   7 float32 (rad, m)
``tcp_pose`` (opt-in)       ``observation.tcp_pose``                7 float32 (m, wxyz)
``depth.<cam>`` (opt-in)    ``observation.depth.<cam>``             H, W, 1 float32 mm
==========================  ======================================  ==================

The reward is 0 until the episode ends, then the task's AgenticLab progress score
(:mod:`agentic_env.tasks.score`; the goal's 0/1 where the task has no PDDL model), so
LeRobot's ``sum_reward`` of an episode, and ``avg_sum_reward`` of a task, setting or run in
``eval_info.json``, is the progress score. The final ``info`` also carries the score's counts
and the failure source (``limits``: the step limit ran out; ``execution``: the simulation
diverged), and :attr:`LeRobotBenchmarkEnv.episode_log` appends them as one JSON line per
episode. Resets refuse seeds outside :data:`agentic_env.contract.seeds.EVALUATION_SEEDS`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agentic_env.contract.features import CAMERAS, depth_key, frame_features, video_key
from agentic_env.contract.seeds import EVALUATION_SEEDS, check_evaluation_seeds
from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.lerobot.render import RENDER_MODES, EpisodeVideo, placeholder_frame
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.sim.realism import BENCHMARK_REALISM

#: Raw observation key of the TCP pose (LeRobot prefixes ``observation.``).
TCP_POSE = "tcp_pose"


def depth_raw_key(camera: str) -> str:
    """Raw observation key of ``camera``'s depth (LeRobot makes it :func:`depth_key`)."""
    return depth_key(camera).removeprefix("observation.")


class LeRobotBenchmarkEnv(gym.Env):
    """One benchmark task as LeRobot's evaluation loop expects it (see the module docstring).

    Args:
        task: task name (:data:`agentic_env.tasks.TASKS`). setting: ``lab``, ``kitchen`` or
            ``outdoor``.
        width / height: both cameras' resolution, pixels (the policy's input size).
        episode_length: control periods before truncation.
        realism: the world, ``realistic`` (the benchmark default) or ``ideal``
            (:mod:`agentic_env.sim.realism`).
        depth: add both cameras' depth, millimetres (0 = no return).
        tcp_pose: add the TCP pose in the base frame (x, y, z m; quaternion w, x, y, z).
        render: ``frames`` (:meth:`render` returns the full 360 x 960 frame, about 1 MB, for
            the caller to keep) or ``stream`` (each rendered episode is encoded to an MP4 in
            ``video_dir`` as its frames are rendered and :meth:`render` returns a 16 x 16
            placeholder, so the caller's frame buffer stays small; ``lerobot-eval``'s default
            through :class:`~agentic_env.envs.lerobot.config.AgenticEnvConfig`).
        video_dir: where ``stream`` writes ``<setting>_<task>/seed_<seed>.mp4`` (LeRobot
            names its own video folders ``<setting>_<task>`` too).
        episode_log: a JSON-lines file to append every finished episode's record to
            (``""``: none).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}

    def __init__(self, task: str = "stacking", setting: str = "lab", width: int = 128,
                 height: int = 72, episode_length: int = 2400,
                 render_mode: str | None = "rgb_array", realism: str = BENCHMARK_REALISM,
                 depth: bool = False, tcp_pose: bool = False, render: str = "frames",
                 video_dir: str = "", episode_log: str = "") -> None:
        if render not in RENDER_MODES:
            raise InvalidConfigError(f"render={render!r}; valid: {', '.join(RENDER_MODES)}")
        if render == "stream" and render_mode is not None and not video_dir:
            raise InvalidConfigError("render='stream' needs a video_dir to write the videos to")
        scene = SceneConfig.at_resolution(width, height)
        self._env = SimEnv(task=task, setting=setting, scene=scene,
                           control_mode="joint_position", render_mode=render_mode,
                           max_episode_steps=episode_length, realism=realism)
        self.render_mode = render_mode
        self.task = task
        self.setting = setting
        self.task_description = ""
        self._max_episode_steps = episode_length
        self._depth = depth
        self._tcp_pose = tcp_pose
        self._render = render
        self._video_dir = Path(video_dir) if video_dir else None
        self.episode_log = Path(episode_log) if episode_log else None
        self._video: EpisodeVideo | None = None
        self._seed = -1
        self._steps = 0
        self._ended = False
        self.action_space = self._env.action_space
        image = spaces.Box(0, 255, (height, width, 3), np.uint8)
        observation: dict[str, spaces.Space] = {
            "pixels": spaces.Dict({cam: image for cam in CAMERAS}),
            "agent_pos": spaces.Box(-np.inf, np.inf, (7,), np.float32)}
        if tcp_pose:
            observation[TCP_POSE] = spaces.Box(-np.inf, np.inf, (7,), np.float32)
        if depth:
            observation |= {depth_raw_key(cam): spaces.Box(0, 65535, (height, width, 1),
                                                           np.float32) for cam in CAMERAS}
        self.observation_space = spaces.Dict(observation)

    @property
    def sim(self) -> SimEnv:
        """The simulated env underneath (privileged: tests and tools only)."""
        return self._env

    def _convert(self, obs: dict[str, np.ndarray]) -> dict[str, Any]:
        frame = frame_features(obs, depth=self._depth)
        converted: dict[str, Any] = {
            "pixels": {cam: frame[video_key(cam)] for cam in CAMERAS},
            "agent_pos": frame["observation.state"]}
        if self._tcp_pose:
            converted[TCP_POSE] = frame["observation.tcp_pose"]
        if self._depth:
            converted |= {depth_raw_key(cam): frame[depth_key(cam)].astype(np.float32)
                          for cam in CAMERAS}
        return converted

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A new trial of ``seed`` (LeRobot's own reset options are not the env's).

        Without a seed, one is drawn from the evaluation range.

        Raises:
            InvalidConfigError: a seed outside
                :data:`~agentic_env.contract.seeds.EVALUATION_SEEDS` (demonstration layouts).
        """
        if seed is None:
            super().reset()
            seed = int(self.np_random.integers(EVALUATION_SEEDS.start, EVALUATION_SEEDS.stop))
        check_evaluation_seeds([int(seed)])
        self._finish_video()
        obs, info = self._env.reset(seed=int(seed))
        self._seed, self._steps, self._ended = int(seed), 0, False
        self.task_description = str(info["instruction"])
        return self._convert(obs), {"is_success": False}

    def step(self, action: np.ndarray) -> tuple[dict[str, Any], float, bool, bool,
                                                dict[str, Any]]:
        """One control period of a ``joint_position`` action (7,): six joint targets (rad)
        and the gripper width target (m)."""
        obs, _reward, terminated, truncated, info = self._env.step(action)
        self._steps += 1
        success = bool(info["success"])
        result: dict[str, Any] = {"is_success": success}
        reward = 0.0
        if terminated or truncated:
            self._ended = True
            record = self._episode_record(success, bool(info["sim_diverged"]))
            reward = float(record["progress_score"])
            result |= {key: record[key] for key in ("progress_score", "score_counts",
                                                    "failure", "failure_detail")}
            if self.episode_log is not None:
                _append_line(self.episode_log, record)
        return self._convert(obs), reward, terminated, truncated, result

    def _episode_record(self, success: bool, diverged: bool) -> dict[str, Any]:
        """The finished episode: its trial, outcome, progress score and failure source."""
        score, counts = float(success), None
        # SimEnv records a low-level agent's picks and places as they happen; after a
        # divergence, the actions done before it
        progress = self._env.episode_score()
        if progress is not None:  # else no reference to score against: success
            score = progress.score
            counts = {"n_done": progress.n_done, "n_extra": progress.n_extra,
                      "n_required": progress.n_required}
        failure, detail = None, ""
        if diverged:
            failure, detail = "execution", "the simulation diverged"
        elif not success:
            failure = "limits"
            detail = f"the step limit ran out ({self._max_episode_steps} control periods)"
        return {"task": self.task, "setting": self.setting, "seed": self._seed,
                "instruction": self.task_description, "success": success,
                "progress_score": score, "score_counts": counts, "failure": failure,
                "failure_detail": detail, "control_periods": self._steps,
                "sim_s": float(self._env.data.time), "realism": self._env.realism,
                "video": str(self._video.path) if self._video is not None else None}

    def render(self) -> np.ndarray | None:
        """The overview beside both cameras (360, 960, 3) uint8 with ``render="frames"``;
        with ``stream``, that frame goes to the episode's MP4 and a placeholder is returned.
        After the episode's end only its first call records a frame."""
        if self.render_mode != "rgb_array":
            return None
        if self._render == "frames":
            return self._env.render()
        if self._ended and self._video is not None and self._video.final:
            return placeholder_frame()
        frame = self._env.render()
        assert frame is not None and self._video_dir is not None
        if self._video is None:
            path = self._video_dir / f"{self.setting}_{self.task}" / f"seed_{self._seed}.mp4"
            self._video = EpisodeVideo(path, frame.shape[1], frame.shape[0],
                                       self.metadata["render_fps"])
        self._video.append(frame, final=self._ended)
        return placeholder_frame()

    def _finish_video(self) -> None:
        if self._video is not None:
            self._video.close()
            self._video = None

    def close(self) -> None:
        """Finish the episode's video and release the simulator's rendering contexts."""
        self._finish_video()
        self._env.close()


def _append_line(path: Path, record: dict[str, Any]) -> None:
    """Append ``record`` as one JSON line with a single ``write`` (whole lines, even with
    several processes appending)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(record) + "\n").encode()
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, line)
    finally:
        os.close(descriptor)
