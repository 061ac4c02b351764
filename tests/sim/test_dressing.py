"""Per-reset dressing randomisation: the expert still succeeds, seeds reproduce, clutter stays
out of the task area, records re-apply bitwise, and the procedural textures are deterministic."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import mujoco
import numpy as np
import pytest

from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.experts import expert_actions
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.sim.dressing import (
    CAMERA_MOUNT,
    apply_dressing,
    distractor_body,
    footprint_radius,
    layout_violations,
    randomize_dressing,
    sample_layout,
)
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.settings import available_settings, load_setting
from agentic_env.sim.textures import MAX_TEXTURE_SIZE, make_texture, texture_kinds
from agentic_env.tasks.tabletop import TabletopTask

SETTINGS = ("lab", "kitchen", "outdoor")
CLUTTERED = ("kitchen", "outdoor")


def small_scene(setting: str) -> SceneConfig:
    return SceneConfig(shoulder_camera=azure_kinect_color(64, 36),
                       wrist_camera=realsense_d405(64, 36), setting=setting)


def build_model(setting: str) -> tuple[mujoco.MjModel, np.ndarray]:
    builder = SceneBuilder(small_scene(setting))
    TabletopTask().build(builder)
    return builder.compile(), builder.base_pos


def model_arrays(model: mujoco.MjModel) -> dict[str, bytes]:
    """Every array field of a model (and the headlight) as raw bytes."""
    arrays = {}
    for name in dir(model):
        if name.startswith("_"):
            continue
        value = getattr(model, name)
        if isinstance(value, np.ndarray):
            arrays[name] = value.tobytes()
    for name in ("ambient", "diffuse", "specular"):
        arrays[f"headlight.{name}"] = np.asarray(getattr(model.vis.headlight, name)).tobytes()
    return arrays


def test_every_setting_is_available() -> None:
    assert set(SETTINGS) <= set(available_settings())


@pytest.mark.parametrize("kind", texture_kinds())
def test_textures_are_deterministic_small_and_seeded(kind: str) -> None:
    image = make_texture(kind, size=64, seed=3)
    assert image.shape == (64, 64, 3) and image.dtype == np.uint8
    assert np.array_equal(image, make_texture(kind, size=64, seed=3))
    assert not np.array_equal(image, make_texture(kind, size=64, seed=4))
    assert image.std() > 3.0  # a pattern, not a flat colour
    with pytest.raises(InvalidConfigError, match="size"):
        make_texture(kind, size=MAX_TEXTURE_SIZE * 2)


def test_unknown_texture_kind_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidConfigError, match="valid: .*wood"):
        make_texture("plaid")


@pytest.mark.parametrize("setting", SETTINGS)
def test_nominal_layout_is_valid_and_on_the_table(setting: str) -> None:
    dressing = load_setting(setting)
    assert layout_violations(dressing, sample_layout(dressing, None)) == []
    x0, x1, y0, y1 = SceneConfig().table_extent
    for rect in dressing.distractor_placement["regions"]:
        assert x0 <= rect[0] < rect[1] <= x1 and y0 <= rect[2] < rect[3] <= y1


@pytest.mark.parametrize("setting", SETTINGS)
def test_expert_succeeds_after_randomizing(
    setting: str, make_sim_env: Callable[..., SimEnv]
) -> None:
    env = make_sim_env(task="tabletop", scene=small_scene(setting))
    env.reset(seed=0)
    randomize_dressing(env.model, env.data, setting, np.random.default_rng(0),
                       env.scene_state.base_pos)
    info: dict[str, Any] = {}
    for action in expert_actions(env.task, env.scene_state):
        _obs, _reward, _terminated, _truncated, info = env.step(action)
        assert info["primitive"]["ok"], info["primitive"]
    assert info["success"]


def _dress(env: SimEnv, setting: str, seed: int) -> tuple[dict[str, Any], np.ndarray]:
    env.reset(seed=seed)
    record = randomize_dressing(env.model, env.data, setting, np.random.default_rng(seed),
                                env.scene_state.base_pos)
    return record, env.observe()["shoulder_rgb"]


@pytest.mark.parametrize("setting", SETTINGS)
def test_same_seed_same_dressing_different_seed_different(
    setting: str, make_sim_env: Callable[..., SimEnv]
) -> None:
    env = make_sim_env(task="tabletop", scene=small_scene(setting))
    record, image = _dress(env, setting, 5)
    other_record, other_image = _dress(env, setting, 6)
    again_record, again_image = _dress(env, setting, 5)  # after another draw: no drift
    assert json.dumps(record) == json.dumps(again_record)
    assert np.array_equal(image, again_image)
    assert record != other_record
    assert not np.array_equal(image, other_image)
    fresh = make_sim_env(task="tabletop", scene=small_scene(setting))
    fresh_record, fresh_image = _dress(fresh, setting, 5)
    assert fresh_record == record and np.array_equal(fresh_image, image)


@pytest.mark.parametrize("setting", CLUTTERED)
def test_distractors_avoid_the_task_area_and_each_other(setting: str) -> None:
    dressing = load_setting(setting)
    model, base = build_model(setting)
    task = TabletopTask()
    cfg = task.config
    # the tabletop task's own footprint: cube area (+ cube half size) and the jittered bin
    cx0, cx1, cy0, cy1 = cfg.cube_area
    half = cfg.cube_half_size
    bx, by = cfg.bin_position
    bhx = cfg.bin.inner_size[0] + cfg.bin.wall_thickness + cfg.bin_jitter
    bhy = cfg.bin.inner_size[1] + cfg.bin.wall_thickness + cfg.bin_jitter
    task_rects = [(cx0 - half, cx1 + half, cy0 - half, cy1 + half),
                  (bx - bhx, bx + bhx, by - bhy, by + bhy), (-0.15, 0.15, -0.15, 0.15)]
    x0, x1, y0, y1 = SceneConfig().table_extent
    radii = {obj["name"]: footprint_radius(obj) for obj in dressing.distractors}
    for seed in range(100):
        record = randomize_dressing(model, None, dressing, np.random.default_rng(seed), base)
        centres = {name: np.asarray(placed["pos"][:2]) - base[:2]
                   for name, placed in record["distractors"].items()}
        layout = [(*centres[obj["name"]], 0.0) for obj in dressing.distractors]
        assert layout_violations(dressing, layout) == []
        for name, centre in centres.items():
            r = radii[name]
            assert x0 + r <= centre[0] <= x1 - r and y0 + r <= centre[1] <= y1 - r
            for rx0, rx1, ry0, ry1 in task_rects:
                nearest = np.clip(centre, [rx0, ry0], [rx1, ry1])
                assert np.linalg.norm(centre - nearest) >= r, (seed, name)
            for other, other_centre in centres.items():
                if other != name:
                    assert np.linalg.norm(centre - other_centre) >= r + radii[other], seed


def test_extra_keepout_is_respected() -> None:
    dressing = load_setting("kitchen")
    keepout = [(0.74, 0.95, -0.6, 0.2)]
    for seed in range(30):
        layout = sample_layout(dressing, np.random.default_rng(seed), keepout)
        assert layout_violations(dressing, layout, keepout) == []


def test_impossible_placement_is_reported() -> None:
    dressing = load_setting("kitchen")
    with pytest.raises(InvalidConfigError, match="distractors|region"):
        sample_layout(dressing, np.random.default_rng(0), [(-1.0, 2.0, 0.2, 1.0)])


@pytest.mark.parametrize("setting", SETTINGS)
def test_record_round_trip_is_bitwise(setting: str) -> None:
    model, base = build_model(setting)
    data = mujoco.MjData(model)
    nominal = model_arrays(model)
    record = randomize_dressing(model, data, setting, np.random.default_rng(11), base)
    stored = json.loads(json.dumps(record))
    fresh, _ = build_model(setting)
    fresh_data = mujoco.MjData(fresh)
    apply_dressing(fresh, stored, fresh_data)
    dressed, replayed = model_arrays(model), model_arrays(fresh)
    assert dressed.keys() == replayed.keys()
    assert [k for k in dressed if dressed[k] != replayed[k]] == []
    assert [k for k in dressed if dressed[k] != nominal[k]]  # it did change something
    assert np.array_equal(data.qpos, fresh_data.qpos)


def test_free_distractors_follow_their_record_and_keyframe() -> None:
    model, base = build_model("kitchen")
    data = mujoco.MjData(model)
    record = randomize_dressing(model, data, "kitchen", np.random.default_rng(2), base)
    for name, placed in record["distractors"].items():
        body = model.body(distractor_body(name))
        assert np.allclose(data.xpos[body.id], placed["pos"])
    data.qpos[:] = 0.0
    mujoco.mj_resetDataKeyframe(model, data, 0)
    mujoco.mj_forward(model, data)
    for name, placed in record["distractors"].items():
        assert np.allclose(data.body(distractor_body(name)).xpos, placed["pos"])


def test_lab_randomization_is_small() -> None:
    dressing = load_setting("lab")
    model, base = build_model("lab")
    nominal_mount = model.body(CAMERA_MOUNT).pos.copy()
    for seed in range(20):
        record = randomize_dressing(model, None, dressing, np.random.default_rng(seed), base)
        ratio = np.asarray(record["key_light"]["diffuse"]) / dressing.key_light["diffuse"]
        assert np.all(np.abs(ratio - 1.0) <= 0.1 + 1e-9)
        head = np.asarray(record["headlight"]["ambient"]) / dressing.headlight["ambient"]
        assert np.all(np.abs(head - 1.0) <= 0.1 + 1e-9)
        assert record["table"]["rgba"] == pytest.approx(dressing.table["rgba"])
        assert np.all(np.abs(np.asarray(record["camera"]["pos"]) - nominal_mount) <= 0.01)
        angle = 2 * np.degrees(np.arccos(min(1.0, abs(record["camera"]["quat"][0]))))
        assert angle <= np.sqrt(3) * 1.0 + 1e-6
        assert record["distractors"] == {} and record["background"] == {}


def test_camera_jitter_shows_in_the_observed_extrinsics(
    make_sim_env: Callable[..., SimEnv]
) -> None:
    env = make_sim_env(task="tabletop", scene=replace(small_scene("lab"), randomize=False))
    env.reset(seed=0)  # nominal dressing
    before = env.observe()["shoulder_extrinsics"]
    record = randomize_dressing(env.model, env.data, "lab", np.random.default_rng(3),
                                env.scene_state.base_pos)
    after = env.observe()["shoulder_extrinsics"]
    moved = np.linalg.norm(after[:3, 3] - before[:3, 3])
    assert 0.0 < moved <= np.sqrt(3) * 0.01 + 1e-6
    expected = np.asarray(record["camera"]["pos"]) - env.scene_state.base_pos
    assert after[:3, 3] == pytest.approx(expected, abs=1e-6)
    cos = (np.trace(after[:3, :3].T @ before[:3, :3]) - 1.0) / 2.0
    assert 0.0 < np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))) <= np.sqrt(3) + 1e-6


def test_rng_none_gives_the_nominal_dressing() -> None:
    dressing = load_setting("outdoor")
    model, base = build_model("outdoor")
    record = randomize_dressing(model, None, dressing, None, base)
    assert record["key_light"]["diffuse"] == pytest.approx(dressing.key_light["diffuse"])
    assert record["floor"]["texture"] == dressing.floor["textures"][0]
    assert all(placed["visible"] for placed in record["background"].values())
    nominal = sample_layout(dressing, None)
    for obj, (x, y, _yaw) in zip(dressing.distractors, nominal, strict=True):
        assert record["distractors"][obj["name"]]["pos"][:2] == pytest.approx(base[:2] + [x, y])


def test_records_do_not_cross_settings() -> None:
    model, base = build_model("kitchen")
    record = randomize_dressing(model, None, "kitchen", np.random.default_rng(0), base)
    lab_model, _ = build_model("lab")
    with pytest.raises(InvalidConfigError, match="kitchen"):
        apply_dressing(lab_model, record)
    with pytest.raises(InvalidConfigError, match="lab"):
        randomize_dressing(model, None, "lab", None, base)


def test_outdoor_randomizes_sun_ground_and_background() -> None:
    model, base = build_model("outdoor")
    records = [randomize_dressing(model, None, "outdoor", np.random.default_rng(seed), base)
               for seed in range(30)]
    assert {r["floor"]["texture"] for r in records} == {"grass", "gravel"}
    directions = np.array([r["key_light"]["dir"] for r in records])
    assert np.ptp(np.degrees(np.arctan2(directions[:, 1], directions[:, 0]))) > 30.0
    visible = [[b["visible"] for b in r["background"].values()] for r in records]
    assert len({tuple(v) for v in visible}) > 5
    assert bool(model.light("key_light").castshadow)
