"""Setting dressings load from scenes/ and unknown names are rejected with the valid ones."""

from __future__ import annotations

import pytest

from agentic_env.errors import InvalidConfigError
from agentic_env.scene import SceneBuilder, SceneConfig
from agentic_env.settings import available_settings, load_setting


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
