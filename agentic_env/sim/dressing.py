"""Per-reset randomisation of a setting's dressing, without recompiling the model.

:func:`randomize_dressing` draws, within the ranges of the setting's TOML file,

* the key light's direction (azimuth/elevation jitter) and intensity/tint, and the headlight's
  intensity;
* the table/counter and floor appearance: one of the surface's textures and a tint within
  its colour class (brightness and per-channel jitter);
* the poses of the distractors (free clutter bodies) by rejection sampling their footprint
  circles inside the placement regions, outside the keep-out rectangles (the task area) and
  apart from each other, plus their colours;
* the background objects' presence, positions, yaws and colours;
* a small pose jitter of the shoulder camera (its mount body moves, housing included; the
  observation's extrinsics are read from the simulator, so they follow).

It returns a JSON-serialisable *record* of the absolute values applied. :func:`apply_dressing`
writes a record into a model (and optionally a data), so a record stored in a trial spec
reproduces the dressing bitwise on a freshly built model: ``randomize_dressing`` itself only
draws a record and then calls ``apply_dressing``. All jitter is drawn around the nominal
values of the TOML file (and of the built scene for the camera), never around the current
model values, so repeated resets do not drift.

Free distractors' poses are written to ``data.qpos`` and also to ``model.qpos0`` and every
keyframe's ``key_qpos``, so a keyframe reset (e.g. after a divergence) puts the clutter back
where the episode had it; static distractors (``free = false``) move via ``model.body_pos``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mujoco
import numpy as np

from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.rotations import yaw_quat
from agentic_env.sim.settings import SettingDressing, load_setting

#: Version of the record layout.
RECORD_VERSION = 1
#: Model names the scene builder uses for dressing elements.
KEY_LIGHT = "key_light"
TABLE_MATERIAL = "table_mat"
FLOOR_MATERIAL = "floor_mat"
CAMERA_MOUNT = "shoulder_camera_mount"
#: Custom numeric holding the shoulder mount's nominal pose (pos 3, quat 4).
CAMERA_MOUNT_NOMINAL = "dressing/shoulder_mount_nominal"
#: Custom text holding the setting name of a built model.
SETTING_TEXT = "dressing/setting"
#: Distractors start this far above their resting height, metres (they settle).
DROP_HEIGHT = 1e-3
#: Hidden background objects are moved this far below the floor, metres.
HIDDEN_DEPTH = 50.0
_PLACEMENT_RESTARTS = 50
_PLACEMENT_TRIES = 300
_MIN_ELEVATION_DEG = 10.0
_RGB = int(mujoco.mjtTextureRole.mjTEXROLE_RGB)

Rect = Sequence[float]


# -- names ------------------------------------------------------------------------------------

def texture_name(name: str) -> str:
    """Model name of procedural texture ``name`` of the setting."""
    return f"tex/{name}"


def distractor_body(name: str) -> str:
    """Model name of distractor ``name``'s free body (its joint is ``<body>/free``)."""
    return f"distractor/{name}"


def background_body(name: str) -> str:
    """Model name of background object ``name``'s static body."""
    return f"background/{name}"


def visual_geom(body: str, index: int) -> str:
    """Model name of the ``index``-th visual geom of a dressing body."""
    return f"{body}/visual{index}"


# -- geometry of dressing objects --------------------------------------------------------------

def geom_quat(geom: dict[str, Any]) -> np.ndarray:
    """Orientation (w, x, y, z) of a dressing geom from its ``euler_deg`` (intrinsic xyz)."""
    quat = np.zeros(4)
    mujoco.mju_euler2Quat(quat, np.deg2rad(np.asarray(geom["euler_deg"], float)), "xyz")
    return quat


def _geom_half_extents(geom: dict[str, Any]) -> np.ndarray:
    """Half extents (3,) of the axis-aligned box around a geom, in its object's frame."""
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, geom_quat(geom))
    rot = rot.reshape(3, 3)
    size = np.asarray(geom["size"], float)
    shape = geom["shape"]
    if shape == "box":
        return np.abs(rot) @ size
    if shape == "ellipsoid":
        return np.sqrt((rot**2) @ size**2)
    if shape == "sphere":
        return np.full(3, size[0])
    radius, half_length = size
    axis = np.abs(rot[:, 2])
    if shape == "cylinder":
        return axis * half_length + radius * np.sqrt(np.clip(1.0 - axis**2, 0.0, 1.0))
    return axis * half_length + radius  # capsule


