"""Setting dressings (lab, kitchen, outdoor) loaded from the TOML files in ``scenes/``.

A dressing is data: surfaces (floor, table/counter) with procedural textures, the sky, the
lights, the shoulder camera's pose jitter, clutter objects on the table (*distractors*) and
static scenery far behind it (*background*). The schema is documented at the top of
``scenes/kitchen.toml``; :func:`load_setting` validates a file and fills every optional key
with its default, so consumers (:mod:`agentic_env.sim.scene`, :mod:`agentic_env.sim.dressing`) can
index the dicts directly.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from agentic_env.errors import InvalidConfigError
from agentic_env.sim.textures import MAX_TEXTURE_SIZE, texture_kinds

#: Shapes a dressing geom may have, with the number of size values each needs.
GEOM_SHAPES = {"box": 3, "cylinder": 2, "sphere": 1, "ellipsoid": 3, "capsule": 2}

_REQUIRED = ("floor", "sky", "table", "headlight", "key_light")
_OPTIONAL = ("camera", "textures", "distractor_placement", "distractors", "background")

_SURFACE_DEFAULTS: dict[str, Any] = {
    "textures": [],            # procedural texture names; one is drawn per reset
    "texture_repeat": [1.0, 1.0],
    "texture_uniform": False,  # repeat per metre instead of per face
    "rgba": [1.0, 1.0, 1.0, 1.0],  # tint (multiplies the texture)
    "specular": 0.1,
    "brightness_jitter": 0.0,  # relative, uniform +-
    "tint_jitter": 0.0,        # relative per channel, uniform +-
}
_FLOOR_DEFAULTS: dict[str, Any] = {**_SURFACE_DEFAULTS, "specular": 0.0, "half_size": 4.0,
                                   "texture_repeat": 8}
_HEADLIGHT_DEFAULTS: dict[str, Any] = {"intensity_jitter": 0.0}
_KEY_LIGHT_DEFAULTS: dict[str, Any] = {
    "specular": [0.1, 0.1, 0.1], "cast_shadow": False, "shadow_size": 2048, "shadow_clip": 1.0,
    "shadow_target": [0.4, 0.0, 0.0], "distance": 2.5, "azimuth_jitter_deg": 0.0,
    "elevation_jitter_deg": 0.0, "intensity_jitter": 0.0, "tint_jitter": 0.0,
}
_CAMERA_DEFAULTS: dict[str, Any] = {"position_jitter": 0.0, "angle_jitter_deg": 0.0}
_PLACEMENT_DEFAULTS: dict[str, Any] = {"regions": [], "keepout": [], "min_gap": 0.02,
                                       "yaw_jitter_deg": 180.0}
_DISTRACTOR_DEFAULTS: dict[str, Any] = {"mass": 0.3, "yaw_deg": 0.0, "brightness_jitter": 0.0,
                                        "tint_jitter": 0.0, "free": False}
_BACKGROUND_DEFAULTS: dict[str, Any] = {
    "yaw_deg": 0.0, "pos_jitter": [0.0, 0.0], "yaw_jitter_deg": 0.0, "probability": 1.0,
    "brightness_jitter": 0.0, "tint_jitter": 0.0,
}
_GEOM_DEFAULTS: dict[str, Any] = {"pos": [0.0, 0.0, 0.0], "euler_deg": [0.0, 0.0, 0.0],
                                  "rgba": [0.5, 0.5, 0.5, 1.0], "texture": None,
                                  "texture_repeat": [1.0, 1.0]}


def available_settings() -> list[str]:
    """Names of the settings that have a TOML file in ``scenes/``."""
    folder = resources.files("agentic_env.scenes")
    return sorted(p.name.removesuffix(".toml") for p in folder.iterdir()
                  if p.name.endswith(".toml"))


@dataclass(frozen=True)
class SettingDressing:
    """Appearance of a setting (see the schema at the top of ``scenes/kitchen.toml``).

    Attributes:
        name: setting name (the TOML file's stem).
        floor: floor surface (builtin checker or procedural textures), size, tint.
        sky: skybox gradient colours.
        table: table/counter surface: textures, tint and its jitter.
        headlight: ambient/diffuse of the camera-attached headlight and intensity jitter.
        key_light: the directional key light (sun) and its direction/intensity jitter.
        camera: shoulder camera pose jitter.
        textures: procedural textures by name (kind + generator parameters).
        distractor_placement: where distractors may stand (base-frame rectangles).
        distractors: free clutter objects on the table.
        background: static scenery far from the table.
    """

    name: str
    floor: dict[str, Any]
    sky: dict[str, Any]
    table: dict[str, Any]
    headlight: dict[str, Any]
    key_light: dict[str, Any]
    camera: dict[str, Any] = field(default_factory=lambda: dict(_CAMERA_DEFAULTS))
    textures: dict[str, dict[str, Any]] = field(default_factory=dict)
    distractor_placement: dict[str, Any] = field(
        default_factory=lambda: dict(_PLACEMENT_DEFAULTS))
    distractors: list[dict[str, Any]] = field(default_factory=list)
    background: list[dict[str, Any]] = field(default_factory=list)


def load_setting(name: str) -> SettingDressing:
    """Load and validate ``scenes/<name>.toml``, filling optional keys with defaults.

    Raises:
        InvalidConfigError: if no such setting exists (the message lists the valid ones) or
            the file breaks the schema.
    """
    valid = available_settings()
    if name not in valid:
        raise InvalidConfigError(f"unknown setting {name!r}; valid: {', '.join(valid)}")
    text = resources.files("agentic_env.scenes").joinpath(f"{name}.toml").read_text()
    return parse_setting(name, tomllib.loads(text))


def parse_setting(name: str, data: dict[str, Any]) -> SettingDressing:
    """Validate a parsed setting TOML document and fill defaults (see :func:`load_setting`)."""
    where = f"setting {name!r}"
    unknown = set(data) - set(_REQUIRED) - set(_OPTIONAL)
    if unknown:
        raise InvalidConfigError(
            f"{where}: unknown section(s) {sorted(unknown)}; valid: "
            f"{', '.join(_REQUIRED + _OPTIONAL)}")
    missing = [key for key in _REQUIRED if key not in data]
    if missing:
        raise InvalidConfigError(f"{where}: missing section(s) {missing}")
    textures = {key: dict(value) for key, value in data.get("textures", {}).items()}
    for tex_name, tex in textures.items():
        if tex.get("kind") not in texture_kinds():
            raise InvalidConfigError(
                f"{where}: texture {tex_name!r} needs kind in {texture_kinds()}")
        if "repeat" in tex and not isinstance(tex["repeat"], int | float | list):
            raise InvalidConfigError(f"{where}: texture {tex_name!r} repeat is a number or [u, v]")
        if not 8 <= tex.get("size", 256) <= MAX_TEXTURE_SIZE:
            raise InvalidConfigError(
                f"{where}: texture {tex_name!r} size must be 8..{MAX_TEXTURE_SIZE}")

    def known_textures(names: list[str], owner: str) -> list[str]:
        for tex_name in names:
            if tex_name not in textures:
                raise InvalidConfigError(
                    f"{where}: {owner} uses undefined texture {tex_name!r}; defined: "
                    f"{sorted(textures)}")
        return list(names)

    floor = {**_FLOOR_DEFAULTS, **data["floor"]}
    floor["textures"] = known_textures(floor["textures"], "floor")
    if not floor["textures"] and "checker_rgb1" not in floor:
        raise InvalidConfigError(f"{where}: floor needs textures or checker_rgb1/checker_rgb2")
    table = {**_SURFACE_DEFAULTS, **data["table"]}
    table["textures"] = known_textures(table["textures"], "table")
    key_light = {**_KEY_LIGHT_DEFAULTS, **data["key_light"]}
    if key_light["direction"][2] >= 0.0:
        raise InvalidConfigError(f"{where}: key_light direction must point down (z < 0)")
    placement = {**_PLACEMENT_DEFAULTS, **data.get("distractor_placement", {})}
    for key in ("regions", "keepout"):
        for rect in placement[key]:
            if len(rect) != 4 or rect[0] >= rect[1] or rect[2] >= rect[3]:
                raise InvalidConfigError(
                    f"{where}: distractor_placement.{key} rectangles are [x0, x1, y0, y1] "
                    f"with x0 < x1, y0 < y1; got {rect}")
    distractors = [_parse_object(where, "distractors", obj, _DISTRACTOR_DEFAULTS,
                                 known_textures) for obj in data.get("distractors", [])]
    for obj in distractors:
        if len(obj["pos"]) != 2:
            raise InvalidConfigError(
                f"{where}: distractor {obj['name']!r} pos is its nominal [x, y] on the table")
    if distractors and not placement["regions"]:
        raise InvalidConfigError(f"{where}: distractors need distractor_placement.regions")
    background = [_parse_object(where, "background", obj, _BACKGROUND_DEFAULTS,
                                known_textures) for obj in data.get("background", [])]
    names = [obj["name"] for obj in distractors + background]
    if len(set(names)) != len(names):
        raise InvalidConfigError(f"{where}: distractor/background names must be unique")
    return SettingDressing(
        name=name, floor=floor, sky=dict(data["sky"]), table=table,
        headlight={**_HEADLIGHT_DEFAULTS, **data["headlight"]}, key_light=key_light,
        camera={**_CAMERA_DEFAULTS, **data.get("camera", {})}, textures=textures,
        distractor_placement=placement, distractors=distractors, background=background,
    )


def _parse_object(
    where: str, section: str, raw: dict[str, Any], defaults: dict[str, Any], known_textures: Any
) -> dict[str, Any]:
    obj = {**defaults, **raw}
    if "name" not in obj or "pos" not in obj or not obj.get("geoms"):
        raise InvalidConfigError(f"{where}: every {section} entry needs name, pos and geoms")
    geoms = []
    for geom in obj["geoms"]:
        geom = {**_GEOM_DEFAULTS, **geom}
        shape = geom.get("shape")
        if shape not in GEOM_SHAPES:
            raise InvalidConfigError(
                f"{where}: {section} {obj['name']!r}: shape {shape!r} not in {sorted(GEOM_SHAPES)}")
        size = geom.get("size", [])
        if len(size) != GEOM_SHAPES[shape] or min(size) <= 0:
            raise InvalidConfigError(
                f"{where}: {section} {obj['name']!r}: a {shape} needs {GEOM_SHAPES[shape]} "
                f"positive half sizes, got {size}")
        if geom["texture"] is not None:
            known_textures([geom["texture"]], f"{section} {obj['name']!r}")
        geoms.append(geom)
    obj["geoms"] = geoms
    return obj
