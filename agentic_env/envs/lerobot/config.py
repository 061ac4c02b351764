"""``--env.type=agentic_env``: the benchmark's LeRobot ``EnvConfig`` (registered on import).

The config builds the suite (:mod:`agentic_env.envs.lerobot.suite`), declares the features a
policy may read (names as in :mod:`agentic_env.contract.features` and the dataset exporter)
and the env processor that puts depth channels first, as LeRobot's datasets hand depth to a
policy.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass, field
from typing import Any

import torch
from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.envs.configs import EnvConfig
from lerobot.processor import ObservationProcessorStep, PolicyProcessorPipeline
from lerobot.processor.pipeline import PipelineFeatureType

from agentic_env.contract.features import CAMERAS, depth_key, video_key
from agentic_env.envs.lerobot.env import TCP_POSE, LeRobotBenchmarkEnv, depth_raw_key
from agentic_env.envs.lerobot.render import RENDER_MODES
from agentic_env.envs.lerobot.suite import LazyVectorEnv, select_settings, select_tasks
from agentic_env.errors import InvalidConfigError
from agentic_env.sim.realism import BENCHMARK_REALISM, check_realism

#: Gymnasium namespace of the tasks (LeRobot's ``gym_<env type>``).
NAMESPACE = "gym_agentic_env"
#: Where ``render="stream"`` videos go when ``video_dir`` is not given: beside LeRobot's own
#: default output folder, under the time the config was made.
DEFAULT_VIDEO_ROOT = "outputs/eval/agentic_env_videos"


@dataclass
class DepthChannelsFirst(ObservationProcessorStep):
    """``observation.depth.<cam>`` (B, H, W, 1) -> (B, 1, H, W), millimetres: the layout a
    LeRobot dataset's depth images reach a policy in."""

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        converted = dict(observation)
        for cam in CAMERAS:
            depth = converted.get(depth_key(cam))
            if isinstance(depth, torch.Tensor) and depth.ndim == 4 and depth.shape[-1] == 1:
                converted[depth_key(cam)] = depth.permute(0, 3, 1, 2).contiguous()
        return converted

    def transform_features(self, features: dict[PipelineFeatureType, dict[str, PolicyFeature]]
                           ) -> dict[PipelineFeatureType, dict[str, PolicyFeature]]:
        return features


@EnvConfig.register_subclass("agentic_env")
@dataclass
class AgenticEnvConfig(EnvConfig):
    """``--env.type=agentic_env``: benchmark tasks for ``lerobot-eval``.

    Attributes:
        task: ``all`` (the five benchmark tasks), a task name (``sorting``, ``stacking``...)
            or a comma-separated list.
        setting: ``all`` (lab, kitchen, outdoor), a setting or a comma-separated list; every
            selected task runs in every selected setting.
        fps: control rate, Hz (the env's 20 Hz; informational).
        episode_length: control periods before truncation.
        observation_width / observation_height: camera resolution, pixels: the resolution the
            policy's demonstrations were collected at.
        realism: the simulated world, ``realistic`` (default) or ``ideal``.
        depth: also observe both cameras' depth (``observation.depth.<cam>``, 1 x H x W,
            millimetres, 0 = no return).
        tcp_pose: also observe the TCP pose (``observation.tcp_pose``: x, y, z m in the base
            frame; quaternion w, x, y, z).
        render: ``stream`` (the env encodes the videos LeRobot asks for into ``video_dir``
            as it renders them; LeRobot's own eval videos are then 16 x 16 placeholders) or
            ``frames`` (LeRobot keeps each 360 x 960 frame, ~1 MB per control period, and
            writes its own videos).
        video_dir: where ``stream`` writes ``<setting>_<task>/seed_<seed>.mp4`` (default
            ``outputs/eval/agentic_env_videos/<date>/<time>``).
        episode_log: a JSON-lines file every finished episode appends its record to (trial,
            success, progress score and counts, failure source); ``""``: none.
    """

    task: str | None = "stacking"
    fps: int = 20
    setting: str = "lab"
    episode_length: int = 2400
    observation_width: int = 128
    observation_height: int = 72
    realism: str = BENCHMARK_REALISM
    depth: bool = False
    tcp_pose: bool = False
    render: str = "stream"
    video_dir: str = ""
    episode_log: str = ""
    features: dict[str, PolicyFeature] = field(default_factory=dict)
    features_map: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tasks = select_tasks(self.task or "")
        self.settings = select_settings(self.setting)
        check_realism(self.realism)
        if self.render not in RENDER_MODES:
            raise InvalidConfigError(
                f"render={self.render!r}; valid: {', '.join(RENDER_MODES)}")
        if self.episode_length < 1:
            raise InvalidConfigError(f"episode_length={self.episode_length}: give >= 1")
        if self.render == "stream" and not self.video_dir:
            self.video_dir = f"{DEFAULT_VIDEO_ROOT}/{dt.datetime.now():%Y-%m-%d/%H-%M-%S}"
        image = (self.observation_height, self.observation_width, 3)
        self.features = {"action": PolicyFeature(type=FeatureType.ACTION, shape=(7,)),
                         "agent_pos": PolicyFeature(type=FeatureType.STATE, shape=(7,)),
                         **{f"pixels/{cam}": PolicyFeature(type=FeatureType.VISUAL, shape=image)
                            for cam in CAMERAS}}
        self.features_map = {"action": "action", "agent_pos": "observation.state",
                             **{f"pixels/{cam}": video_key(cam) for cam in CAMERAS}}
        if self.tcp_pose:
            self.features[TCP_POSE] = PolicyFeature(type=FeatureType.STATE, shape=(7,))
            self.features_map[TCP_POSE] = "observation.tcp_pose"
        if self.depth:
            for cam in CAMERAS:
                self.features[depth_raw_key(cam)] = PolicyFeature(
                    type=FeatureType.VISUAL, shape=(*image[:2], 1))
                self.features_map[depth_raw_key(cam)] = depth_key(cam)

    @property
    def package_name(self) -> str:
        """The Gymnasium namespace (registered when this package is imported)."""
        return NAMESPACE

    @property
    def gym_id(self) -> str:
        """The Gymnasium id of the first selected task."""
        return f"{NAMESPACE}/{self.tasks[0]}"

    @property
    def gym_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :class:`LeRobotBenchmarkEnv` besides the task and setting."""
        return {"width": self.observation_width, "height": self.observation_height,
                "episode_length": self.episode_length, "realism": self.realism,
                "depth": self.depth, "tcp_pose": self.tcp_pose, "render": self.render,
                "video_dir": self.video_dir, "episode_log": self.episode_log}

    def create_envs(self, n_envs: int, use_async_envs: bool = False
                    ) -> dict[str, dict[str, LazyVectorEnv]]:
        """``{setting: {task: vector env of n_envs sub-envs}}``, each built on first use."""
        probe = LeRobotBenchmarkEnv(self.tasks[0], self.settings[0], render_mode=None,
                                    **{**self.gym_kwargs, "render": "frames"})
        try:
            return {setting: {task: LazyVectorEnv(
                [functools.partial(LeRobotBenchmarkEnv, task, setting, **self.gym_kwargs)
                 for _ in range(n_envs)], use_async_envs, probe) for task in self.tasks}
                for setting in self.settings}
        finally:
            probe.close()

    def get_env_processors(self) -> tuple[PolicyProcessorPipeline, PolicyProcessorPipeline]:
        """(preprocessor, postprocessor): depth channels first when depth is observed."""
        steps = [DepthChannelsFirst()] if self.depth else []
        return PolicyProcessorPipeline(steps=steps), PolicyProcessorPipeline(steps=[])