def object_bounds(obj: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper corners (3,) of the box around a dressing object's geoms, object frame."""
    lows, highs = [], []
    for geom in obj["geoms"]:
        extent = _geom_half_extents(geom)
        pos = np.asarray(geom["pos"], float)
        lows.append(pos - extent)
        highs.append(pos + extent)
    return np.min(lows, axis=0), np.max(highs, axis=0)


def rest_height(obj: dict[str, Any]) -> float:
    """Height of the object's origin above the surface it stands on, metres."""
    return float(-object_bounds(obj)[0][2])


def footprint_radius(obj: dict[str, Any]) -> float:
    """Radius of the circle around the object's origin that holds its bounding box at any yaw.

    The distractor's collision box is that bounding box, so disjoint footprints mean
    distractors that never interpenetrate, visually or physically.
    """
    low, high = object_bounds(obj)
    reach = np.maximum(np.abs(low[:2]), np.abs(high[:2]))
    return float(np.hypot(*reach))


# -- randomisation ----------------------------------------------------------------------------

def randomize_dressing(
    model: mujoco.MjModel,
    data: mujoco.MjData | None,
    dressing: SettingDressing | str,
    rng: np.random.Generator | None,
    base_pos: Sequence[float],
    keepout: Sequence[Rect] = (),
) -> dict[str, Any]:
    """Draw a dressing within the setting's ranges, apply it, and return its record.

    Args:
        model: a model built by :class:`agentic_env.sim.scene.SceneBuilder` for this setting.
        data: if given, the distractors are placed in it (qpos, zero velocity) and
            ``mj_forward`` runs so it renders right away.
        dressing: the setting (or its name).
        rng: random generator; ``None`` gives the nominal dressing (TOML values, nominal
            distractor poses, every background object visible, no jitter).
        base_pos: robot base origin in the world (3,), metres.
        keepout: extra base-frame rectangles ``[x0, x1, y0, y1]`` distractors must avoid
            (e.g. a task's own area), on top of the setting's.

    Returns:
        The JSON-serialisable record (see :func:`apply_dressing`).

    Raises:
        InvalidConfigError: if the model was built for another setting, or the distractors
            cannot be placed in the regions left free.
    """
    if isinstance(dressing, str):
        dressing = load_setting(dressing)
    _check_setting(model, dressing.name)
    base = np.asarray(base_pos, float)
    record: dict[str, Any] = {"version": RECORD_VERSION, "setting": dressing.name}
    record["key_light"] = _draw_key_light(dressing, rng, base)
    record["headlight"] = _draw_headlight(dressing, rng)
    record["table"] = _draw_surface(dressing, dressing.table, rng)
    record["floor"] = _draw_surface(dressing, dressing.floor, rng)
    record["camera"] = _draw_camera(model, dressing, rng)
    layout = sample_layout(dressing, rng, keepout)
    record["distractors"] = {}
    for obj, (x, y, yaw) in zip(dressing.distractors, layout, strict=True):
        rgba = _jitter_colours(obj, rng)
        drop = DROP_HEIGHT if obj["free"] else 0.0
        record["distractors"][obj["name"]] = {
            "pos": _floats(base + [x, y, rest_height(obj) + drop]),
            "quat": _floats(yaw_quat(yaw)),
            "rgba": rgba,
        }
    record["background"] = {
        obj["name"]: _draw_background(obj, rng, base) for obj in dressing.background
    }
    apply_dressing(model, record, data)
    return record


def _floats(values: Any) -> list[float]:
    return [float(v) for v in np.asarray(values, float).ravel()]


def _uniform(rng: np.random.Generator | None, half_width: float, size: int | None = None) -> Any:
    if rng is None:
        return np.zeros(size) if size is not None else 0.0
    return rng.uniform(-half_width, half_width, size)


def _colour(rgba: Sequence[float], brightness: float, tint: np.ndarray) -> list[float]:
    rgb = np.clip(np.asarray(rgba[:3], float) * brightness * tint, 0.0, 1.0)
    return _floats([*rgb, rgba[3] if len(rgba) > 3 else 1.0])


def _draw_key_light(
    dressing: SettingDressing, rng: np.random.Generator | None, base: np.ndarray
) -> dict[str, Any]:
    key = dressing.key_light
    nominal = np.asarray(key["direction"], float)
    nominal /= np.linalg.norm(nominal)
    azimuth = np.arctan2(nominal[1], nominal[0]) + np.deg2rad(
        _uniform(rng, key["azimuth_jitter_deg"]))
    elevation = np.arcsin(-nominal[2]) + np.deg2rad(_uniform(rng, key["elevation_jitter_deg"]))
    elevation = np.clip(elevation, np.deg2rad(_MIN_ELEVATION_DEG), np.pi / 2)
    direction = np.array([np.cos(elevation) * np.cos(azimuth),
                          np.cos(elevation) * np.sin(azimuth), -np.sin(elevation)])
    intensity = 1.0 + _uniform(rng, key["intensity_jitter"])
    tint = 1.0 + _uniform(rng, key["tint_jitter"], 3)
    target = base + np.asarray(key["shadow_target"], float)
    return {
        "dir": _floats(direction),
        "pos": _floats(target - key["distance"] * direction),
        "diffuse": _floats(np.clip(np.asarray(key["diffuse"]) * intensity * tint, 0.0, 1.0)),
        "specular": _floats(np.clip(np.asarray(key["specular"]) * intensity, 0.0, 1.0)),
    }


def nominal_key_light(dressing: SettingDressing, base_pos: Sequence[float]) -> dict[str, Any]:
    """The key light's nominal ``dir``, ``pos``, ``diffuse`` and ``specular`` (world frame)."""
    return _draw_key_light(dressing, None, np.asarray(base_pos, float))


def _draw_headlight(dressing: SettingDressing, rng: np.random.Generator | None) -> dict[str, Any]:
    head = dressing.headlight
    intensity = 1.0 + _uniform(rng, head["intensity_jitter"])
    return {
        "ambient": _floats(np.clip(np.asarray(head["ambient"]) * intensity, 0.0, 1.0)),
        "diffuse": _floats(np.clip(np.asarray(head["diffuse"]) * intensity, 0.0, 1.0)),
    }


def surface_repeat(dressing: SettingDressing, surface: dict[str, Any],
                   texture: str | None) -> list[float]:
    """MuJoCo ``texrepeat`` of a surface showing ``texture`` (the texture's own repeat, if set).

    With ``texture_uniform`` the TOML gives textures per metre; MuJoCo's uniform ``texrepeat``
    counts repeats per 2 m (per unit of half size), hence the factor 2.
    """
    repeat = surface["texture_repeat"]
    if texture is not None and "repeat" in dressing.textures[texture]:
        repeat = dressing.textures[texture]["repeat"]
    repeat = np.broadcast_to(np.asarray(repeat, float), (2,))
    return _floats(repeat * (2.0 if surface["texture_uniform"] else 1.0))


def _draw_surface(
    dressing: SettingDressing, surface: dict[str, Any], rng: np.random.Generator | None
) -> dict[str, Any]:
    textures = surface["textures"]
    texture = None
    if textures:
        texture = textures[0] if rng is None else textures[int(rng.integers(len(textures)))]
    brightness = 1.0 + _uniform(rng, surface["brightness_jitter"])
    tint = 1.0 + _uniform(rng, surface["tint_jitter"], 3)
    return {"texture": texture, "texrepeat": surface_repeat(dressing, surface, texture),
            "rgba": _colour(surface["rgba"], brightness, tint)}


def _draw_camera(
    model: mujoco.MjModel, dressing: SettingDressing, rng: np.random.Generator | None
) -> dict[str, Any] | None:
    try:
        nominal = np.asarray(model.numeric(CAMERA_MOUNT_NOMINAL).data, float)
    except KeyError:
        return None  # not a SceneBuilder model: leave its cameras alone
    cam = dressing.camera
    pos = nominal[:3] + _uniform(rng, cam["position_jitter"], 3)
    angles = np.deg2rad(_uniform(rng, cam["angle_jitter_deg"], 3))
    jitter, quat = np.zeros(4), np.zeros(4)
    mujoco.mju_euler2Quat(jitter, angles, "xyz")
    mujoco.mju_mulQuat(quat, nominal[3:], jitter)
    quat /= np.linalg.norm(quat)
    return {"pos": _floats(pos), "quat": _floats(quat)}


def _jitter_colours(obj: dict[str, Any], rng: np.random.Generator | None) -> list[list[float]]:
    brightness = 1.0 + _uniform(rng, obj["brightness_jitter"])
    tint = 1.0 + _uniform(rng, obj["tint_jitter"], 3)
    return [_colour(geom["rgba"], brightness, tint) for geom in obj["geoms"]]


def _draw_background(
    obj: dict[str, Any], rng: np.random.Generator | None, base: np.ndarray
) -> dict[str, Any]:
    visible = True if rng is None else bool(rng.random() < obj["probability"])
    xy = np.asarray(obj["pos"], float) + _uniform(rng, 1.0, 2) * np.asarray(obj["pos_jitter"])
    yaw = np.deg2rad(obj["yaw_deg"] + _uniform(rng, obj["yaw_jitter_deg"]))
    pos = [base[0] + xy[0], base[1] + xy[1], 0.0 if visible else -HIDDEN_DEPTH]
    return {"visible": visible, "pos": _floats(pos), "quat": _floats(yaw_quat(yaw)),
            "rgba": _jitter_colours(obj, rng)}


# -- distractor placement ---------------------------------------------------------------------

def _circle_hits_rect(center: np.ndarray, radius: float, rect: Rect) -> bool:
    x0, x1, y0, y1 = rect
    nearest = np.clip(center, [x0, y0], [x1, y1])
    return bool(np.linalg.norm(center - nearest) < radius)


def _circle_in_rect(center: np.ndarray, radius: float, rect: Rect) -> bool:
    x0, x1, y0, y1 = rect
    return bool(x0 + radius <= center[0] <= x1 - radius and y0 + radius <= center[1] <= y1 - radius)


def layout_violations(
    dressing: SettingDressing, layout: Sequence[Sequence[float]], keepout: Sequence[Rect] = ()
) -> list[str]:
    """Why a distractor layout ``[(x, y, yaw), ...]`` (base frame) breaks the placement rules.

    Empty when every footprint lies inside a region, clear of the keep-outs by ``min_gap`` and
    at least ``min_gap`` from every other footprint.
    """
    placement = dressing.distractor_placement
    gap = placement["min_gap"]
    keepouts = [*placement["keepout"], *keepout]
    problems = []
    circles = []
    for obj, (x, y, _yaw) in zip(dressing.distractors, layout, strict=True):
        center, radius = np.array([x, y], float), footprint_radius(obj)
        if not any(_circle_in_rect(center, radius, rect) for rect in placement["regions"]):
            problems.append(f"{obj['name']} is outside every region")
        for rect in keepouts:
            if _circle_hits_rect(center, radius + gap, rect):
                problems.append(f"{obj['name']} is within {gap} m of keep-out {list(rect)}")
        for other, other_center, other_radius in circles:
            if np.linalg.norm(center - other_center) < radius + other_radius + gap:
                problems.append(f"{obj['name']} is within {gap} m of {other}")
        circles.append((obj["name"], center, radius))
    return problems


def sample_layout(
    dressing: SettingDressing, rng: np.random.Generator | None, keepout: Sequence[Rect] = ()
) -> list[tuple[float, float, float]]:
    """Distractor poses ``(x, y, yaw)`` (base frame, metres/radians) in the TOML order.

    ``rng=None`` gives the nominal poses of the TOML file. Otherwise footprint circles are
    rejection-sampled, largest first, uniformly inside the regions (weighted by the area left
    for each circle's centre), clear of the keep-outs and of each other.

    Raises:
        InvalidConfigError: if no valid layout is found.
    """
    objects = dressing.distractors
    if rng is None:
        return [(float(o["pos"][0]), float(o["pos"][1]), float(np.deg2rad(o["yaw_deg"])))
                for o in objects]
    placement = dressing.distractor_placement
    gap = placement["min_gap"]
    keepouts = [*placement["keepout"], *keepout]
    regions = np.asarray(placement["regions"], float).reshape(-1, 4)
    radii = [footprint_radius(obj) for obj in objects]
    order = sorted(range(len(objects)), key=lambda i: -radii[i])
    for _restart in range(_PLACEMENT_RESTARTS):
        placed: dict[int, tuple[np.ndarray, float]] = {}
        for index in order:
            radius = radii[index]
            low = regions[:, [0, 2]] + radius
            high = regions[:, [1, 3]] - radius
            area = np.prod(np.clip(high - low, 0.0, None), axis=1)
            if area.sum() <= 0.0:
                raise InvalidConfigError(
                    f"setting {dressing.name!r}: distractor {objects[index]['name']!r} "
                    f"(footprint radius {radius:.3f} m) fits in no placement region")
            for _try in range(_PLACEMENT_TRIES):
                region = rng.choice(len(regions), p=area / area.sum())
                center = rng.uniform(low[region], high[region])
                if any(_circle_hits_rect(center, radius + gap, rect) for rect in keepouts):
                    continue
                if all(np.linalg.norm(center - c) >= radius + r + gap
                       for c, r in placed.values()):
                    placed[index] = (center, radius)
                    break
            else:
                break  # restart the whole layout
        if len(placed) == len(objects):
            yaw_jitter = np.deg2rad(placement["yaw_jitter_deg"])
            return [(float(placed[i][0][0]), float(placed[i][0][1]),
                     float(np.deg2rad(obj["yaw_deg"]) + rng.uniform(-yaw_jitter, yaw_jitter)))
                    for i, obj in enumerate(objects)]
    raise InvalidConfigError(
        f"setting {dressing.name!r}: could not place {len(objects)} distractors in "
        f"{_PLACEMENT_RESTARTS} attempts; enlarge distractor_placement.regions or drop some")


# -- application ------------------------------------------------------------------------------

def model_setting(model: mujoco.MjModel) -> str | None:
    """Name of the setting ``model`` was built with (``None`` if it carries none)."""
    index = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_TEXT, SETTING_TEXT)
    if index < 0:
        return None
    start = model.text_adr[index]
    return bytes(model.text_data[start:start + model.text_size[index] - 1]).decode()


