"""Loose boxes (:mod:`agentic_env.oracle.boxes`): an emulated detector's boxes keep Table II's
Bbox IoU on average, the perfect model's are tight, and a loose box around a target takes in
a neighbour's pixels in a rendered scene."""

from __future__ import annotations

import json
import math
import tomllib
from importlib import resources

import numpy as np
import pytest

from agentic_env.agents.models.base import ModelQuery
from agentic_env.bench.modules import box_iou, mask_box
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.oracle import EmulatedModel, SimOracle, load_profile
from agentic_env.oracle.boxes import CALIBRATION_DRAWS, BoxModel, right_mean, unit_iou
from agentic_env.oracle.emulated import box_models
from agentic_env.oracle.naming import thing_geoms
from agentic_env.oracle.profile import parse_profile, profile_names

#: AgenticLab Table II: profile -> (row, Object Detector Bbox IoU %, Pointing SR %).
_TABLE_II = {"gemini-3-pro": ("Gemini 3 Pro", 53.7, 66.7),
             "gemini-3-flash": ("Gemini 3 Flash", 83.4, 88.1),
             "gemini-robotics": ("Gemini Robotics", 40.4, 57.1),
             "qwen3-vl-plus": ("Qwen3-VL-Plus", 74.8, 88.1),
             "qwen-vl-max": ("Qwen-VL-Max", 60.3, 81.0),
             "gpt-5.2": ("GPT-5.2", 11.2, 16.6),
             "gpt-4o": ("GPT-4o", 8.0, 14.3),
             "claude-4.5-opus": ("Claude-4.5-Opus", 6.1, 9.6),
             "claude-4.5-sonnet": ("Claude-4.5-Sonnet", 43.9, 61.9),
             "qwen2.5-vl-7b": ("Qwen2.5-VL-7B", 51.0, 73.8),
             "molmo-7b": ("Molmo-7B", 27.0, 76.2)}
#: Draws of each sampled mean.
_DRAWS = 20_000


def _raw(name: str) -> dict:
    """A packaged profile file's TOML data."""
    path = resources.files("agentic_env.oracle") / "profiles" / f"{name}.toml"
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _size(env: SimEnv) -> list[int]:
    """(height, width) of the shoulder camera's image, pixels."""
    camera = next(c for c in env.cameras if c.name == "shoulder")
    return [camera.height, camera.width]


def _masks(env: SimEnv) -> dict[str, np.ndarray]:
    segmentation = env.segmentation("shoulder")
    return {name: np.isin(segmentation, thing_geoms(env, name))
            for name in env.task.pddl_objects()}


def _detect(model: SimOracle, env: SimEnv, target: str, attempt: int) -> dict:
    fields = {"target": target, "camera": "shoulder", "image_size": _size(env),
              "attempt": attempt}
    return json.loads(model.complete(ModelQuery("detector", "detector", "",
                                                fields=fields)).text)


@pytest.mark.parametrize("name", profile_names())
def test_a_profiles_box_iou_is_its_table_ii_bbox_iou_or_none(name: str) -> None:
    detector = load_profile(name).modules.get("detector")
    if name not in _TABLE_II:
        assert detector is None or detector.box_iou is None  # not measured: tight boxes
        assert not box_models(load_profile(name))
        return
    row, iou, pointing = _TABLE_II[name]
    assert detector is not None and detector.box_iou is not None
    assert detector.box_iou.value == pytest.approx(iou / 100, abs=1e-9)
    assert detector.success.value == pytest.approx(pointing / 100, abs=1e-9)
    assert detector.box_iou.source == (f"paper AgenticLab, table II, row {row}, column "
                                       "Object Detector Bbox IoU (%)")


@pytest.mark.parametrize("name", sorted(_TABLE_II))
def test_mean_iou_over_many_draws_is_table_ii(name: str) -> None:
    """Right with the pointing rate (a box on the target, drawn loose), else IoU 0: the mean
    over many detections is Table II's Bbox IoU, within 3.3 standard errors of the draws
    and of the calibration sample the scale was solved on."""
    profile = load_profile(name)
    model = box_models(profile)["detector"]
    pointing = profile.modules["detector"].success.value
    rng = np.random.default_rng([11, sorted(_TABLE_II).index(name)])
    right = rng.random(_DRAWS) < pointing
    drawn = unit_iou(model.offsets(rng, _DRAWS))
    iou = np.where(right, drawn, 0.0)
    calibration_sd = pointing * float(drawn.std(ddof=1))
    tolerance = 3.3 * math.sqrt(float(iou.var(ddof=1)) / _DRAWS
                                + calibration_sd ** 2 / CALIBRATION_DRAWS)
    assert abs(iou.mean() - profile.modules["detector"].box_iou.value) <= tolerance
    # edges move outward two times in three
    coins = model.offsets(rng, _DRAWS) > 0
    assert abs(coins.mean() - 2 / 3) <= 3.3 * math.sqrt(2 / 9 / coins.size)


