"""Each disturbance observably happens, is reported, and is undone by the next reset."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.experts import expert_actions
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.sim.disturbances import KINDS, DisturbanceSpec

SCENE = SceneConfig(shoulder_camera=azure_kinect_color(160, 90),
                    wrist_camera=realsense_d405(64, 36))


def _run_expert(env: SimEnv, seed: int, disturbances: list[dict]) -> list[dict]:
    env.reset(seed=seed, options={"disturbances": disturbances})
    info: dict = {}
    for action in expert_actions(env.task, env.scene_state):
        _, _, terminated, _, info = env.step(action)
        if terminated:
            break
    return info


def test_moving_the_target_during_the_first_pick_causes_a_misgrasp_and_replanning(
    make_sim_env: Callable[..., SimEnv],
) -> None:
    env = make_sim_env(task="stacking", scene=SCENE)
    env.reset(seed=4, options={"disturbances": [{"kind": "move_target"}]})
    first_pick = next(iter(expert_actions(env.task, env.scene_state)))
    _, _, _, _, info = env.step(first_pick)
    (event,) = info["disturbances"]
    assert event["kind"] == "move_target"
    assert np.linalg.norm(event["shift"]) == pytest.approx(KINDS["move_target"])
    assert not info["primitive"]["ok"] and info["primitive"]["reason"] == "nothing_grasped"
    final = _run_expert(env, 4, [{"kind": "move_target"}])
    assert final["success"], "the closed-loop expert replans after the misgrasp"


def test_moving_the_final_place_location_shifts_the_fixture_with_its_contents(
    make_sim_env: Callable[..., SimEnv],
) -> None:
    env = make_sim_env(task="stacking", scene=SCENE)
    info = _run_expert(env, 1, [{"kind": "move_place_location", "primitive": "place",
                                 "occurrence": -1}])
    (event,) = info["disturbances"]
    assert event["body"].endswith("-plate-1")
    assert event["occurrence"] >= 1 and len(event["carried"]) >= 1  # -1 resolved
    assert info["success"]


@pytest.mark.parametrize("kind", ["lighting_change", "occluder", "camera_bump"])
def test_view_disturbances_change_the_shoulder_image_and_reset_restores_it(
    make_sim_env: Callable[..., SimEnv], kind: str,
) -> None:
    env = make_sim_env(task="stacking", scene=SCENE)
    before, _ = env.reset(seed=0, options={"disturbances": [
        {"kind": kind, "primitive": "open_gripper"}]})
    after, _, _, _, info = env.step({"primitive": 4, "pose": np.array([0, 0, 0, 1, 0, 0, 0]),
                                     "width": [0.0], "distance": [0.0]})
    assert [event["kind"] for event in info["disturbances"]] == [kind]
    changed = np.mean(np.any(before["shoulder_rgb"] != after["shoulder_rgb"], axis=-1))
    assert changed > 0.05, f"{kind} changed only {changed:.1%} of the shoulder pixels"
    if kind == "camera_bump":
        rotation = after["shoulder_extrinsics"][:3, :3].T @ before["shoulder_extrinsics"][:3, :3]
        angle = np.degrees(np.arccos(np.clip((np.trace(rotation) - 1) / 2, -1, 1)))
        assert angle == pytest.approx(KINDS["camera_bump"], abs=0.05)
    again, _ = env.reset(seed=0)
    np.testing.assert_array_equal(again["shoulder_rgb"], before["shoulder_rgb"])


def test_disturbances_are_recorded_in_the_trial_and_replayed(
    make_sim_env: Callable[..., SimEnv],
) -> None:
    env = make_sim_env(task="stacking", scene=SCENE)
    info = _run_expert(env, 2, [{"kind": "move_target"}])
    replay = make_sim_env(task="stacking", scene=SCENE)
    spec = env.trial
    assert spec.disturbances[0]["kind"] == "move_target"
    replay.reset(options={"trial": spec})
    replay_info: dict = {}
    for action in expert_actions(replay.task, replay.scene_state):
        _, _, terminated, _, replay_info = replay.step(action)
        if terminated:
            break
    assert replay_info["disturbances"] == info["disturbances"]


def test_unknown_disturbance_lists_the_kinds() -> None:
    with pytest.raises(InvalidConfigError, match="valid: move_target"):
        DisturbanceSpec("earthquake")
