"""Contact and objects of the realistic world (agentic_env.sim.realism.contact, .servo):
draws are deterministic per seed and inside their cited ranges (the pads' friction within
its material's spread around the ideal world's pad value), apply_contact writes only its
model fields, the pads' contacts take the pad coefficient through their explicit pairs
(which start as the ideal world's pad contacts), the table's contacts the table one and two
objects' contacts their pair's own coefficient (through explicit pairs that start as the
ideal world's contacts of the two; every pair of materials has one), the objects start at
rest, perfect top-down picks of the sorting task's fruit hold while lifting, the servo
error stays in its dead band, and a heavy slippery object slips under a fast move that a
light grippy one survives."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import mujoco
import numpy as np
import pytest

from agentic_env.contract.actions import pick, top_down_pose
from agentic_env.contract.workcell import ROBOT_PREFIX, SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.experts.sorting import SortingExpert
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.robot.constants import FINGER_PAD_GEOMS, GRIPPER_WIDTH_RANGE
from agentic_env.sim.realism.contact import (
    CONTACT_MODEL_FIELDS,
    ContactDraw,
    ObjectContact,
    apply_contact,
    contact_params,
    draw_contact,
    material_of,
    object_friction_range,
    pad_friction,
)
from agentic_env.sim.realism.servo import ServoError, deadband_width, draw_servo_error
from agentic_env.sim.realism.world import REST_SPEED
from agentic_env.sim.state import free_body_names, holding

SMALL_SCENE = SceneConfig(
    shoulder_camera=azure_kinect_color(64, 36), wrist_camera=realsense_d405(64, 36))
#: The ideal world's pad friction (assets/finray_gripper.xml), the reference of every draw.
IDEAL_PAD_FRICTION = 1.2
#: Sorting trials and fruit for the perfect picks: apples and bananas, the apples of seeds 49
#: and 52 among them (they slipped out of the pads while closing before the pads' friction
#: was drawn around the pads' own value and the fruit's centre-of-mass offset bounded).
FRUIT_PICKS = ((5, "apple-1"), (49, "apple-1"), (52, "apple-1"), (8, "banana-1"),
               (25, "banana-1"), (51, "banana-1"))
#: Lowest lift of a held fruit above its start after a pick (the pick lifts 12 cm), metres.
MIN_LIFT = 0.08


@pytest.fixture(scope="module")
def sorting_env() -> Iterator[SimEnv]:
    """A realistic sorting env with contact only: every catalogue object is a free body with
    its pad contact pairs; the model holds its nominal fields after ``_nominal``."""
    env = SimEnv(task="sorting", scene=SMALL_SCENE, realism="realistic",
                 world_effects=("contact",))
    env.reset(seed=0)
    yield env
    env.close()


def _nominal(env: SimEnv) -> mujoco.MjModel:
    """``env``'s model with its world fields back at their defaults (as before a draw)."""
    for name, default in env._model_defaults.items():
        getattr(env.model, name)[:] = default
    return env.model


@pytest.fixture(scope="module")
def stacking_env() -> Iterator[SimEnv]:
    env = SimEnv(task="stacking", scene=SMALL_SCENE, realism="realistic",
                 world_effects=("contact",))
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
        for key in ("table_friction", "mass_scale"):
            low, high = material[key]
            assert 0.0 < low <= high, (name, key)
        assert 0.0 < material["pad_friction_spread"] < 0.5
        assert 0.0 <= material["com_offset"] < 0.5


def test_every_pair_of_materials_has_its_object_friction() -> None:
    """Two objects of any two materials have a cited static friction range, the same in
    either order; the table lists nothing else."""
    params = contact_params()
    materials = sorted(params["materials"])
    pairs = list(itertools.combinations_with_replacement(materials, 2))
    for first, second in pairs:
        low, high = object_friction_range(first, second)
        assert 0.0 < low <= high <= 2.0, (first, second)
        assert object_friction_range(second, first) == [low, high]
    assert set(params["object_pairs"]) == {"/".join(p) for p in pairs} | {"source"}
    assert len(params["object_pairs"]["source"]) > 40
    with pytest.raises(InvalidConfigError, match="object_pairs"):
        object_friction_range("wood", "glass")


