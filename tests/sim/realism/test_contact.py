"""Contact and objects of the realistic world (agentic_env.sim.realism.contact, .servo):
draws are deterministic per seed and inside their cited ranges, apply_contact writes only
its model fields and reaches the contacts the way MuJoCo mixes them, the servo error stays
in its dead band, and a heavy slippery object slips under a fast move that a light grippy
one survives."""

from __future__ import annotations

from collections.abc import Iterator

import mujoco
import numpy as np
import pytest

from agentic_env.contract.actions import pick, top_down_pose
from agentic_env.contract.workcell import ROBOT_PREFIX, SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.robot.constants import FINGER_PAD_GEOMS, GRIPPER_WIDTH_RANGE
from agentic_env.sim.realism.contact import (
    CONTACT_MODEL_FIELDS,
    ContactDraw,
    ObjectContact,
    apply_contact,
    contact_params,
    damping_ratio,
    draw_contact,
    material_of,
)
from agentic_env.sim.realism.servo import ServoError, deadband_width, draw_servo_error
from agentic_env.sim.state import free_body_names, holding

SMALL_SCENE = SceneConfig(
    shoulder_camera=azure_kinect_color(64, 36), wrist_camera=realsense_d405(64, 36))


@pytest.fixture(scope="module")
def sorting_model() -> Iterator[mujoco.MjModel]:
    """The sorting scene's model: every catalogue object is a free body."""
    env = SimEnv(task="sorting", scene=SMALL_SCENE)
    env.reset(seed=0)
    yield env.model
    env.close()


@pytest.fixture(scope="module")
def stacking_env() -> Iterator[SimEnv]:
    env = SimEnv(task="stacking", scene=SMALL_SCENE)
    yield env
    env.close()


def _model_arrays(model: mujoco.MjModel) -> dict[str, np.ndarray]:
    arrays = {}
    for name in dir(model):
        if name.startswith("_"):  # the bindings' internals, not model fields
            continue
        value = getattr(model, name)
        if isinstance(value, np.ndarray):
            arrays[name] = value.copy()
    return arrays


def test_materials_follow_the_body_name_patterns() -> None:
    assert material_of("apple-1") == "fruit"
    assert material_of("orange-cube-1") == "wood"  # a block, though its colour is a fruit
    assert material_of("block-3") == "wood" and material_of("red_cube") == "wood"
    assert material_of("soda-can-1") == "metal"
    assert material_of("cracker-box-1") == "cardboard"
    assert material_of("red-mug-1") == "ceramic"
    assert material_of("distractor/jam_jar") == contact_params()["default_material"]


def test_every_material_cites_its_source() -> None:
    for name, material in contact_params()["materials"].items():
        assert len(material["source"]) > 40, name
        for key in ("friction", "restitution", "mass_scale"):
            low, high = material[key]
            assert 0.0 < low <= high, (name, key)
        assert 0.0 <= material["com_offset"] < 0.5


def test_draw_is_deterministic_per_seed_and_leaves_the_model_alone(sorting_model) -> None:
    before = _model_arrays(sorting_model)
    first = draw_contact(sorting_model, np.random.default_rng(7))
    again = draw_contact(sorting_model, np.random.default_rng(7))
    other = draw_contact(sorting_model, np.random.default_rng(8))
    assert first.to_dict() == again.to_dict()
    assert first.to_dict() != other.to_dict()
    after = _model_arrays(sorting_model)
    assert all(np.array_equal(before[k], after[k]) for k in before)


def test_draws_stay_inside_their_ranges(sorting_model) -> None:
    materials = contact_params()["materials"]
    draw = draw_contact(sorting_model, np.random.default_rng(3))
    assert [o.body for o in draw.objects] == free_body_names(sorting_model)
    assert {o.material for o in draw.objects} >= {"fruit", "wood", "plastic", "metal",
                                                  "cardboard", "rubber"}
    for obj in draw.objects:
        params = materials[obj.material]
        body = sorting_model.body(obj.body).id
        scale = obj.mass / sorting_model.body_mass[body]
        assert params["mass_scale"][0] <= scale <= params["mass_scale"][1]
        assert params["friction"][0] <= obj.friction <= params["friction"][1]
        assert params["restitution"][0] <= obj.restitution <= params["restitution"][1]
        offset = np.abs(np.array(obj.com) - sorting_model.body_ipos[body])
        # no geom of a catalogue object reaches farther than 15 cm from its origin
        assert np.all(offset <= params["com_offset"] * 0.15)


def test_apply_writes_only_its_fields_and_is_idempotent(sorting_model) -> None:
    model = sorting_model
    before = _model_arrays(model)
    draw = draw_contact(model, np.random.default_rng(5))
    try:
        apply_contact(model, draw)
        once = _model_arrays(model)
        apply_contact(model, draw)
        twice = _model_arrays(model)
        changed = {k for k in before if not np.array_equal(before[k], once[k])}
        assert changed <= set(CONTACT_MODEL_FIELDS)
        assert {"body_mass", "geom_friction", "geom_solref"} <= changed
        assert all(np.allclose(once[k], twice[k]) for k in CONTACT_MODEL_FIELDS)
        apple = model.body("apple-1").id
        drawn = next(o for o in draw.objects if o.body == "apple-1")
        assert model.body_mass[apple] == pytest.approx(drawn.mass)
        ratio = drawn.mass / before["body_mass"][apple]
        np.testing.assert_allclose(model.body_inertia[apple],
                                   before["body_inertia"][apple] * ratio)
    finally:
        for name in CONTACT_MODEL_FIELDS:
            getattr(model, name)[:] = before[name]