def test_right_detections_boxes_in_a_rendered_scene_keep_the_right_mean(sorting_env) -> None:
    """Rounded to pixels on a rendered scene (targets of 200 px or more, boxes clear of the
    image's edge), the rightly pointed boxes' mean IoU with the tight box is the right
    mean Table II implies (Bbox IoU / pointing), within 3.3 standard errors."""
    env = sorting_env
    profile = load_profile("molmo-7b")
    model = EmulatedModel(env, profile, seed=5)
    height, width = _size(env)
    masks = _masks(env)
    ious = []
    for target, mask in masks.items():
        tight = mask_box(mask)
        if mask.sum() < 200 or tight is None or tight[0] == 0 or tight[1] == 0 \
                or tight[2] == width or tight[3] == height:
            continue
        for attempt in range(40):
            answer = _detect(model, env, target, attempt)
            if answer["found"] and mask[answer["point"][1], answer["point"][0]]:
                ious.append(box_iou(answer["box"], tight))
    detector = profile.modules["detector"]
    wanted = right_mean(detector.box_iou.value, detector.success.value)
    assert len(ious) > 100
    assert abs(np.mean(ious) - wanted) <= 3.3 * np.std(ious, ddof=1) / math.sqrt(len(ious))


def test_the_perfect_model_and_the_ablation_return_the_tight_box(sorting_env) -> None:
    """The sim-oracle's box, and a profile's with ``[boxes] enabled = 0``, is the tight box
    of the target's visible pixels (IoU 1) whenever it points at the target."""
    env = sorting_env
    ablated = _raw("_defaults")
    ablated["boxes"] = {**ablated["boxes"], "enabled": {"value": 0, "assumption": "ablation"}}
    tight_profile = parse_profile("molmo-7b", _raw("molmo-7b"), ablated)
    assert box_models(load_profile("molmo-7b")) and not box_models(tight_profile)
    perfect, emulated = SimOracle(env), EmulatedModel(env, tight_profile, seed=2)
    seen, right = 0, 0
    for target, mask in _masks(env).items():
        if mask.sum() < 40:
            continue
        seen += 1
        assert _detect(perfect, env, target, 0)["box"] == list(mask_box(mask))
        for attempt in range(5):
            answer = _detect(emulated, env, target, attempt)
            if answer["found"] and mask[answer["point"][1], answer["point"][0]]:
                right += 1
                assert answer["box"] == list(mask_box(mask))
    assert seen >= 4 and right >= seen
    assert BoxModel(1.0, 2 / 3, 0.45).draw([3, 4, 20, 30], np.random.default_rng(0),
                                           (360, 640)) == [3, 4, 20, 30]


def test_a_loose_box_around_a_target_takes_in_its_neighbours_pixels(sorting_env) -> None:
    """In the rendered sorting scene (seed 0) the soda can's tight box holds no other task
    object's pixels; loose boxes of rightly pointed detections often hold the rubber
    duck's beside it."""
    env = sorting_env
    masks = _masks(env)
    target = "soda-can-1"
    x0, y0, x1, y1 = mask_box(masks[target])
    others = {n: m for n, m in masks.items() if n != target}
    assert not any(m[y0:y1, x0:x1].any() for m in others.values())
    model = EmulatedModel(env, load_profile("molmo-7b"), seed=3)
    right, with_neighbour = 0, 0
    for attempt in range(40):
        answer = _detect(model, env, target, attempt)
        if not answer["found"] or not masks[target][answer["point"][1], answer["point"][0]]:
            continue
        right += 1
        u0, v0, u1, v1 = answer["box"]
        with_neighbour += any(m[v0:v1, u0:u1].any() for m in others.values())
    assert right >= 20 and with_neighbour >= right // 5


def test_box_iou_is_only_a_detectors_and_boxes_are_given_whole() -> None:
    defaults = _raw("_defaults")
    wrong = _raw("gpt-4o")
    wrong["modules"] = {**wrong["modules"], "checker": {
        **wrong["modules"]["checker"], "box_iou": {"value": 0.5, "assumption": "x"}}}
    with pytest.raises(InvalidConfigError, match="only the detector"):
        parse_profile("gpt-4o", wrong, defaults)
    partial = {**defaults, "boxes": {"enabled": {"value": 1, "assumption": "x"}}}
    with pytest.raises(InvalidConfigError, match="gives all of"):
        parse_profile("gpt-4o", _raw("gpt-4o"), partial)
