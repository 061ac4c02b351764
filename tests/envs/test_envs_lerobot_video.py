"""Eval videos through the LeRobot env plugin stream to the encoder as they are rendered:
the env keeps no frame, the caller gets a small placeholder, the MP4 has every frame."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from support.tiny_policy import CONFIG

from agentic_env.datasets.video import video_info

pytest.importorskip("lerobot")

STEPS = 12


def _run(env: object, steps: int) -> list[np.ndarray]:
    """Reset (seed 1000) and hold still for ``steps`` periods, rendering after each as
    lerobot-eval does; the frames ``render`` returned."""
    obs, _ = env.reset(seed=1000)  # type: ignore[attr-defined]
    frames = [env.render()]  # type: ignore[attr-defined]
    for _ in range(steps):
        obs, *_ = env.step(obs["agent_pos"].astype(np.float64))  # type: ignore[attr-defined]
        frames.append(env.render())  # type: ignore[attr-defined]
    return frames


def test_streamed_renders_keep_no_frame_and_the_video_has_all_of_them(tmp_path: Path
                                                                      ) -> None:
    from agentic_env.envs.lerobot import LeRobotBenchmarkEnv

    env = LeRobotBenchmarkEnv(CONFIG.task, width=CONFIG.width, height=CONFIG.height,
                              episode_length=STEPS, render="stream", video_dir=str(tmp_path))
    tracemalloc.start()
    try:
        obs, _ = env.reset(seed=1000)
        env.render()
        for _ in range(3):  # warm up the renderers and the encoder
            obs, *_ = env.step(obs["agent_pos"].astype(np.float64))
            env.render()
        before = tracemalloc.get_traced_memory()[0]
        returned = []
        for _ in range(STEPS - 4):
            obs, *_ = env.step(obs["agent_pos"].astype(np.float64))
            returned.append(env.render())
        grown = tracemalloc.get_traced_memory()[0] - before
        *_, truncated, _ = env.step(obs["agent_pos"].astype(np.float64))  # the last period
        assert truncated
        env.render()
        env.render()  # after the episode's end: records nothing more
    finally:
        tracemalloc.stop()
        env.close()
    assert {frame.shape for frame in returned} == {(16, 16, 3)}
    frame_bytes = 360 * 960 * 3
    assert grown < frame_bytes, f"{grown} bytes kept over {STEPS - 4} rendered periods"
    video = tmp_path / f"lab_{CONFIG.task}" / "seed_1000.mp4"
    assert video_info(video)["frames"] == STEPS + 1  # the reset and every period
    assert video_info(video)["size"] == (960, 360)


def test_frames_mode_returns_the_full_frame_and_writes_nothing(tmp_path: Path) -> None:
    from agentic_env.envs.lerobot import LeRobotBenchmarkEnv

    env = LeRobotBenchmarkEnv(CONFIG.task, width=CONFIG.width, height=CONFIG.height,
                              episode_length=2, render="frames", video_dir=str(tmp_path))
    try:
        frames = _run(env, 2)
    finally:
        env.close()
    assert {frame.shape for frame in frames} == {(360, 960, 3)}
    assert not any(tmp_path.iterdir())