def test_restitution_maps_to_the_damping_ratio_of_a_spring_damper() -> None:
    for e in (0.1, 0.5, 0.85):
        zeta = damping_ratio(e)
        assert np.exp(-np.pi * zeta / np.sqrt(1 - zeta**2)) == pytest.approx(e)
    assert damping_ratio(1.0) == 0.0


def _pick_first_cube(env: SimEnv, seed: int) -> str:
    _obs, info = env.reset(seed=seed)
    name = info["trial"]["objects"][0]["name"]
    env.step(pick(top_down_pose(env.scene_state.body_position(name).copy()), 0.04))
    assert holding(env.scene_state, name)
    return name


def _set_object(env: SimEnv, name: str, mass: float, friction: float) -> None:
    body = env.model.body(name).id
    com = env.model.body_ipos[body]
    apply_contact(env.model, ContactDraw((ObjectContact(
        name, "wood", mass, friction, 0.5, (float(com[0]), float(com[1]), float(com[2]))),)))


def _contacts(env: SimEnv, name: str) -> tuple[list[int], list[int]]:
    """Indices of ``name``'s contacts with the pads and with anything else."""
    model, data = env.model, env.data
    body = model.body(name).id
    pads = {model.geom(ROBOT_PREFIX + pad).id for pad in FINGER_PAD_GEOMS}
    with_pads, others = [], []
    for i in range(data.ncon):
        g1, g2 = data.contact.geom[i]
        if body not in (model.geom_bodyid[g1], model.geom_bodyid[g2]):
            continue
        (with_pads if {g1, g2} & pads else others).append(i)
    return with_pads, others


def test_pad_contacts_take_the_objects_friction_and_keep_the_pads_stiffness(
        stacking_env) -> None:
    env = stacking_env
    defaults = {f: getattr(env.model, f).copy() for f in CONTACT_MODEL_FIELDS}
    try:
        name = _pick_first_cube(env, seed=2)
        _set_object(env, name, 0.05, 0.7)
        for _ in range(5):
            env.robot.send(env.robot.joint_reference(), 0.0)
        with_pads, _ = _contacts(env, name)
        assert with_pads
        pad = env.model.geom(ROBOT_PREFIX + FINGER_PAD_GEOMS[0]).id
        for i in with_pads:
            contact = env.data.contact[i]
            assert contact.friction[0] == pytest.approx(0.7)
            np.testing.assert_allclose(contact.solref, defaults["geom_solref"][pad], rtol=1e-4)
            np.testing.assert_allclose(contact.solimp, env.model.geom_solimp[pad], rtol=1e-4)
    finally:
        for f, value in defaults.items():
            getattr(env.model, f)[:] = value


def _shake(env: SimEnv, amplitude: float = 0.5, periods: int = 3) -> None:
    """Swing the shoulder-lift joint up and down at full joint speed, gripper closed."""
    start = env.robot.joint_reference()
    for sign in [1.0, -1.0] * periods + [0.0]:
        target = start.copy()
        target[1] += sign * amplitude
        for _ in range(int(0.4 / env.robot.control_dt)):
            env.robot.send(target, 0.0)


@pytest.mark.slow
def test_heavy_slippery_object_slips_under_a_fast_move_a_light_grippy_one_survives(
        stacking_env) -> None:
    env = stacking_env
    defaults = {f: getattr(env.model, f).copy() for f in CONTACT_MODEL_FIELDS}
    held = {}
    try:
        for label, mass, friction in (("light", 0.05, 1.0), ("heavy", 0.4, 0.2)):
            _obs, info = env.reset(seed=2)
            name = info["trial"]["objects"][0]["name"]
            _set_object(env, name, mass, friction)
            env.step(pick(top_down_pose(env.scene_state.body_position(name).copy()), 0.04))
            assert holding(env.scene_state, name), label  # both survive the pick's lift
            _shake(env)
            held[label] = holding(env.scene_state, name)
            for f, value in defaults.items():
                getattr(env.model, f)[:] = value
    finally:
        for f, value in defaults.items():
            getattr(env.model, f)[:] = value
    assert held == {"light": True, "heavy": False}


def test_servo_error_stays_in_the_dead_band_and_on_the_protocols_grid() -> None:
    rng = np.random.default_rng(0)
    errors = [draw_servo_error(rng) for _ in range(200)]
    half = deadband_width() / 2
    offsets = np.array([e.offset for e in errors])
    assert np.all(np.abs(offsets) <= half) and offsets.std() > half / 4
    assert draw_servo_error(np.random.default_rng(1)) == draw_servo_error(
        np.random.default_rng(1))
    error = ServoError(offset=1.3e-4, resolution=1e-6)
    width = error.commanded(0.04)
    assert width == pytest.approx(0.04013)
    assert round(width * 1e6) == pytest.approx(width * 1e6, abs=1e-6)
    assert error.commanded(1.0) == GRIPPER_WIDTH_RANGE[1]
    assert ServoError(-1e-3, 1e-6).commanded(0.0) == GRIPPER_WIDTH_RANGE[0]


def test_robot_goes_to_the_servo_error_width(stacking_env) -> None:
    env = stacking_env
    env.reset(seed=0)
    robot = env.robot
    try:
        robot.servo_error = ServoError(offset=2e-4, resolution=1e-6)
        for _ in range(int(1.0 / robot.control_dt)):
            robot.send(robot.joint_reference(), 0.05)
        assert robot.gripper_reference() == pytest.approx(0.0502)
        assert robot.gripper_width() == pytest.approx(0.0502, abs=2e-4)
    finally:
        robot.servo_error = None