def _check_setting(model: mujoco.MjModel, name: str) -> None:
    built = model_setting(model)
    if built is not None and built != name:
        raise InvalidConfigError(
            f"dressing of setting {name!r} cannot be applied to a model built for {built!r}")


def _set_surface(model: mujoco.MjModel, material: str, surface: dict[str, Any]) -> None:
    mat_id = model.material(material).id
    if surface["texture"] is not None:
        model.mat_texid[mat_id, _RGB] = model.texture(texture_name(surface["texture"])).id
    model.mat_texrepeat[mat_id] = surface["texrepeat"]
    model.mat_rgba[mat_id] = surface["rgba"]


def _set_colours(model: mujoco.MjModel, body: str, colours: list[list[float]]) -> None:
    for index, rgba in enumerate(colours):
        model.geom(visual_geom(body, index)).rgba = rgba


def apply_dressing(
    model: mujoco.MjModel, record: dict[str, Any], data: mujoco.MjData | None = None
) -> None:
    """Write a record from :func:`randomize_dressing` into ``model`` (and ``data``).

    With ``data`` the distractors are also placed in it (zero velocity) and ``mj_forward``
    runs. Applying the same record to two models built alike leaves them bitwise identical.

    Raises:
        InvalidConfigError: unknown record version, or a record of another setting.
    """
    if record.get("version") != RECORD_VERSION:
        raise InvalidConfigError(
            f"dressing record version {record.get('version')!r}; expected {RECORD_VERSION}")
    _check_setting(model, record["setting"])
    light = model.light(KEY_LIGHT).id
    key = record["key_light"]
    model.light_dir[light] = key["dir"]
    model.light_pos[light] = key["pos"]
    model.light_diffuse[light] = key["diffuse"]
    model.light_specular[light] = key["specular"]
    model.vis.headlight.ambient = record["headlight"]["ambient"]
    model.vis.headlight.diffuse = record["headlight"]["diffuse"]
    _set_surface(model, TABLE_MATERIAL, record["table"])
    _set_surface(model, FLOOR_MATERIAL, record["floor"])
    if record["camera"] is not None:
        mount = model.body(CAMERA_MOUNT).id
        model.body_pos[mount] = record["camera"]["pos"]
        model.body_quat[mount] = record["camera"]["quat"]
    for name, placed in record["distractors"].items():
        body = distractor_body(name)
        joint = model.body(body).jntadr[0]
        if joint < 0:  # a static distractor
            body_id = model.body(body).id
            model.body_pos[body_id] = placed["pos"]
            model.body_quat[body_id] = placed["quat"]
        else:
            adr, dof = model.jnt_qposadr[joint], model.jnt_dofadr[joint]
            pose = [*placed["pos"], *placed["quat"]]
            model.qpos0[adr:adr + 7] = pose
            model.key_qpos[:, adr:adr + 7] = pose
            if data is not None:
                data.qpos[adr:adr + 7] = pose
                data.qvel[dof:dof + 6] = 0.0
        _set_colours(model, body, placed["rgba"])
    for name, placed in record["background"].items():
        body = background_body(name)
        body_id = model.body(body).id
        model.body_pos[body_id] = placed["pos"]
        model.body_quat[body_id] = placed["quat"]
        _set_colours(model, body, placed["rgba"])
    if data is not None:
        mujoco.mj_forward(model, data)
