"""LeRobot's entry to the agentic_env benchmark: importing this module (LeRobot does, for every
installed ``lerobot_env_*`` distribution) registers ``--env.type=agentic_env``
(:class:`agentic_env.envs.lerobot.AgenticEnvConfig`) and the ``gym_agentic_env/<task>`` ids.
"""

from agentic_env.envs.lerobot import NAMESPACE, AgenticEnvConfig, LeRobotBenchmarkEnv

__all__ = ["NAMESPACE", "AgenticEnvConfig", "LeRobotBenchmarkEnv"]