def test_draw_is_deterministic_per_seed_and_leaves_the_model_alone(sorting_env) -> None:
    model = _nominal(sorting_env)
    before = _model_arrays(model)
    first = draw_contact(model, np.random.default_rng(7))
    again = draw_contact(model, np.random.default_rng(7))
    other = draw_contact(model, np.random.default_rng(8))
    assert first.to_dict() == again.to_dict()
    assert first.to_dict() != other.to_dict()
    after = _model_arrays(model)
    assert all(np.array_equal(before[k], after[k]) for k in before)


def test_draws_stay_inside_their_ranges(sorting_env) -> None:
    """The pads' friction stays within its material's spread around the ideal world's pad
    value; the table friction within its material's published range."""
    model = _nominal(sorting_env)
    assert pad_friction(model) == pytest.approx(IDEAL_PAD_FRICTION)
    materials = contact_params()["materials"]
    draws = [draw_contact(model, np.random.default_rng(seed)) for seed in range(20)]
    assert [o.body for o in draws[0].objects] == free_body_names(model)
    assert {o.material for o in draws[0].objects} >= {"fruit", "wood", "plastic", "metal",
                                                      "cardboard", "rubber"}
    for obj in (obj for draw in draws for obj in draw.objects):
        params = materials[obj.material]
        body = model.body(obj.body).id
        scale = obj.mass / model.body_mass[body]
        assert params["mass_scale"][0] <= scale <= params["mass_scale"][1]
        assert (abs(obj.pad_friction / IDEAL_PAD_FRICTION - 1.0)
                <= params["pad_friction_spread"]), obj
        assert params["table_friction"][0] <= obj.table_friction <= params["table_friction"][1]
        offset = np.abs(np.array(obj.com) - model.body_ipos[body])
        # no geom of a catalogue object reaches farther than 15 cm from its origin
        assert np.all(offset <= params["com_offset"] * 0.15)
    # around the pads' value: some draws grip more than the ideal pads, some less
    fruit = [o.pad_friction for draw in draws for o in draw.objects if o.material == "fruit"]
    assert min(fruit) < IDEAL_PAD_FRICTION < max(fruit)
    # every pair of objects, each inside its two materials' range
    bodies = free_body_names(model)
    assert [p.bodies for p in draws[0].pairs] == list(itertools.combinations(bodies, 2))
    for pair in (pair for draw in draws for pair in draw.pairs):
        assert pair.materials == tuple(material_of(body) for body in pair.bodies)
        low, high = object_friction_range(*pair.materials)
        assert low <= pair.friction <= high, pair


def test_apply_writes_only_its_fields_and_is_idempotent(sorting_env) -> None:
    model = _nominal(sorting_env)
    before = _model_arrays(model)
    draw = draw_contact(model, np.random.default_rng(5))
    try:
        apply_contact(model, draw)
        once = _model_arrays(model)
        apply_contact(model, draw)
        twice = _model_arrays(model)
        changed = {k for k in before if not np.array_equal(before[k], once[k])}
        assert changed <= set(CONTACT_MODEL_FIELDS)
        assert {"body_mass", "geom_friction", "pair_friction"} <= changed
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


def test_apply_needs_the_pad_pairs(make_sim_env) -> None:
    """The ideal world's model has no pad pairs: a draw cannot reach its pad contacts."""
    ideal = make_sim_env(task="stacking", scene=SMALL_SCENE)
    ideal.reset(seed=0)
    assert ideal.model.npair == 0
    with pytest.raises(InvalidConfigError, match="add_contact_pairs"):
        apply_contact(ideal.model, draw_contact(ideal.model, np.random.default_rng(0)))
    untouched = make_sim_env(task="stacking", scene=SMALL_SCENE, realism="realistic",
                             world_effects=("sensors", "calibration"))
    assert untouched.model.npair == 0  # without contact the model is the ideal world's


def _pick_first_cube(env: SimEnv, seed: int) -> str:
    _obs, info = env.reset(seed=seed)
    name = info["trial"]["objects"][0]["name"]
    env.step(pick(top_down_pose(env.scene_state.body_position(name).copy()), 0.04))
    assert holding(env.scene_state, name)
    return name


def _set_object(env: SimEnv, name: str, mass: float, pad: float, table: float = 0.4) -> None:
    body = env.model.body(name).id
    com = env.model.body_ipos[body]
    apply_contact(env.model, ContactDraw((ObjectContact(
        name, "wood", mass, pad, table, (float(com[0]), float(com[1]), float(com[2]))),)))


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


