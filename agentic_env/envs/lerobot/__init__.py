"""The benchmark as a ``lerobot-eval`` environment (a LeRobot env plugin; needs lerobot)::

    lerobot-eval --env.discover_packages_path=agentic_env.envs.lerobot --env.type=agentic_env \\
        --env.task=stacking --env.observation_width=128 --env.observation_height=72 \\
        --policy.path=runs/policies/stacking/pretrained_model --eval.n_episodes=10

Importing this package registers :class:`AgenticEnvConfig` with LeRobot's ``EnvConfig``
registry as ``agentic_env`` and one Gymnasium id per task, ``gym_agentic_env/<task>``. The
env (:class:`LeRobotBenchmarkEnv`) is the task in ``joint_position`` mode at 20 Hz with both
cameras at the policy's resolution, and hands observations over as LeRobot's gym envs do:
``pixels`` (camera -> RGB, LeRobot names them ``observation.images.<camera>``, as the dataset
exporter does) and ``agent_pos`` (``observation.state``: six joints, rad; gripper width, m).
``info["is_success"]`` is the task's goal; the instruction is ``task_description``. Scores
here are LeRobot's (success rate); the harness's progress score needs ``--agent policy``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from lerobot.configs.types import FeatureType, PolicyFeature
from lerobot.envs.configs import EnvConfig

from agentic_env.contract.features import CAMERAS, frame_features, video_key
from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.sim.realism import BENCHMARK_REALISM
from agentic_env.tasks import TASKS

#: Gymnasium namespace of the tasks (LeRobot's ``gym_<env type>``).
NAMESPACE = "gym_agentic_env"


class LeRobotBenchmarkEnv(gym.Env):
    """One benchmark task as LeRobot's evaluation loop expects it (see the module docstring).

    Args:
        task: task name. setting: ``lab``, ``kitchen`` or ``outdoor``.
        width / height: both cameras' resolution, pixels (the policy's input size).
        episode_length: control periods before truncation.
        realism: the world, ``realistic`` (the benchmark default) or ``ideal``
            (:mod:`agentic_env.sim.realism`).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}

    def __init__(self, task: str = "stacking", setting: str = "lab", width: int = 128,
                 height: int = 72, episode_length: int = 2400,
                 render_mode: str | None = "rgb_array", realism: str = BENCHMARK_REALISM
                 ) -> None:
        scene = SceneConfig.at_resolution(width, height)
        self._env = SimEnv(task=task, setting=setting, scene=scene,
                           control_mode="joint_position", render_mode=render_mode,
                           max_episode_steps=episode_length, realism=realism)
        self.render_mode = render_mode
        self.task = task
        self.task_description = ""
        self._max_episode_steps = episode_length
        self.action_space = self._env.action_space
        self.observation_space = spaces.Dict({
            "pixels": spaces.Dict({cam: spaces.Box(0, 255, (height, width, 3), np.uint8)
                                   for cam in CAMERAS}),
            "agent_pos": spaces.Box(-np.inf, np.inf, (7,), np.float32)})

    @staticmethod
    def _convert(obs: dict[str, np.ndarray]) -> dict[str, Any]:
        frame = frame_features(obs)
        return {"pixels": {cam: frame[video_key(cam)] for cam in CAMERAS},
                "agent_pos": frame["observation.state"]}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A new trial of ``seed`` (LeRobot's own reset options are not the env's)."""
        obs, info = self._env.reset(seed=seed)
        self.task_description = str(info["instruction"])
        return self._convert(obs), {"is_success": False}

    def step(self, action: np.ndarray) -> tuple[dict[str, Any], float, bool, bool,
                                                dict[str, Any]]:
        """One control period of a ``joint_position`` action (7,)."""
        obs, reward, terminated, truncated, info = self._env.step(action)
        return (self._convert(obs), reward, terminated, truncated,
                {"is_success": bool(info["success"])})

    def render(self) -> np.ndarray | None:
        """The overview and both cameras (``rgb_array``)."""
        return self._env.render()

    def close(self) -> None:
        self._env.close()


@EnvConfig.register_subclass("agentic_env")
@dataclass
class AgenticEnvConfig(EnvConfig):
    """``--env.type=agentic_env``: a benchmark task for ``lerobot-eval``.

    Attributes:
        task: task name (``sorting``, ``stacking``...). setting: the workcell's setting.
        fps: control rate, Hz (the env's 20 Hz; informational).
        episode_length: control periods before truncation.
        observation_width / observation_height: camera resolution, pixels: the resolution the
            policy's demonstrations were collected at.
        realism: the simulated world, ``realistic`` (default) or ``ideal``.
    """

    task: str | None = "stacking"
    fps: int = 20
    setting: str = "lab"
    episode_length: int = 2400
    observation_width: int = 128
    observation_height: int = 72
    realism: str = BENCHMARK_REALISM
    features: dict[str, PolicyFeature] = field(default_factory=dict)
    features_map: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        shape = (self.observation_height, self.observation_width, 3)
        self.features = {"action": PolicyFeature(type=FeatureType.ACTION, shape=(7,)),
                         "agent_pos": PolicyFeature(type=FeatureType.STATE, shape=(7,)),
                         **{f"pixels/{cam}": PolicyFeature(type=FeatureType.VISUAL, shape=shape)
                            for cam in CAMERAS}}
        self.features_map = {"action": "action", "agent_pos": "observation.state",
                             **{f"pixels/{cam}": video_key(cam) for cam in CAMERAS}}

    @property
    def package_name(self) -> str:
        """The Gymnasium namespace (registered when this package is imported)."""
        return NAMESPACE

    @property
    def gym_kwargs(self) -> dict[str, Any]:
        return {"setting": self.setting, "width": self.observation_width,
                "height": self.observation_height, "episode_length": self.episode_length,
                "realism": self.realism}


for _task in TASKS:
    if f"{NAMESPACE}/{_task}" not in gym.registry:
        gym.register(id=f"{NAMESPACE}/{_task}", entry_point=LeRobotBenchmarkEnv,
                     kwargs={"task": _task})
