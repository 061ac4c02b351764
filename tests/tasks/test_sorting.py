"""``AgenticEnv/Sorting-v0``: catalogue, goals and layout, predicates, language, PDDL, expert.

Envs use tiny cameras so that rendering costs next to nothing. Predicates are checked on
states built by hand: objects are put at a pose with ``set_free_body_pose`` and ``mj_forward``
(no physics), so each case tests the geometry rule alone.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator

import mujoco
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from support.envs import EXPECTED_CHECKER_ADVICE, run_expert

from agentic_env.contract.workcell import TABLE_HEIGHT, SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.experts import expert_actions
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.geometry.planar import rects_overlap
from agentic_env.pddl.planning import PlanStep
from agentic_env.registry import ENV_IDS
from agentic_env.tasks import TASKS
from agentic_env.tasks.catalogue import CATALOGUE, CATEGORIES
from agentic_env.tasks.instructions import CATEGORIES as INSTRUCTION_CATEGORIES
from agentic_env.tasks.predicates import lowest_point, tilt_degrees
from agentic_env.tasks.sorting import (
    BOWL,
    CLASSES,
    RULES,
    WHITE_BIN,
    SortingConfig,
    SortingTask,
)
from agentic_env.tasks.symbolic import infer_step

SMALL = SceneConfig(shoulder_camera=azure_kinect_color(64, 36),
                    wrist_camera=realsense_d405(64, 36))
#: Words an instruction may use for each group label (any one must appear), by style.
GROUP_WORDS = {
    "fruit": ("fruit", "produce", "grew on a tree"),
    "other": ("other objects", "remaining items", "everything else"),
    "food": ("food", "edible", "eat or drink"),
    "toy": ("toys", "playthings", "play with"),
    "tool": ("tools", "implements", "workshop"),
    "packaged": ("packaged food", "boxed and canned", "from a shop shelf"),
    "red": ("red", "fire engine"), "yellow": ("yellow", "ripe banana"),
    "green": ("green", "fresh grass"), "blue": ("blue objects", "blue items", "summer sky"),
}
#: Words an instruction may use for each container.
CONTAINER_WORDS = {"white-bin": ("white bin", "white container", "fresh snow"),
                   "blue-bin": ("blue bin", "blue container", "deep sea"),
                   "bowl": ("bowl", "dish")}


@pytest.fixture(scope="module")
def env() -> Iterator[SimEnv]:
    """One small-camera env shared by the tests that reset it first."""
    env = SimEnv(task="sorting", scene=SMALL, realism="ideal")
    yield env
    env.close()


@pytest.fixture
def private_cwd(tmp_path, monkeypatch):
    """Run in a private working directory: Fast Downward's driver writes its intermediate
    ``output.sas`` into the working directory, so planners running at the same time in one
    directory (parallel test runs) read each other's tasks."""
    monkeypatch.chdir(tmp_path)


def _task(env: SimEnv) -> SortingTask:
    assert isinstance(env.task, SortingTask)
    return env.task


def _rest(env: SimEnv, name: str, xy: np.ndarray, z: float = 0.0, yaw: float = 0.0) -> None:
    """Rest ``name`` in its rest orientation at ``xy`` with its lowest point at ``z``."""
    task = _task(env)
    task._set_pose(env.scene_state, name, np.asarray(xy, dtype=float), yaw, z=z - 1e-3)
    mujoco.mj_forward(env.model, env.data)


def _into(env: SimEnv, name: str, container: str, offset: tuple[float, float] = (0, 0)) -> None:
    """Rest ``name`` on the floor of ``container``, its footprint centred at ``offset`` from
    the container's centre and its long axis along y (a container's lanes)."""
    task, scene = _task(env), env.scene_state
    centre = scene.body_position(container)
    floor = centre[2] + task.containers[container].wall_thickness
    yaw = np.pi / 2
    footprint_centre = CATALOGUE[name[:-2]].footprint[0]
    turned = np.array([[0.0, -1.0], [1.0, 0.0]]) @ footprint_centre
    _rest(env, name, centre[:2] + np.asarray(offset) - turned, z=floor, yaw=yaw)


def _solve_in_place(env: SimEnv) -> None:
    task = _task(env)
    for name, (container, offset) in task._slots.items():
        _into(env, name, container, tuple(offset))


# -- registration, catalogue --------------------------------------------------------------------


def test_registered() -> None:
    assert TASKS["sorting"] == "agentic_env.tasks.sorting:SortingTask"
    assert ENV_IDS["AgenticEnv/Sorting-v0"] == "sorting"