def _contact_params(env: SimEnv, index: int) -> dict[str, np.ndarray]:
    contact = env.data.contact[index]
    return {"friction": contact.friction.copy(), "solref": contact.solref.copy(),
            "solreffriction": contact.solreffriction.copy(), "solimp": contact.solimp.copy(),
            "dim": np.array(contact.dim), "includemargin": np.array(contact.includemargin)}


def test_pad_pairs_start_as_the_ideal_worlds_pad_contacts(stacking_env, make_sim_env) -> None:
    """Nominal pairs (the draw undone) give a held cube the ideal world's pad contacts."""
    ideal = make_sim_env(task="stacking", scene=SMALL_SCENE)
    name = _pick_first_cube(ideal, seed=2)
    expected = [_contact_params(ideal, i) for i in _contacts(ideal, name)[0]]
    env = stacking_env
    try:
        assert _pick_first_cube(env, seed=2) == name
        _nominal(env)
        env.robot.send(env.robot.joint_reference(), 0.0)
        with_pads = _contacts(env, name)[0]
        assert with_pads and expected
        for i in with_pads:
            for key, value in _contact_params(env, i).items():
                np.testing.assert_allclose(value, expected[0][key], rtol=1e-12, err_msg=key)
    finally:
        _nominal(env)


def test_pad_contacts_take_the_pad_coefficient_and_table_contacts_the_table_one(
        stacking_env) -> None:
    env = stacking_env
    defaults = {f: getattr(env.model, f).copy() for f in CONTACT_MODEL_FIELDS}
    pad = env.model.geom(ROBOT_PREFIX + FINGER_PAD_GEOMS[0]).id
    try:
        _obs, info = env.reset(seed=2)
        name = info["trial"]["objects"][0]["name"]
        drawn = next(o for o in env.world.episode.contact.objects if o.body == name)
        resting = _contacts(env, name)[1]  # on the stacking plate, scenery like the table
        assert resting
        for i in resting:  # the drawn table coefficient, not the pads'
            assert env.data.contact.friction[i][0] == pytest.approx(drawn.table_friction)
            assert env.data.contact.friction[i][0] != pytest.approx(drawn.pad_friction)
        _set_object(env, name, 0.05, 0.7, table=0.3)
        env.step(pick(top_down_pose(env.scene_state.body_position(name).copy()), 0.04))
        assert holding(env.scene_state, name)
        with_pads = _contacts(env, name)[0]
        assert with_pads
        spin = env.model.geom_friction[pad, 1] * 0.7 / IDEAL_PAD_FRICTION
        for i in with_pads:
            contact = env.data.contact[i]
            np.testing.assert_allclose(contact.friction[:3], [0.7, 0.7, spin])
            np.testing.assert_allclose(contact.solref, env.model.geom_solref[pad])
            np.testing.assert_allclose(contact.solimp, env.model.geom_solimp[pad])
    finally:
        for f, value in defaults.items():
            getattr(env.model, f)[:] = value


def _stack(env: SimEnv, lower: str, upper: str) -> None:
    """Put ``upper`` on ``lower`` (both boxes, axis-aligned as laid out), 1 mm into it, at
    rest, and recompute the contacts."""
    model, data = env.model, env.data
    heights = [model.geom_aabb[_geoms(env, name), 5].max() for name in (lower, upper)]
    joint = model.body(upper).jntadr[0]
    address = model.jnt_qposadr[joint]
    data.qpos[address:address + 3] = data.xpos[model.body(lower).id] + [
        0.0, 0.0, sum(heights) - 0.001]
    data.qvel[model.jnt_dofadr[joint]:model.jnt_dofadr[joint] + 6] = 0.0
    mujoco.mj_forward(model, data)


def _geoms(env: SimEnv, name: str) -> np.ndarray:
    model = env.model
    return np.flatnonzero((model.geom_bodyid == model.body(name).id)
                          & (model.geom_contype != 0))


def _between(env: SimEnv, first: str, second: str) -> list[int]:
    """Indices of the contacts between bodies ``first`` and ``second``."""
    bodies = {env.model.body(first).id, env.model.body(second).id}
    return [i for i in range(env.data.ncon)
            if {int(env.model.geom_bodyid[g]) for g in env.data.contact.geom[i]} == bodies]


