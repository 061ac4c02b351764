"""Reinforcement-learning baseline: an SB3-ready wrapper and a PPO/SAC training script.

* :mod:`~agentic_env.rl.wrapper`: :class:`~agentic_env.rl.wrapper.ReachPickEnv`, the sim env
  in ``ee_delta`` mode with a flat state (or state + small image) observation and a shaped
  reward for reaching a point or picking a cube;
* :mod:`~agentic_env.rl.train`: ``agentic-env train-rl``.

Training needs the ``rl`` extra (stable-baselines3 and CPU torch); the wrapper itself does not.
"""