def test_catalogue_entries_are_light_graspable_and_labelled() -> None:
    names = [entry.name for entry in CATALOGUE.values()]
    assert len(set(names)) == len(names) == 18
    assert {entry.category for entry in CATALOGUE.values()} == set(CATEGORIES)
    for entry in CATALOGUE.values():
        mass = entry.spec.mass + sum(part.mass for part in entry.spec.parts)
        assert 0.02 <= mass <= 0.15, (entry.kind, mass)
        assert 0.02 <= entry.grasp_width <= 0.065, (entry.kind, entry.grasp_width)
        assert entry.rest_height > 0.0
        assert entry.length <= 0.18  # fits a container lane (20 cm) when dropped along it
        # the fingertips stay 8 mm above the lowest point, the pads reach the object
        assert entry.tcp_height - 0.018 >= 0.008 - 1e-9
        assert entry.tcp_height - 0.018 < 2 * entry.rest_height
        assert entry.name == f"{entry.kind}-1" and entry.colour and entry.spec.attributes
    assert {e.kind for e in CATALOGUE.values() if e.category == "fruit"} == {
        "apple", "orange", "lemon", "banana", "peach", "plum"}
    assert all("edible" in e.attributes for e in CATALOGUE.values()
               if e.category in ("fruit", "food"))
    assert not any("edible" in e.attributes for e in CATALOGUE.values()
                   if e.category in ("block", "toy", "tool"))


def test_lowest_point_is_exact_for_tilted_round_geoms(env: SimEnv) -> None:
    env.reset(seed=0)
    scene = env.scene_state
    task = _task(env)
    name = "orange-1"
    _rest(env, name, (0.4, 0.0))
    assert lowest_point(scene, name) == pytest.approx(0.0, abs=1e-6)
    # tilted by 90 deg about x: the ellipsoid (0.030, 0.030, 0.027) rests on its y semi-axis
    task._set_pose(scene, name, np.array([0.4, 0.0]), 0.0, z=0.0)
    joint = env.model.body(name).jntadr[0]
    adr = env.model.jnt_qposadr[joint]
    env.data.qpos[adr + 3: adr + 7] = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]
    mujoco.mj_forward(env.model, env.data)
    centre = scene.body_position(name)[2]
    assert lowest_point(scene, name) == pytest.approx(centre - 0.030, abs=1e-6)


# -- env, goals, layout -------------------------------------------------------------------------


def test_check_env(make_sim_env: Callable[..., SimEnv]) -> None:
    env = make_sim_env(task="sorting", scene=SMALL)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for pattern in EXPECTED_CHECKER_ADVICE:
            warnings.filterwarnings("ignore", message=pattern, category=UserWarning)
        check_env(env, skip_render_check=True)


def _selected(rule: str, label: str, entry) -> bool:
    """Whether ``entry`` belongs to the group ``label`` of ``rule`` (independent of the task)."""
    if label == "other":
        return entry.category != "fruit"
    if label == "food":
        return entry.category in ("fruit", "food")
    if label in CLASSES:
        return entry.category in CLASSES[label]
    return entry.colour == label


def test_goals_follow_their_rule_and_fit_the_containers() -> None:
    task = SortingTask()
    rng = np.random.default_rng(0)
    entries = {e.name: e for e in CATALOGUE.values()}
    seen_rules, seen_counts = set(), set()
    for _ in range(300):
        task._sample_goal(rng)
        goal = task.goal()
        rule = goal["rule"]
        seen_rules.add(rule)
        active = task._active
        seen_counts.add(len(active))
        assert 3 <= len(active) <= 7 and len(set(active)) == len(active)
        groups = goal["groups"]
        assert len(groups) == (3 if rule == "category" else 2)
        assert len({g["container"] for g in groups}) == len(groups)
        if rule == "fruit":
            assert {g["label"] for g in groups} == {"fruit", "other"} and not goal["stay"]
            assert BOWL not in {g["container"] for g in groups}
        if rule == "food_toys":
            assert [g["label"] for g in groups] == ["food", "toy"]
            assert groups[0]["container"] == BOWL
        for group in groups:
            assert group["items"], goal
            members = {n for n in active if _selected(rule, group["label"], entries[n])}
            assert set(group["items"]) == members, (rule, group)
            assert len(group["items"]) <= task.config.capacity
        for name in goal["stay"]:
            assert not any(_selected(rule, g["label"], entries[name]) for g in groups)
        assert set(goal["assignment"]) | set(goal["stay"]) == set(active)
        # slots: distinct, inside the container's interior
        slots = [(c, tuple(o)) for c, o in task._slots.values()]
        assert len(set(slots)) == len(slots) and set(task._slots) == set(goal["assignment"])
        for container, offset in task._slots.values():
            assert np.all(np.abs(offset) < task.containers[container].inner_size)
    assert seen_rules == set(RULES)
    assert seen_counts == {3, 4, 5, 6, 7}