def test_two_objects_touching_take_their_pairs_coefficient(stacking_env) -> None:
    """Two wooden blocks touching: their contact's friction is their pair's own draw from the
    wood-on-wood range, neither block's table coefficient (the larger of the two before)."""
    env = stacking_env
    _obs, info = env.reset(seed=3)
    lower, upper = (obj["name"] for obj in info["trial"]["objects"][:2])
    contact = env.world.episode.contact
    pair = next(p for p in contact.pairs if set(p.bodies) == {lower, upper})
    assert pair.materials == ("wood", "wood")
    low, high = object_friction_range("wood", "wood")
    assert low <= pair.friction <= high
    tables = [o.table_friction for o in contact.objects if o.body in (lower, upper)]
    assert pair.friction != pytest.approx(max(tables), abs=1e-3)
    _stack(env, lower, upper)
    touching = _between(env, lower, upper)
    assert touching
    # torsion scaled with sliding friction from the nominal contact of the two
    nominal = np.max([env._model_defaults["geom_friction"][_geoms(env, name)[0]]
                      for name in (lower, upper)], axis=0)
    for i in touching:
        np.testing.assert_allclose(env.data.contact.friction[i][:3], [
            pair.friction, pair.friction, nominal[1] * pair.friction / nominal[0]])


def test_object_pairs_start_as_the_ideal_worlds_object_contacts(stacking_env,
                                                                make_sim_env) -> None:
    """Nominal object pairs (the draw undone) give two blocks touching the ideal world's
    contact of the two: same condim, friction, solref, solimp and margin."""
    ideal = make_sim_env(task="stacking", scene=SMALL_SCENE)
    _obs, info = ideal.reset(seed=3)
    lower, upper = (obj["name"] for obj in info["trial"]["objects"][:2])
    _stack(ideal, lower, upper)
    expected = [_contact_params(ideal, i) for i in _between(ideal, lower, upper)]
    env = stacking_env
    try:
        env.reset(seed=3)
        _nominal(env)
        _stack(env, lower, upper)
        touching = _between(env, lower, upper)
        assert touching and expected
        for i in touching:
            for key, value in _contact_params(env, i).items():
                np.testing.assert_allclose(value, expected[0][key], rtol=1e-12, err_msg=key)
    finally:
        _nominal(env)


def test_trials_begin_with_the_objects_at_rest(make_sim_env) -> None:
    """A drawn centre of mass turns a round or lying body to another rest pose than the
    layout's; the reset waits for it (the lying bottle of reorientation seed 8 rolled 42 mm
    after the reset before)."""
    env = make_sim_env(task="reorientation", scene=SMALL_SCENE, realism="realistic",
                       world_effects=("contact",))
    env.reset(seed=8)
    joints = np.flatnonzero(env.model.jnt_type == mujoco.mjtJoint.mjJNT_FREE)
    dofs = env.model.jnt_dofadr[joints][:, None] + np.arange(3)
    assert np.linalg.norm(env.data.qvel[dofs], axis=1).max() < REST_SPEED[0]
    start = env.scene_state.body_position("blue-bottle-1").copy()
    env.wait(2.0)
    assert np.linalg.norm(env.scene_state.body_position("blue-bottle-1") - start) < 0.005


def test_perfect_top_down_picks_of_fruit_hold_while_lifting(make_sim_env) -> None:
    """The sorting task's own grasp of an apple or a banana at its true pose, in the whole
    realistic world: the fruit is between both fingers' pads after the lift, lifted."""
    env = make_sim_env(task="sorting", scene=SMALL_SCENE, realism="realistic")
    expert = SortingExpert(env.task)
    for seed, name in FRUIT_PICKS:
        env.reset(seed=seed)
        start = env.scene_state.body_position(name).copy()
        assert start[2] > 0.0, (seed, name)  # on the table in this trial
        _obs, _reward, _done, _truncated, info = env.step(
            expert.grasp_action(env.scene_state, name))
        assert holding(env.scene_state, name), (seed, name, info.get("primitive"))
        assert env.scene_state.body_position(name)[2] - start[2] > MIN_LIFT, (seed, name)


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
