"""The progress score counts the picks and places of an agent that drives the arm low-level
(a VLA policy in ``joint_position`` mode), not only those of primitives."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest

from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.experts import expert_actions


def _expert_joint_targets(seed: int, primitives: int) -> tuple[list[np.ndarray], int]:
    """The expert's first ``primitives`` primitives on stacking as 20 Hz joint_position
    actions, and the PDDL steps they completed in primitive mode."""
    env = SimEnv(task="stacking", render_mode=None, record_rollouts=True, realism="ideal")
    env.reset(seed=seed)
    actions: list[np.ndarray] = []
    for _, action in zip(range(primitives), expert_actions(env.task, env.scene_state),
                         strict=False):
        *_, info = env.step(action)
        rollout = info["rollout"]
        actions += [np.append(q, w) for q, w in zip(rollout.joint_targets,
                                                    rollout.gripper_targets, strict=True)]
    done = env.progress_score().n_done
    env.close()
    return actions, done


def test_joint_position_agent_scores_its_pick_and_place() -> None:
    actions, done = _expert_joint_targets(seed=0, primitives=2)
    assert done == 2  # pick + place, as the primitives recorded them
    env = SimEnv(task="stacking", render_mode=None, control_mode="joint_position", realism="ideal")
    env.reset(seed=0)
    for action in actions:
        env.step(action)
    score = env.progress_score()
    env.close()
    assert score.n_done == done
    assert score.n_extra == 0
    assert score.score > 0


def test_an_episode_is_scored_in_one_place() -> None:
    """``SimEnv.episode_score`` is the score the final ``info`` reports; a task without a
    PDDL model has none (``None``), where ``progress_score`` refuses."""
    env = SimEnv(task="stacking", render_mode=None, realism="ideal", max_episode_steps=2)
    env.reset(seed=3)
    actions = expert_actions(env.task, env.scene_state)
    *_, info = env.step(next(actions))
    *_, info = env.step(next(actions))  # the step limit: the episode ends, its score reported
    score = env.episode_score()
    assert score is not None and score.n_done == 2
    assert info["progress_score"] == asdict(score)
    assert env.episode_score(goal_checker_error=True).score < score.score
    env.close()
    tabletop = SimEnv(task="tabletop", render_mode=None, realism="ideal")
    tabletop.reset(seed=0)
    assert tabletop.episode_score() is None
    with pytest.raises(InvalidConfigError):
        tabletop.progress_score()
    tabletop.close()
