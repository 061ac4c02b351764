"""``AgenticEnv/Crossword-v0``: letter textures, puzzles, predicates, instructions, the expert."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable

import mujoco
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from support.envs import EXPECTED_CHECKER_ADVICE, run_expert

from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.registry import ENV_IDS
from agentic_env.sim.letters import (
    BITMAP_FONT,
    LETTERS,
    letter_image,
    letter_texture_name,
    slot_image,
    text_mask,
)
from agentic_env.tasks import TASKS
from agentic_env.tasks.crossword import (
    WORDS,
    CrosswordConfig,
    CrosswordTask,
    generate_puzzle,
    slot_name,
)
from agentic_env.tasks.instructions import CATEGORIES

SMALL = SceneConfig(shoulder_camera=azure_kinect_color(64, 36),
                    wrist_camera=realsense_d405(64, 36))


def _env(make_sim_env: Callable[..., SimEnv], config: CrosswordConfig | None = None) -> SimEnv:
    return make_sim_env(task=CrosswordTask(config), scene=SMALL)


def _seat(env: SimEnv, block: str, slot: str, dx: float = 0.0, dyaw: float = 0.0,
          lift: float = 0.0) -> None:
    """Put ``block`` at rest in ``slot`` (offset by dx along x, turned by dyaw, raised)."""
    task, scene = env.task, env.scene_state
    xy = task.slot_positions()[slot] + [dx, 0.0]
    z = task.config.board_top + task.config.block_half_size + lift
    scene.set_free_body_pose(block, np.array([*xy, z]), task._board_yaw + dyaw)


def _solve_in_place(env: SimEnv) -> None:
    for slot, block in env.task.goal()["assignment"].items():
        _seat(env, block, slot)
    mujoco.mj_forward(env.model, env.data)


# -- registration, textures, puzzles ----------------------------------------------------------


def test_registered() -> None:
    assert TASKS["crossword"].endswith(":CrosswordTask")
    assert ENV_IDS["AgenticEnv/Crossword-v0"] == "crossword"


def test_letter_textures_are_distinct_dark_glyphs() -> None:
    for bitmap in (False, True):
        images = [letter_image(letter, bitmap=bitmap) for letter in LETTERS]
        for letter, image in zip(LETTERS, images, strict=True):
            assert image.shape == (128, 128, 3) and image.dtype == np.uint8
            ink = np.mean(image.mean(axis=2) < 80)
            assert 0.04 < ink < 0.4, (letter, bitmap, ink)
            centre = image[32:96, 32:96].mean(axis=2)
            assert centre.min() < 40  # the glyph sits in the middle of the face
            assert image[0, 0].mean() < 200 and image[3, 64].mean() > 240  # thin edge
        flat = {image.tobytes() for image in images}
        assert len(flat) == len(LETTERS)
    tiles = [slot_image(number) for number in range(1, 11)]
    assert len({tile.tobytes() for tile in tiles}) == 10
    # the number's corner label is dark; the tile's middle (the big number) is grey
    assert tiles[0][8:20, 6:20].mean(axis=2).min() < 60
    assert 100 < tiles[0][40:90, 40:90].mean(axis=2).min() < 200
    with pytest.raises(InvalidConfigError, match="no glyph"):
        text_mask("?", 32, (16, 16), 10)
    assert set(LETTERS) <= set(BITMAP_FONT)


def test_puzzles_are_consistent_crosswords() -> None:
    rng = np.random.default_rng(0)
    for count in (1, 2, 3):
        for _ in range(30):
            puzzle = generate_puzzle(rng, count)
            words = [entry.word for entry in puzzle.entries]
            assert len(set(words)) == count and set(words) <= set(WORDS)
            cols, rows = puzzle.size
            assert cols <= 5 and rows <= 5 and len(puzzle.cells) <= 10
            assert list(puzzle.cells) == sorted(puzzle.cells, key=lambda c: (c[1], c[0]))
            for entry in puzzle.entries:
                step = (1, 0) if entry.direction == "across" else (0, 1)
                for (c0, r0), (c1, r1) in zip(entry.cells, entry.cells[1:], strict=False):
                    assert (c1 - c0, r1 - r0) == step
                letters = [puzzle.letter(n) for n in puzzle.slots_of(entry)]
                assert "".join(letters) == entry.word
            assert len(puzzle.crossings()) >= count - 1
            # cells touch only inside a word (no accidental two-letter words)
            cells = set(puzzle.cells)
            for col, row in cells:
                for neighbour in ((col + 1, row), (col, row + 1)):
                    if neighbour in cells:
                        assert any((col, row) in e.cells and neighbour in e.cells
                                   for e in puzzle.entries)


# -- env, layout, predicates --------------------------------------------------------------------


def test_check_env(make_sim_env: Callable[..., SimEnv]) -> None:
    env = _env(make_sim_env)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for pattern in EXPECTED_CHECKER_ADVICE:
            warnings.filterwarnings("ignore", message=pattern, category=UserWarning)
        check_env(env, skip_render_check=True)


def test_reset_layout(make_sim_env: Callable[..., SimEnv]) -> None:
    env = _env(make_sim_env)
    task, model = env.task, env.model
    presets = 0
    for seed in range(8):
        _, info = env.reset(seed=seed)
        scene = env.scene_state
        letters = task.letters()
        slots = info["trial"]["goal"]["slots"]
        puzzle_letters = sorted(slots.values())
        extra = [letter for block, letter in letters.items()
                 if block not in info["trial"]["goal"]["assignment"].values()]
        assert len(letters) == len(slots) + len(extra) and 2 <= len(extra) <= 3
        assert not set(extra) & set(puzzle_letters)  # distractors are not puzzle letters
        assert sorted(letters[b] for b in info["trial"]["goal"]["assignment"].values()) == \
            puzzle_letters
        for block, letter in letters.items():
            material = model.material(f"{block}/face").id
            assert model.mat_texid[material, mujoco.mjtTextureRole.mjTEXROLE_RGB] == \
                model.texture(letter_texture_name(letter)).id
        for block in task.blocks:
            z = scene.body_position(block)[2]
            assert (z > 0) == (block in letters)  # unused blocks are parked on the floor
        xy = np.array([scene.body_position(block)[:2] for block in letters])
        gaps = np.linalg.norm(xy[:, None] - xy[None], axis=2) + np.eye(len(xy))
        assert gaps.min() > 0.06  # 4 cm cubes, fingers fit between
        facts = task.facts(scene)
        assert "hand-empty" in facts
        crossings = {slot_name(n) for n in task._puzzle.crossings()}
        for fact in facts:
            if fact.startswith("in-slot"):
                presets += 1
                assert fact.split()[2] not in crossings
        assert not info["success"]
    assert presets > 0  # some seeds start with a given or misplaced block


def test_in_slot_predicate_and_success(make_sim_env: Callable[..., SimEnv]) -> None:
    env = _env(make_sim_env)
    env.reset(seed=3)
    task, scene = env.task, env.scene_state
    _solve_in_place(env)
    evaluation = task.evaluate(scene)
    assert evaluation.success and evaluation.progress == 1.0
    facts = task.facts(scene)
    assignment = task.goal()["assignment"]
    assert {f"in-slot {b} {s}" for s, b in assignment.items()} <= facts
    assert not any(f.startswith("slot-empty") for f in facts)

    slot, block = next(iter(assignment.items()))
    cases = [  # (dx, dyaw, lift, in slot)
        (0.012, 0.0, 0.0, True), (0.02, 0.0, 0.0, False),
        (0.0, np.radians(15), 0.0, True), (0.0, np.radians(30), 0.0, False),
        (0.0, np.radians(100), 0.0, True),  # any face may point any way
        (0.0, 0.0, 0.03, False),  # floating above the slot
    ]
    for dx, dyaw, lift, expected in cases:
        _seat(env, block, slot, dx, dyaw, lift)
        mujoco.mj_forward(env.model, env.data)
        facts = task.facts(scene)
        assert (f"in-slot {block} {slot}" in facts) == expected, (dx, dyaw, lift)
        assert (f"slot-empty {slot}" in facts) != expected
        assert task.evaluate(scene).success == expected
        if not expected and lift == 0.0:
            assert f"on-table {block}" in facts  # loose on the board
    # a block tipped onto a side face still fills the slot (the letter is on every face)
    _seat(env, block, slot)
    joint = env.model.body(block).jntadr[0]
    adr = env.model.jnt_qposadr[joint]
    env.data.qpos[adr + 3: adr + 7] = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]
    mujoco.mj_forward(env.model, env.data)
    assert f"in-slot {block} {slot}" in task.facts(scene)
    # a block of another letter in the slot fails it
    _solve_in_place(env)
    spare = next(b for b in task.letters() if b not in assignment.values())
    _seat(env, block, slot, lift=0.1)
    _seat(env, spare, slot)
    mujoco.mj_forward(env.model, env.data)
    evaluation = task.evaluate(scene)
    assert not evaluation.success
    assert evaluation.terms[f"{slot} holds {task.goal()['slots'][slot]}"] == 0.0
    assert evaluation.progress == pytest.approx(1 - 1 / len(assignment))


def test_blocks_of_one_letter_are_interchangeable(make_sim_env: Callable[..., SimEnv]) -> None:
    env = _env(make_sim_env)
    for seed in range(50):
        env.reset(seed=seed)
        assignment = env.task.goal()["assignment"]
        letters = env.task.letters()
        twins = {}
        for slot, block in assignment.items():
            twins.setdefault(letters[block], []).append(slot)
        pairs = [slots for slots in twins.values() if len(slots) > 1]
        if pairs:
            break
    else:
        pytest.fail("no puzzle with a repeated letter in 50 seeds")
    first, second = pairs[0][:2]
    _solve_in_place(env)
    _seat(env, assignment[first], second)
    _seat(env, assignment[second], first)
    mujoco.mj_forward(env.model, env.data)
    assert env.task.evaluate(env.scene_state).success


# -- language -----------------------------------------------------------------------------------


def test_every_category_mentions_the_slots_and_words(make_sim_env: Callable[..., SimEnv]) -> None:
    env = _env(make_sim_env)
    seed = next(s for s in range(50)
                if len(env.reset(seed=s)[1]["trial"]["goal"]["words"]) >= 2)
    goals = []
    for category in CATEGORIES:
        _, info = env.reset(seed=seed, options={"instruction_category": category})
        goal = info["trial"]["goal"]
        goals.append(goal)
        text = info["instruction"]
        numbers = set(re.findall(r"\d+", text))
        for word in goal["words"]:
            assert {s.split("-")[1] for s in word["slots"]} <= numbers, (category, text)
            if category in ("paper", "high_level"):
                assert word["clue"] in text and word["word"] not in text
            else:
                assert word["word"] in text, (category, text)
        if category == "paper":
            assert text.startswith("Fill the numbered slots using the provided blocks to "
                                   "solve the crossword puzzle. You do not need to use all "
                                   "blocks or all slots.")
    assert all(goal == goals[0] for goal in goals)


# -- expert -------------------------------------------------------------------------------------


def _letters_upright(env: SimEnv) -> bool:
    """Every filled slot's letter reads along the board's +y axis (within 20 degrees)."""
    task, scene = env.task, env.scene_state
    for block in task.goal()["assignment"].values():
        rotation = scene.body_rotation(block)
        letter_up = np.arctan2(rotation[1, 1], rotation[0, 1])
        error = (letter_up - task._board_yaw - np.pi / 2 + np.pi) % (2 * np.pi) - np.pi
        if abs(error) > np.radians(20):
            return False
    return True


def test_expert_takes_out_a_misplaced_block_and_fills_the_word(
    make_sim_env: Callable[..., SimEnv],
) -> None:
    config = CrosswordConfig(word_counts=(1,), given_probability=0.0,
                             misplaced_probability=1.0, distractor_counts=(2,))
    env = _env(make_sim_env, config)
    _, info = env.reset(seed=4)
    letters = env.task.letters()
    assignment = info["trial"]["goal"]["assignment"]
    start = env.task.facts(env.scene_state)
    misplaced = [f.split()[1] for f in start if f.startswith("in-slot")]
    assert len(misplaced) == 1 and misplaced[0] not in assignment.values()
    assert letters[misplaced[0]] not in info["trial"]["goal"]["slots"].values()
    info, steps = run_expert(env)
    assert info["success"]
    assert steps[:2] == [f"(pick-from-slot {misplaced[0]} "
                         f"{next(f.split()[2] for f in start if f.startswith('in-slot'))})",
                         f"(place-on-table {misplaced[0]})"]
    assert info["progress_score"]["score"] == pytest.approx(1.0)
    assert _letters_upright(env)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_expert_solves_default_puzzles(make_sim_env: Callable[..., SimEnv], seed: int) -> None:
    env = _env(make_sim_env)
    env.reset(seed=seed)
    info, steps = run_expert(env)
    assert info["success"], steps
    assert _letters_upright(env)
