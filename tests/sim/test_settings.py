"""Setting dressings load from scenes/, build, match their descriptions, and bad files are
rejected with a useful message (unknown names list the valid ones)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from agentic_env.contract.workcell import SceneConfig
from agentic_env.errors import InvalidConfigError
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.settings import available_settings, load_setting, parse_setting


def test_lab_setting_dresses_the_scene() -> None:
    assert "lab" in available_settings()
    dressing = load_setting("lab")
    model = SceneBuilder(SceneConfig(setting="lab")).compile()
    table_material = model.material("table_mat")
    assert list(table_material.rgba) == pytest.approx(dressing.table["rgba"])
    assert bool(model.light("key_light").castshadow) == dressing.key_light["cast_shadow"]


def test_unknown_setting_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidConfigError, match="valid: .*lab"):
        load_setting("moon")


@pytest.mark.parametrize("setting", ["lab", "kitchen", "outdoor"])
def test_every_setting_builds_with_its_dressing(setting: str) -> None:
    dressing = load_setting(setting)
    model = SceneBuilder(SceneConfig(setting=setting)).compile()
    assert model.ntex == len(dressing.textures) + (0 if dressing.floor["textures"] else 1) + 1
    flat = model.tex_type == mujoco.mjtTexture.mjTEXTURE_2D
    assert max(model.tex_width[flat].max(), model.tex_height[flat].max()) <= 256
    for obj in dressing.distractors:
        body = model.body(f"distractor/{obj['name']}")
        assert (body.jntnum[0] == 1) == obj["free"]
    for obj in dressing.background:
        body = model.body(f"background/{obj['name']}")
        assert body.jntnum[0] == 0
        geoms = range(body.geomadr[0], body.geomadr[0] + body.geomnum[0])
        assert all(model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 0 for g in geoms)
    assert bool(model.light("key_light").castshadow) == dressing.key_light["cast_shadow"]
    assert model.vis.quality.shadowsize == dressing.key_light["shadow_size"]


def test_settings_differ_as_described() -> None:
    lab, kitchen, outdoor = (load_setting(n) for n in ("lab", "kitchen", "outdoor"))
    assert not lab.distractors and not lab.background and not lab.key_light["cast_shadow"]
    assert len(kitchen.distractors) >= 4 and kitchen.table["textures"]
    warm = np.asarray(kitchen.key_light["diffuse"])
    assert warm[0] > warm[1] > warm[2]  # warm light
    assert outdoor.key_light["cast_shadow"] and len(outdoor.background) >= 4
    assert {outdoor.textures[t]["kind"] for t in outdoor.floor["textures"]} == {"grass", "gravel"}
    assert 1024 <= outdoor.key_light["shadow_size"] <= 2048


def test_scene_config_randomizes_by_default() -> None:
    assert SceneConfig().randomize is True


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"moon": {}}, "unknown section"),
        ({"table": {"rgba": [1, 1, 1, 1], "textures": ["nope"]}}, "undefined texture"),
        ({"distractors": [{"name": "x", "pos": [0.8, 0.6],
                           "geoms": [{"shape": "cone", "size": [0.1]}]}]}, "shape"),
        ({"distractors": [{"name": "x", "pos": [0.8, 0.6],
                           "geoms": [{"shape": "box", "size": [0.1]}]}]}, "half sizes"),
        ({"textures": {"t": {"kind": "plaid"}}}, "kind"),
        ({"key_light": {"direction": [0, 0, 1], "diffuse": [1, 1, 1]}}, "point down"),
    ],
)
def test_schema_errors_are_reported(patch: dict, message: str) -> None:
    data = {
        "floor": {"checker_rgb1": [0, 0, 0], "checker_rgb2": [1, 1, 1]},
        "sky": {"top_rgb": [0, 0, 1], "bottom_rgb": [1, 1, 1]},
        "table": {"rgba": [1, 1, 1, 1]},
        "headlight": {"ambient": [0.3] * 3, "diffuse": [0.3] * 3},
        "key_light": {"direction": [0, 0, -1], "diffuse": [0.5] * 3},
        "distractor_placement": {"regions": [[0.7, 0.9, 0.4, 0.7]]},
    }
    data.update(patch)
    with pytest.raises(InvalidConfigError, match=message):
        parse_setting("test", data)