def test_reset_layout_is_separated_and_settles_still(env: SimEnv) -> None:
    task = _task(env)
    cfg = task.config
    for seed in range(6):
        _, info = env.reset(seed=seed)
        scene = env.scene_state
        active = info["trial"]["task_state"]["items"]
        assert not info["success"]
        facts = task.facts(scene)
        assert {f"on-table {n}" for n in active} | {"hand-empty"} == facts
        rects = [task._item_rect(n, scene.body_position(n)[:2], task.rest_yaw(scene, n))
                 for n in active]
        walls = [task._container_rect(c, scene.body_position(c)[:2]) for c in task.containers]
        grips = [task._grip_rect(n, scene.body_position(n)[:2], task.rest_yaw(scene, n))
                 for n in active]
        for i, rect in enumerate(rects):
            assert not any(rects_overlap(rect, wall, cfg.container_gap - 0.005) for wall in walls)
            assert not any(rects_overlap(rect, other, cfg.item_gap - 0.005)
                           for other in rects[i + 1:])
            # nothing stands where the open fingers go down to grasp this object
            assert not any(rects_overlap(grips[i], other, 0.0)
                           for j, other in enumerate(rects) if j != i)
        for name in task.items:  # unused objects are parked on the floor
            assert (scene.body_position(name)[2] > 0) == (name in active)
        # containers keep their slots apart and do not overlap
        centres = np.array([scene.body_position(c)[:2] for c in task.containers])
        assert np.min(np.linalg.norm(centres[:, None] - centres[None], axis=2)
                      + np.eye(3)) > 0.25
        # nothing rolls or tips: 1 s of physics moves no object by more than 3 mm
        before = {n: scene.body_position(n).copy() for n in active}
        hold = env.robot.joint_reference(), env.robot.gripper_reference()
        for _ in range(20):
            env.robot.send(*hold)
        for name in active:
            moved = np.linalg.norm(scene.body_position(name) - before[name])
            assert moved < 0.003, (seed, name, moved)
            rest = CATALOGUE[name[:-2]].rest_rotation
            assert tilt_degrees(scene, name) == pytest.approx(
                np.degrees(np.arccos(np.clip(rest[2, 2], -1, 1))), abs=3.0), (seed, name)


def _check_parked(env: SimEnv, active: list[str]) -> None:
    """The objects not in ``active`` float still above the floor, touching nothing; those in
    ``active`` rest on the table under gravity."""
    task, scene, model = _task(env), env.scene_state, env.model
    parked = [name for name in task.items if name not in active]
    assert parked
    before = {name: scene.body_position(name).copy() for name in parked}
    hold = env.robot.joint_reference(), env.robot.gripper_reference()
    for _ in range(20):
        env.robot.send(*hold)
    touching = {model.body(model.geom_bodyid[g]).name
                for pair in env.data.contact.geom[:env.data.ncon] for g in pair}
    assert touching.isdisjoint(parked)
    assert set(active) <= touching  # resting on the table
    for name in parked:
        assert np.array_equal(scene.body_position(name), before[name]), name
        assert 0.0 < lowest_point(scene, name) + TABLE_HEIGHT < 0.002, name
    for name in active:
        assert model.body_gravcomp[model.body(name).id] == 0.0, name


def test_parked_objects_touch_nothing_and_stay_put(env: SimEnv) -> None:
    """Unused objects cost the physics no contacts, after a reset and in a replayed trial
    whose objects differ from the previous episode's."""
    _, first = env.reset(seed=4)
    _, second = env.reset(seed=7)
    items = first["trial"]["task_state"]["items"]
    assert set(items) != set(second["trial"]["task_state"]["items"])
    _check_parked(env, second["trial"]["task_state"]["items"])
    env.reset(options={"trial": first["trial"]})
    _check_parked(env, items)


def test_trial_replays_exactly(env: SimEnv) -> None:
    _, info = env.reset(seed=11)
    trial = info["trial"]
    facts = _task(env).facts(env.scene_state)
    _, info = env.reset(seed=3)
    _, replay = env.reset(options={"trial": trial})
    assert replay["trial"]["goal"] == trial["goal"]
    assert replay["instruction"] == trial["instruction"]
    assert replay["trial"]["task_state"] == trial["task_state"]
    assert _task(env).facts(env.scene_state) == facts
    bad = dict(trial, goal=dict(trial["goal"], rule="alphabetical"))
    with pytest.raises(InvalidConfigError, match="rule"):
        env.reset(options={"trial": bad})


