"""``AgenticEnv/Crossword-v0`` (:class:`CrosswordTask`): scene, reset, predicates, language.

Tunables and predicates: :mod:`~agentic_env.tasks.crossword.board`; puzzles:
:mod:`~agentic_env.tasks.crossword.puzzles`; expert: :mod:`agentic_env.experts.crossword`.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from agentic_env.contract.trial import TrialSpec
from agentic_env.contract.workcell import TABLE_HEIGHT
from agentic_env.errors import InvalidConfigError
from agentic_env.sim.letters import (
    LETTERS,
    add_letter_textures,
    add_slot_textures,
    letter_texture_name,
    slot_texture_name,
)
from agentic_env.sim.props import PROP_FRICTION, PROP_SOLREF
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import SceneState, holding
from agentic_env.tasks.base import TaskEvaluation
from agentic_env.tasks.crossword.board import (
    BLOCK_TINTS,
    BOARD,
    BOARD_RGBA,
    CrosswordConfig,
    block_name,
    in_slot,
    resting,
    slot_name,
)
from agentic_env.tasks.crossword.puzzles import ACROSS, WORDS, Entry, Puzzle, generate_puzzle
from agentic_env.tasks.instructions import CATEGORIES, Instruction, choose_instruction
from agentic_env.tasks.vocabulary import task_vocabulary

#: Static bodies not in use are moved this far below the table (out of sight), metres.
_HIDDEN_DEPTH = 5.0


class CrosswordTask:
    """``AgenticEnv/Crossword-v0``: fill the numbered slots of a crossword board with letter blocks.

    **Description.** A dark board lies flat on one side of the table. Light square tiles on it are
    the crossword's numbered slots (1, 2, ... in reading order; each tile shows its number large
    in the middle, where the block goes, and small in its top-left corner); they form one to three
    intersecting words from a built-in list of common 3-5 letter words (:data:`WORDS`), words
    crossing at a shared slot. Letter blocks (4 cm cubes showing their capital on every face) lie
    on the other side of the table: one block per slot plus two or three distractors whose
    letters are not in the puzzle. Sometimes a slot starts filled with its correct block (a given
    letter), or with a distractor block that must be taken out first. The instruction gives the
    words and their slots, or only clues (``high_level``: "1 across (slots 1, 2, 3): a pet that
    barks"), which need world knowledge. PDDL domain: ``assets/pddl/crossword.pddl``;
    the goal says which block fills which slot (:meth:`CrosswordTask.goal_facts`), blocks of the
    same letter being interchangeable for success.

    **Randomizations.** The number of words (1-3), the words and how they cross (uniform over
    the valid placements: words only touch where they cross); the distractor count (2 or 3) and
    letters; which block carries which letter (block names say nothing about letters) and each
    block's tint; the board side (left or right of the robot), its centre (+-2 cm) and yaw
    (+-4.6 deg); the blocks' table positions (a 4 x 4 grid of spots 11 cm apart on the other side,
    each jittered by +-1.5 cm) and yaws (+-23 deg, letters facing the shoulder camera); a given
    letter (25 %) and a misplaced distractor in a slot (25 %); the instruction's paraphrase
    category.

    **Success conditions.** Every slot holds a block with the slot's letter: ``in-slot`` (see
    :func:`in_slot`) holds for it and some block of that letter. Progress is the fraction of
    slots so filled.

    Geometry of ``in-slot`` (part of the benchmark's definition of success): the block's centre
    lies within ``slot_tolerance`` (1.5 cm) of the slot's centre in x-y, its lowest point is
    within the ``contact_gap`` (12 mm) of the board top, one of its faces is up (a body axis within
    15 deg of vertical), its faces are within ``yaw_tolerance_deg`` (20 deg) of the slot's axes
    (modulo 90 deg: any face may point any way, the letter is on all of them) and it is not held.
    ``on-table`` holds for a block that rests (lowest point within the contact gap) on the table
    or loose on the board outside every slot; ``slot-empty`` for a slot no block is in.
    """

    name = "crossword"
    domain = "crossword"

    def __init__(self, config: CrosswordConfig | None = None) -> None:
        self.config = config or self.default_config()
        cfg = self.config
        unknown = sorted({c for word in cfg.words for c in word} - set(LETTERS))
        if unknown or any(not 3 <= len(w) <= max(cfg.max_grid) for w in cfg.words):
            raise InvalidConfigError(
                f"crossword words must be 3..{max(cfg.max_grid)} capitals A-Z; "
                f"bad characters: {unknown}"
            )
        if not cfg.words or any(w not in WORDS for w in cfg.words):
            raise InvalidConfigError(
                f"crossword words must come from WORDS (they need clues): "
                f"{sorted(set(cfg.words) - set(WORDS))}"
            )
        cells = cfg.max_grid[0] * cfg.max_grid[1]
        spots = len(cfg.block_grid_x) * len(cfg.block_grid_y)
        if cfg.max_blocks >= spots:
            raise InvalidConfigError(
                f"{cfg.max_blocks} blocks need more than the {spots} table spots of "
                "block_grid_x x block_grid_y (one stays free for put-downs)"
            )
        if cfg.max_slots > cells:
            raise InvalidConfigError(f"max_slots {cfg.max_slots} exceeds the grid's {cells}")
        self.blocks = [block_name(i + 1) for i in range(cfg.max_blocks)]
        self.slots = [slot_name(i + 1) for i in range(cfg.max_slots)]
        self._puzzle = Puzzle((Entry("CAT", ACROSS, ((0, 0), (1, 0), (2, 0))),),
                              ((0, 0), (1, 0), (2, 0)))
        self._letters: dict[str, str] = {}
        self._tints: dict[str, list[float]] = {}
        self._assignment: dict[str, str] = {}
        self._board_xy = np.array(cfg.board_centre, float)
        self._board_yaw = 0.0
        self._side = 1.0
        self._instruction = Instruction("", "canonical")

    @staticmethod
    def default_config() -> CrosswordConfig:
        """The configuration used by ``AgenticEnv/Crossword-v0``."""
        return CrosswordConfig()

    # -- scene ------------------------------------------------------------------------------

    def build(self, builder: SceneBuilder) -> None:
        """Add the letter and tile textures, the blocks (one material each), the board and
        the slot tiles (static bodies moved at reset; unused ones hidden under the table)."""
        cfg = self.config
        spec = builder.spec
        add_letter_textures(spec)
        add_slot_textures(spec, range(1, cfg.max_slots + 1))
        half = cfg.block_half_size
        for name in self.blocks:
            material = spec.add_material(name=f"{name}/face", rgba=BLOCK_TINTS[0])
            material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = letter_texture_name("A")
            body = spec.worldbody.add_body(name=name)
            body.add_freejoint(name=f"{name}_free")
            body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, size=[half] * 3,
                          material=f"{name}/face", mass=cfg.block_mass, condim=4,
                          friction=PROP_FRICTION, solref=PROP_SOLREF)
        hx, hy = cfg.board_half_extent
        board = spec.worldbody.add_body(name=BOARD)
        board.add_geom(name=BOARD, type=mujoco.mjtGeom.mjGEOM_BOX,
                       size=[hx, hy, cfg.board_half_height], pos=[0, 0, cfg.board_half_height],
                       rgba=BOARD_RGBA, solref=PROP_SOLREF, friction=PROP_FRICTION, condim=4)
        tile = (cfg.slot_pitch - 0.004) / 2
        for number, name in enumerate(self.slots, start=1):
            material = spec.add_material(name=f"{name}/tile", rgba=[1, 1, 1, 1])
            material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = slot_texture_name(number)
            body = spec.worldbody.add_body(name=name)
            # visual only, 0.5 mm proud of the board: blocks rest on the board itself
            body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, size=[tile, tile, 0.0005],
                          pos=[0, 0, cfg.board_top], material=f"{name}/tile",
                          contype=0, conaffinity=0, mass=0.0)

    def reset(self, scene: SceneState, rng: np.random.Generator,
              instruction_category: str | None) -> None:
        """Sample the puzzle, letters, board, block layout, presets and the instruction."""
        cfg = self.config
        count = int(rng.choice(cfg.word_counts))
        self._puzzle = generate_puzzle(rng, count, cfg.max_grid, cfg.max_slots, cfg.words)
        puzzle = self._puzzle
        slot_letters = [puzzle.letter(k) for k in range(1, len(puzzle.cells) + 1)]
        spare = sorted(set(LETTERS) - set(slot_letters))
        distractors = [str(c) for c in rng.choice(spare, int(rng.choice(cfg.distractor_counts)),
                                                  replace=False)]
        letters = slot_letters + distractors
        order = rng.permutation(len(letters))  # block k carries letters[order[k]]
        self._letters = {block_name(k + 1): letters[i] for k, i in enumerate(order)}
        self._tints = {block: list(BLOCK_TINTS[int(rng.integers(len(BLOCK_TINTS)))])
                       for block in self._letters}
        self._assignment = self._assign(slot_letters)
        self._side = float(rng.choice([-1.0, 1.0]))
        self._board_xy = (np.array([cfg.board_centre[0],
                                    self._side * cfg.board_centre[1] + cfg.layout_shift_y])
                          + rng.uniform(-cfg.board_jitter, cfg.board_jitter, 2))
        self._board_yaw = float(rng.uniform(-cfg.board_yaw_jitter, cfg.board_yaw_jitter))
        self._place_fixtures(scene)
        self._place_blocks(scene, rng, distractors)
        self._instruction = choose_instruction(self.instructions(), rng, instruction_category)

    def _assign(self, slot_letters: list[str]) -> dict[str, str]:
        """Goal block of every slot: blocks of a letter in name order, slots in order."""
        free = sorted(self._letters, key=lambda b: int(b.split("-")[1]))
        assignment = {}
        for number, letter in enumerate(slot_letters, start=1):
            block = next(b for b in free if self._letters[b] == letter)
            free.remove(block)
            assignment[slot_name(number)] = block
        return assignment

    def _place_fixtures(self, scene: SceneState) -> None:
        """Board and slot tiles to their poses; letters and tints to the block materials."""
        model = scene.model
        yaw = self._board_yaw
        quat = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
        board = model.body(BOARD).id
        model.body_pos[board] = scene.base_pos + [*self._board_xy, 0.0]
        model.body_quat[board] = quat
        slot_xy = self.slot_positions()
        for name in self.slots:
            body = model.body(name).id
            if name in slot_xy:
                model.body_pos[body] = scene.base_pos + [*slot_xy[name], 0.0]
            else:
                model.body_pos[body] = scene.base_pos + [0.0, 0.0, -_HIDDEN_DEPTH]
            model.body_quat[body] = quat
        rgb = int(mujoco.mjtTextureRole.mjTEXROLE_RGB)
        for block in self.blocks:
            material = model.material(f"{block}/face").id
            letter = self._letters.get(block, "A")
            model.mat_texid[material, rgb] = model.texture(letter_texture_name(letter)).id
            model.mat_rgba[material] = self._tints.get(block, BLOCK_TINTS[0])

    def slot_positions(self) -> dict[str, np.ndarray]:
        """Centre (x, y) of every slot of the puzzle, base frame, metres."""
        cfg = self.config
        cols, rows = self._puzzle.size
        c, s = np.cos(self._board_yaw), np.sin(self._board_yaw)
        positions = {}
        for number, (col, row) in enumerate(self._puzzle.cells, start=1):
            local = np.array([(col - (cols - 1) / 2) * cfg.slot_pitch,
                              -(row - (rows - 1) / 2) * cfg.slot_pitch])
            positions[slot_name(number)] = self._board_xy + np.array(
                [c * local[0] - s * local[1], s * local[0] + c * local[1]])
        return positions

    @property
    def dressing_keepout(self) -> list[list[float]]:
        """Base-frame rectangles ``[x0, x1, y0, y1]`` the setting's clutter must avoid: the
        (turned) board, and the blocks' table spots with room for the fingers."""
        cfg = self.config
        hx, hy = cfg.board_half_extent
        c, s = abs(np.cos(self._board_yaw)), abs(np.sin(self._board_yaw))
        bx, by = hx * c + hy * s, hx * s + hy * c
        x, y = self._board_xy
        spots = np.array(self.table_spots())
        room = cfg.block_jitter + cfg.finger_room
        return [[x - bx, x + bx, y - by, y + by],
                [float(spots[:, 0].min() - room), float(spots[:, 0].max() + room),
                 float(spots[:, 1].min() - room), float(spots[:, 1].max() + room)]]

    def table_spots(self) -> list[np.ndarray]:
        """Nominal table spots (x, y) for blocks on the side away from the board, metres."""
        cfg = self.config
        return [np.array([x, -self._side * y + cfg.layout_shift_y]) for x in cfg.block_grid_x
                for y in cfg.block_grid_y]

    def _place_blocks(self, scene: SceneState, rng: np.random.Generator,
                      distractors: list[str]) -> None:
        cfg = self.config
        half = cfg.block_half_size
        presets = self._sample_presets(rng, distractors)
        slot_xy = self.slot_positions()
        on_table = [b for b in self._letters if b not in presets]
        spots = self.table_spots()
        chosen = rng.choice(len(spots), len(on_table), replace=False)
        for block, spot in zip(on_table, chosen, strict=True):
            xy = spots[int(spot)] + rng.uniform(-cfg.block_jitter, cfg.block_jitter, 2)
            scene.set_free_body_pose(block, np.array([*xy, half + 1e-3]),
                                     float(rng.uniform(-cfg.block_yaw_jitter,
                                                       cfg.block_yaw_jitter)))
        for block, slot in presets.items():
            xy = slot_xy[slot] + rng.uniform(-0.003, 0.003, 2)
            yaw = self._board_yaw + float(rng.uniform(-0.08, 0.08))
            scene.set_free_body_pose(block, np.array([*xy, cfg.board_top + half + 1e-3]), yaw)
        for index, block in enumerate(b for b in self.blocks if b not in self._letters):
            parked = np.array([-0.6, -0.6 + 0.07 * index, half - TABLE_HEIGHT])
            scene.set_free_body_pose(block, parked, 0.0)

    def _sample_presets(self, rng: np.random.Generator,
                        distractors: list[str]) -> dict[str, str]:
        """Blocks that start in a slot: maybe a given letter, maybe a misplaced distractor.

        Only slots that are not crossings qualify, and never two next to the same crossing
        along different axes, so the expert can fill every crossing with its fingers along a
        free axis.
        """
        cfg = self.config
        puzzle = self._puzzle
        crossings = puzzle.crossings()
        candidates = [n for n in range(1, len(puzzle.cells) + 1) if n not in crossings]
        rng.shuffle(candidates)
        presets: dict[str, str] = {}
        wants = []
        if rng.random() < cfg.given_probability:
            wants.append("given")
        if distractors and rng.random() < cfg.misplaced_probability:
            wants.append("misplaced")
        chosen: list[int] = []
        for kind in wants:
            for number in candidates:
                if number in chosen or not self._preset_ok([*chosen, number]):
                    continue
                chosen.append(number)
                slot = slot_name(number)
                if kind == "given":
                    presets[self._assignment[slot]] = slot
                else:
                    letter = distractors[0]
                    presets[next(b for b, c in self._letters.items() if c == letter)] = slot
                break
        return presets

    def _preset_ok(self, numbers: list[int]) -> bool:
        cells = [self._puzzle.cells[n - 1] for n in numbers]
        for crossing in self._puzzle.crossings():
            col, row = self._puzzle.cells[crossing - 1]
            along_x = any(abs(c - col) == 1 and r == row for c, r in cells)
            along_y = any(abs(r - row) == 1 and c == col for c, r in cells)
            if along_x and along_y:
                return False
        return True

    # -- trial state ------------------------------------------------------------------------

    def trial_state(self) -> dict[str, Any]:
        """Board pose, the puzzle, each block's letter and tint."""
        return {"board_xy": [float(v) for v in self._board_xy], "board_yaw": self._board_yaw,
                "side": self._side, "puzzle": self._puzzle.to_dict(),
                "letters": dict(self._letters), "tints": dict(self._tints)}

    def apply_trial(self, scene: SceneState, trial: TrialSpec) -> None:
        """Restore the board, puzzle, letters, goal and instruction from ``trial``."""
        state = trial.task_state
        unknown = sorted(set(state["letters"]) - set(self.blocks))
        puzzle = Puzzle.from_dict(state["puzzle"])
        if unknown or len(puzzle.cells) > len(self.slots):
            raise InvalidConfigError(
                f"crossword trial names blocks {unknown} or {len(puzzle.cells)} slots; this "
                f"task has {len(self.blocks)} blocks and {len(self.slots)} slots"
            )
        self._puzzle = puzzle
        self._letters = dict(state["letters"])
        self._tints = {b: list(t) for b, t in state["tints"].items()}
        self._board_xy = np.asarray(state["board_xy"], float)
        self._board_yaw = float(state["board_yaw"])
        self._side = float(state["side"])
        self._assignment = dict(trial.goal["assignment"])
        self._place_fixtures(scene)
        self._instruction = Instruction(trial.instruction, trial.instruction_category)

    def goal(self) -> dict[str, Any]:
        """Words with their slots and clues, each slot's letter and its goal block."""
        puzzle = self._puzzle
        return {
            "words": [{"word": e.word, "direction": e.direction,
                       "slots": [slot_name(n) for n in puzzle.slots_of(e)],
                       "clue": WORDS[e.word]} for e in puzzle.clue_order()],
            "slots": {slot_name(n): puzzle.letter(n) for n in range(1, len(puzzle.cells) + 1)},
            "assignment": dict(self._assignment),
        }

    # -- language ---------------------------------------------------------------------------

    def instructions(self) -> list[Instruction]:
        """Instructions for the current puzzle, at least one per category.

        Each word is given with the numbers of its slots in the word's reading order (a
        crossing slot appears in two words); ``paper`` and ``high_level`` give clues instead
        of the words.
        """
        puzzle = self._puzzle
        entries = puzzle.clue_order()

        def numbers(entry: Entry, separator: str = ", ") -> str:
            return separator.join(str(n) for n in puzzle.slots_of(entry))

        def series(items: list[str]) -> str:  # items hold commas: separate with semicolons
            return items[0] if len(items) == 1 else "; ".join(items[:-1]) + "; and " + items[-1]

        clues = "; ".join(f"{puzzle.slots_of(e)[0]} {e.direction} (slots {numbers(e)}): "
                          f"{WORDS[e.word]}" for e in entries)
        spelled = series([f"{e.word} {e.direction} in slots {numbers(e)}" for e in entries])
        squares = series([f"squares {numbers(e)} read {e.word}" for e in entries])
        runs = series([f"the word {e.word} runs {e.direction} through slots {numbers(e)}"
                       for e in entries])
        casual = " + ".join(f"{e.word} goes {e.direction} in {numbers(e, ',')}"
                            for e in entries)
        templates = task_vocabulary("crossword")["instructions"]
        return [Instruction(templates[category].format(
            clues=clues, spelled=spelled, squares=squares, runs=runs, casual=casual), category)
            for category in CATEGORIES]

    def instruction(self) -> Instruction:
        """The episode's instruction."""
        return self._instruction

    # -- symbolic model ---------------------------------------------------------------------

    def active_blocks(self) -> list[str]:
        """Blocks of the episode (puzzle letters and distractors)."""
        return sorted(self._letters, key=lambda b: int(b.split("-")[1]))

    def active_slots(self) -> list[str]:
        """Slots of the episode's puzzle."""
        return [slot_name(n) for n in range(1, len(self._puzzle.cells) + 1)]

    def letters(self) -> dict[str, str]:
        """Letter of every active block."""
        return dict(self._letters)

    def pddl_objects(self) -> dict[str, str]:
        """Active blocks (type block) and the puzzle's slots (type slot)."""
        objects = {block: "block" for block in self.active_blocks()}
        objects.update({slot: "slot" for slot in self.active_slots()})
        return objects

    def visible_labels(self) -> dict[str, dict[str, str]]:
        """What a person reads off each PDDL object: a block's letter (``{"letter": "C"}``),
        a slot's number printed on the board (``{"number": "2"}``)."""
        labels: dict[str, dict[str, str]] = {
            block: {"letter": self._letters[block]} for block in self.active_blocks()
            if block in self._letters}
        labels.update({slot: {"number": slot.rsplit("-", 1)[-1]}
                       for slot in self.active_slots()})
        return labels

    def _slot_contents(self, scene: SceneState, held: set[str]) -> dict[str, str]:
        """Block in each filled slot."""
        contents = {}
        slot_xy = self.slot_positions()
        for block in self.active_blocks():
            if block in held:
                continue
            centre = scene.body_position(block)[:2]
            for slot, xy in slot_xy.items():
                if (np.linalg.norm(centre - xy) <= self.config.slot_tolerance
                        and in_slot(scene, block, slot, self.config, held=False)):
                    contents[slot] = block
                    break
        return contents

    def facts(self, scene: SceneState) -> set[str]:
        """holding / hand-empty / in-slot / slot-empty / on-table over the active objects."""
        blocks = self.active_blocks()
        held = {b for b in blocks if holding(scene, b)}
        facts = {f"holding {b}" for b in held}
        if not held:
            facts.add("hand-empty")
        contents = self._slot_contents(scene, held)
        facts.update(f"in-slot {block} {slot}" for slot, block in contents.items())
        facts.update(f"slot-empty {slot}" for slot in self.active_slots()
                     if slot not in contents)
        placed = set(contents.values())
        facts.update(f"on-table {b}" for b in blocks
                     if b not in held and b not in placed and resting(scene, b, self.config))
        return facts

    def goal_facts(self) -> list[str]:
        """``in-slot`` of each slot's goal block (one of the blocks with its letter)."""
        return [f"in-slot {block} {slot}" for slot, block in self._assignment.items()]

    def goal_fact_terms(self) -> dict[str, str]:
        """Each goal fact -> the :meth:`evaluate` term that scores it: the goal block's slot
        holds a block of its letter (any of them; per-object outcomes,
        :mod:`agentic_env.harness.objects`)."""
        letters = {slot: self._puzzle.letter(number)
                   for number, slot in enumerate(self.active_slots(), start=1)}
        return {f"in-slot {block} {slot}": f"{slot} holds {letters[slot]}"
                for slot, block in self._assignment.items() if slot in letters}

    def evaluate(self, scene: SceneState) -> TaskEvaluation:
        """Success when every slot holds a block of its letter; progress = fraction that do."""
        held = {b for b in self.active_blocks() if holding(scene, b)}
        contents = self._slot_contents(scene, held)
        terms = {}
        for number, slot in enumerate(self.active_slots(), start=1):
            letter = self._puzzle.letter(number)
            block = contents.get(slot)
            terms[f"{slot} holds {letter}"] = float(
                block is not None and self._letters[block] == letter)
        return TaskEvaluation(all(v > 0.5 for v in terms.values()),
                              float(np.mean(list(terms.values()))), terms)

    @property
    def puzzle(self) -> Puzzle:
        """The episode's puzzle."""
        return self._puzzle

    @property
    def board_yaw(self) -> float:
        """Yaw of the board's x axis in the base frame, radians."""
        return self._board_yaw
