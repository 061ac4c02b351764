"""The benchmark as a LeRobot suite: which tasks and settings a run evaluates, and the vector
envs ``lerobot-eval`` steps through one after another.

LeRobot's multi-task envs (LIBERO, Meta-World...) return ``{group: {task_id: vector env}}``
from ``EnvConfig.create_envs``; ``lerobot-eval`` evaluates each entry in turn and writes, in
``eval_info.json``, ``per_task`` (one entry per group and task id, with every episode's
``successes`` and ``sum_rewards``), ``per_group`` and ``overall`` aggregates. Here a group is
a setting (``lab``, ``kitchen``, ``outdoor``) and a task id is a task's name, so
``per_group`` is the success rate per setting and ``per_task`` per task and setting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

from agentic_env.errors import InvalidConfigError
from agentic_env.sim.realism.sensors import SETTINGS
from agentic_env.tasks import BENCHMARK_TASKS, TASKS

#: The word that selects every benchmark task (``--env.task``) or setting (``--env.setting``).
ALL = "all"


def select(value: str, choices: Sequence[str], every: Sequence[str], what: str
           ) -> tuple[str, ...]:
    """The names a comma-separated ``value`` selects, in its order, without repeats.

    Args:
        value: ``"all"`` (the names of ``every``), one name or ``"a,b"``.
        choices: the valid names. every: what ``"all"`` means. what: the field, for errors.

    Raises:
        InvalidConfigError: an empty selection or an unknown name (naming the valid ones).
    """
    names = [part.strip() for part in value.split(",") if part.strip()]
    if names == [ALL]:
        return tuple(every)
    unknown = [name for name in names if name not in choices]
    if unknown or not names:
        raise InvalidConfigError(
            f"{what} {value!r} selects {'unknown ' + ', '.join(unknown) if unknown else 'nothing'}"
            f"; valid: {ALL!r} or a comma-separated list of {', '.join(choices)}")
    return tuple(dict.fromkeys(names))


def select_tasks(value: str) -> tuple[str, ...]:
    """``--env.task``: ``all`` (the five benchmark tasks, the paper's order), a task or a list."""
    return select(value, tuple(TASKS), BENCHMARK_TASKS, "task")


def select_settings(value: str) -> tuple[str, ...]:
    """``--env.setting``: ``all`` (lab, kitchen, outdoor), a setting or a list."""
    return select(value, SETTINGS, SETTINGS, "setting")


class LazyVectorEnv:
    """A vector env built on first use and released by :meth:`close`.

    ``lerobot-eval`` evaluates the suite's entries one after another and closes each when it
    is done, so only one entry's simulators (and, async, worker processes) exist at a time;
    LeRobot's own ``_LazyAsyncVectorEnv`` does this for its async LIBERO envs. It offers what
    the evaluation loop uses: ``reset``, ``step``, ``call``, ``get_attr``, ``close``,
    ``num_envs``, the spaces and ``unwrapped.metadata``.

    Args:
        factories: one env factory per sub-env.
        asynchronous: one worker process per sub-env (``gym.vector.AsyncVectorEnv``) instead
            of stepping them in this process.
        probe: an env like the sub-envs, read for the spaces and metadata (then closed).
    """

    def __init__(self, factories: Sequence[Callable[[], gym.Env]], asynchronous: bool,
                 probe: gym.Env) -> None:
        self._factories = list(factories)
        self._asynchronous = asynchronous and len(self._factories) > 1
        self._env: gym.vector.VectorEnv | None = None
        self.num_envs = len(self._factories)
        self.single_observation_space = probe.observation_space
        self.single_action_space = probe.action_space
        self.observation_space = probe.observation_space
        self.action_space = probe.action_space
        self.metadata = dict(probe.metadata)

    @property
    def unwrapped(self) -> LazyVectorEnv:
        return self

    @property
    def built(self) -> bool:
        """Whether the sub-envs exist now."""
        return self._env is not None

    def _ensure(self) -> gym.vector.VectorEnv:
        """Build the sub-envs unless they exist (``lerobot-eval`` may call it ahead)."""
        if self._env is None:
            from lerobot.envs.utils import freeze_after_episode_end

            factories = [freeze_after_episode_end(f) for f in self._factories]
            mode = gym.vector.AutoresetMode.NEXT_STEP
            self._env = (gym.vector.AsyncVectorEnv(factories, context="forkserver",
                                                   autoreset_mode=mode)
                         if self._asynchronous
                         else gym.vector.SyncVectorEnv(factories, autoreset_mode=mode))
        return self._env

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        return self._ensure().reset(**kwargs)

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        return self._ensure().step(actions)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        return self._ensure().call(name, *args, **kwargs)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self._ensure().get_attr(name)

    def close(self) -> None:
        """Close the sub-envs (their videos are finished); the next use builds new ones."""
        if self._env is not None:
            self._env.close()
            self._env = None