# -- predicates ---------------------------------------------------------------------------------


def _seed_with(env: SimEnv, predicate: Callable[[dict], bool]) -> int:
    for seed in range(100):
        _, info = env.reset(seed=seed)
        if predicate(info["trial"]["goal"]):
            return seed
    raise AssertionError("no seed in 100 draws such a goal")


def test_in_and_on_table_predicates(env: SimEnv) -> None:
    seed = _seed_with(env, lambda g: g["stay"] and any(len(x["items"]) >= 2 for x in g["groups"]))
    env.reset(seed=seed)
    task, scene = _task(env), env.scene_state
    goal = task.goal()
    _solve_in_place(env)
    evaluation = task.evaluate(scene)
    assert evaluation.success and evaluation.progress == 1.0
    assert set(task.goal_facts()) <= task.facts(scene)
    assert evaluation.total == len(goal["assignment"]) + len(goal["stay"])

    item, container = next(iter(goal["assignment"].items()))
    spec = task.containers[container]
    floor = spec.wall_thickness
    centre = scene.body_position(container)[:2]
    inner_x = spec.inner_size[0]
    cases = [  # (xy offset from the container centre, lowest point z, in the container)
        ((0.0, 0.0), floor, True),
        ((inner_x - 0.01, 0.0), floor, True),  # near the wall, centre inside
        ((inner_x + 0.03, 0.0), 0.0, False),  # just outside, on the table
        ((0.0, 0.0), spec.wall_height + 0.05, False),  # floating high above the rim
    ]
    for offset, z, expected in cases:
        _rest(env, item, centre + np.asarray(offset), z=z)
        facts = task.facts(scene)
        assert (f"in {item} {container}" in facts) == expected, (offset, z)
        # outside every container the object is loose (on-table) wherever it rests; the
        # score asks for the table top itself
        assert (f"on-table {item}" in facts) == (not expected), (offset, z)
        assert task.on_table_outside(scene, item) == (not expected and z == 0.0), (offset, z)
        assert task.evaluate(scene).success == expected
    _into(env, item, container)

    # a distractor put into a container breaks success, though every goal object is in
    stay = goal["stay"][0]
    _into(env, stay, WHITE_BIN if container != WHITE_BIN else BOWL, (0.05, 0.05))
    facts = task.facts(scene)
    assert f"on-table {stay}" not in facts and any(f.startswith(f"in {stay} ") for f in facts)
    evaluation = task.evaluate(scene)
    assert not evaluation.success
    assert evaluation.terms[f"on-table {stay}"] == 0.0
    assert evaluation.progress == pytest.approx(1 - 1 / evaluation.total)
    # a goal object in the wrong container does not count
    _, other = next((i, c) for i, c in goal["assignment"].items() if c != container)
    _rest(env, stay, (0.3, 0.0))
    _into(env, item, other, (-0.05, -0.05))
    evaluation = task.evaluate(scene)
    assert not evaluation.success and evaluation.terms[f"in {item} {container}"] == 0.0
    assert f"in {item} {other}" in task.facts(scene)


def test_infer_step_names_the_domain_actions() -> None:
    table = {"hand-empty", "on-table apple-1"}
    held = {"holding apple-1"}
    binned = {"hand-empty", "in apple-1 white-bin"}
    assert infer_step(table, held) == PlanStep("pick", ("apple-1",))
    assert infer_step(held, binned) == PlanStep("place-in", ("apple-1", "white-bin"))
    assert infer_step(binned, held) == PlanStep("pick-from", ("apple-1", "white-bin"))
    assert infer_step(held, table) == PlanStep("place-on-table", ("apple-1",))


# -- language -----------------------------------------------------------------------------------


def test_every_category_mentions_the_groups_and_containers(env: SimEnv) -> None:
    for rule in RULES:
        seed = _seed_with(env, lambda g, rule=rule: g["rule"] == rule)
        goals, texts = [], []
        for category in INSTRUCTION_CATEGORIES:
            _, info = env.reset(seed=seed, options={"instruction_category": category})
            assert info["instruction_category"] == category
            goal = info["trial"]["goal"]
            goals.append(goal)
            text = info["instruction"]
            texts.append(text)
            lower = text.lower()
            for group in goal["groups"]:
                assert any(w in lower for w in GROUP_WORDS[group["label"]]), (category, text)
                assert any(w in lower for w in CONTAINER_WORDS[group["container"]]), (
                    category, text)
            if category == "paper" and rule == "fruit":
                fruit_bin = goal["groups"][0]["container"].replace("-", " ")
                other_bin = goal["groups"][1]["container"].replace("-", " ")
                assert text == (f"Sort the fruits into the {fruit_bin} and all other objects "
                                f"into the {other_bin}.")
            if category == "paper" and rule == "food_toys":
                assert text.startswith("Grab the food to the bowl and the toys to the ")
        assert all(goal == goals[0] for goal in goals), rule
        assert len(set(texts)) == len(INSTRUCTION_CATEGORIES)


