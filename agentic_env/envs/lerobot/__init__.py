"""The benchmark as a ``lerobot-eval`` environment suite (a LeRobot env plugin; needs lerobot).

Installed with the project's set-up, the ``lerobot-env-agentic`` distribution
(``plugins/lerobot_env_agentic``) makes LeRobot import this package by itself, so::

    lerobot-eval --env.type=agentic_env --env.task=all --env.setting=all \\
        --env.observation_width=128 --env.observation_height=72 \\
        --policy.path=runs/policies/stacking/pretrained_model --eval.n_episodes=10

evaluates the five tasks in the three settings (without the plugin installed, add
``--env.discover_packages_path=agentic_env.envs.lerobot``). Importing this package registers
:class:`AgenticEnvConfig` with LeRobot's ``EnvConfig`` registry as ``agentic_env`` and one
Gymnasium id per task, ``gym_agentic_env/<task>``.

* :mod:`~agentic_env.envs.lerobot.env`: one task as a gym env (:class:`LeRobotBenchmarkEnv`):
  observations, the progress score as reward, the failure source, evaluation seeds only.
* :mod:`~agentic_env.envs.lerobot.suite`: tasks x settings as LeRobot's ``{group: {task:
  vector env}}``; ``eval_info.json`` gets success per task, per setting and overall.
* :mod:`~agentic_env.envs.lerobot.config`: ``--env.*`` fields, features, env processors.
* :mod:`~agentic_env.envs.lerobot.render`: eval videos streamed to the encoder as rendered.
"""

from __future__ import annotations

import gymnasium as gym

from agentic_env.envs.lerobot.config import NAMESPACE, AgenticEnvConfig
from agentic_env.envs.lerobot.env import LeRobotBenchmarkEnv
from agentic_env.tasks import TASKS

__all__ = ["NAMESPACE", "AgenticEnvConfig", "LeRobotBenchmarkEnv"]

for _task in TASKS:
    if f"{NAMESPACE}/{_task}" not in gym.registry:
        gym.register(id=f"{NAMESPACE}/{_task}", entry_point=LeRobotBenchmarkEnv,
                     kwargs={"task": _task})