def test_pddl_problem_and_reference_plan(env: SimEnv, private_cwd: None) -> None:
    from agentic_env.tasks import symbolic

    seed = _seed_with(env, lambda g: g["stay"])
    env.reset(seed=seed)
    task, scene = _task(env), env.scene_state
    objects = task.pddl_objects()
    assert set(objects.values()) == {"item", "container"}
    assert {n for n, t in objects.items() if t == "container"} == set(task.containers)
    plan = symbolic.reference_plan(task, scene)
    goal = task.goal()
    assert len(plan) == 2 * len(goal["assignment"])
    picked = [s.args[0] for s in plan if s.name == "pick"]
    assert sorted(picked) == sorted(goal["assignment"])  # distractors are never touched
    for step in plan:
        if step.name == "place-in":
            assert goal["assignment"][step.args[0]] == step.args[1]


# -- expert -------------------------------------------------------------------------------------


def test_expert_takes_a_distractor_out_and_sorts(make_sim_env: Callable[..., SimEnv],
                                                 private_cwd: None) -> None:
    config = SortingConfig(item_counts=(3,), rules=("food_toys",))
    env = make_sim_env(task=SortingTask(config), scene=SMALL)
    for seed in range(50):
        _, info = env.reset(seed=seed)
        if info["trial"]["goal"]["stay"]:
            break
    task = _task(env)
    goal = task.goal()
    stay = goal["stay"][0]
    spare = next(c for c in task.containers if c not in goal["assignment"].values())
    _into(env, stay, spare, (-0.05, 0.0))
    for _ in range(10):  # settle
        env.robot.send(env.robot.joint_reference(), env.robot.gripper_reference())
    assert f"in {stay} {spare}" in task.facts(env.scene_state)
    info, steps = run_expert(env)
    assert info["success"], steps
    assert len(steps) == 2 * (len(goal["assignment"]) + 1)
    index = steps.index(f"(pick-from {stay} {spare})")
    assert steps[index + 1] == f"(place-on-table {stay})"
    assert all(s is not None for s in steps)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 5, 8, 10, 19])
def test_expert_sorts_default_trials(make_sim_env: Callable[..., SimEnv], private_cwd: None,
                                     seed: int) -> None:
    env = make_sim_env(task="sorting", scene=SMALL)
    _, info = env.reset(seed=seed)
    assignment = info["trial"]["goal"]["assignment"]
    info, steps = run_expert(env)
    assert info["success"], steps
    assert len(steps) == 2 * len(assignment)
    assert info["progress_score"]["score"] == pytest.approx(1.0)


def test_expert_sorts_a_small_trial(make_sim_env: Callable[..., SimEnv],
                                    private_cwd: None) -> None:
    config = SortingConfig(item_counts=(3,), rules=("fruit",))
    env = make_sim_env(task=SortingTask(config), scene=SMALL)
    _, info = env.reset(seed=2)
    info, steps = run_expert(env)
    assert info["success"], steps
    assert steps[0].startswith("(pick ") and steps[1].startswith("(place-in ")
    assert info["progress_score"]["score"] == pytest.approx(1.0)


def test_cluttered_sorting_packs_objects_closer_and_stays_solvable() -> None:
    """``sorting-cluttered`` (Fig. 8a): more objects in a smaller patch, same domain; the
    scripted expert still solves it."""
    env = SimEnv(task="sorting-cluttered", realism="ideal")
    try:
        _obs, info = env.reset(seed=3)
        assert env.task.name == "sorting-cluttered" and env.task.domain == "sorting"
        assert info["trial"]["task"] == "sorting-cluttered"
        active = list(env.task._active)
        assert len(active) in (5, 6)
        xy = np.array([env.scene_state.body_position(n)[:2] for n in active])
        x0, x1, y0, y1 = env.task.config.item_area
        assert (xy[:, 0] > x0).all() and (xy[:, 0] < x1).all()
        assert (xy[:, 1] > y0).all() and (xy[:, 1] < y1).all()
        for action in expert_actions(env.task, env.scene_state):
            *_, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        assert env.task.evaluate(env.scene_state).success
    finally:
        env.close()
