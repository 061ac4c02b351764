"""The realistic world's budget: what it breaks that the ideal world solves, and why.

From episodes run with the perfect sim-oracle (every model answer exact) on the same trials in
the ideal world, the realistic world, and the realistic world with one of its effects alone
(:data:`agentic_env.sim.realism.world.WORLD_EFFECTS`), per agent x task x setting:

* the world's failures: trials that succeed in the ideal world and fail in the other one, as
  a rate of the ideal successes, each with its cause (:func:`classify_failure`, from the
  first failure's source and sentence);
* the same per effect alone, so a cause is tied to the effect that produces it;
* the paper's bound (:data:`LAB_SORTING_BOUND`) beside the lab sorting cells, and whether the
  realistic world still fails somewhere (it must not be an ideal world in disguise).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agentic_env.agents.skills.result import first_cause
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec

#: Causes of a world failure, in the order the table lists them.
CAUSES: tuple[str, ...] = ("no detection", "depth hole", "false obstacle", "calibration offset",
                           "slip", "collision", "other")
#: Phrases of the skills' and primitives' failure sentences (lower case) and the cause each
#: names, tried in this order (the first phrase found decides): a robot contact, or a move
#: that stopped short of its target (the primitives' "did not settle": the arm or what it holds
#: was blocked on the way, its contact not with the robot's own links); an object
#: lost from the fingers (a slip while lifting, an empty hand at the place); no depth where
#: the target was seen; a place refused for something the depth shows standing there; a
#: grasp that closed on nothing (the object is not where the calibration put it); a target
#: the detector did not find.
CAUSE_PHRASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("collision", ("robot contact between", "simulation diverged", "did not settle")),
    ("slip", ("slipped", "nothing to place")),
    ("depth hole", ("no 3d points", "no point of", "no points at the planned")),
    ("false obstacle", ("something stands at", "no free spot")),
    ("calibration offset", ("nothing between the fingers", "no handle between the fingers",
                            "could not fit the front")),
    ("no detection", ("was not found", "not found", "was not seen")),
)
#: The paper's bound on the world: with every answer right, AgenticLab's lab sorting succeeds
#: at least this often (Gemini 3 Flash solved 75 % of lab sorting trials on the real robot
#: with a 92.3 % parser; AgenticLab Table I, Sec. VI).
LAB_SORTING_BOUND = 0.75
#: The cell the bound applies to: agent, task, setting.
BOUND_CELL = ("agenticlab", "sorting", "lab")
#: The worlds every cell compares with the ideal one: the whole realistic world first.
REALISTIC = "realistic"


def classify_failure(source: str | None, detail: str) -> str:
    """The cause (one of :data:`CAUSES`) of a failure from its source and sentence.

    Args:
        source: the first failing source (``execution``, ``detector``, ``limits``...);
            ``error`` (a crashed episode) is always ``other``.
        detail: the first failure's sentence, e.g. ``"pick of red-cube failed: the gripper
            closed to 2.0 mm: nothing between the fingers"``; a failed retry's sentence
            appended to it (:func:`~agentic_env.agents.skills.result.first_cause`) is not
            read: the first failure is the cause.
    """
    if source == "error":
        return "other"
    text = first_cause(detail).lower()
    for cause, phrases in CAUSE_PHRASES:
        if any(phrase in text for phrase in phrases):
            return cause
    return "other"


def world_of(spec: EpisodeSpec) -> str:
    """The world ``spec`` ran in: ``ideal``, ``realistic`` (every effect) or its effects
    alone joined by ``+`` (e.g. ``sensors``; ``no effects`` for none)."""
    if spec.realism != REALISTIC or spec.world_effects is None:
        return spec.realism
    return "+".join(spec.world_effects) or "no effects"


@dataclass
class WorldCell:
    """One agent x task x setting: its trials' outcomes in each world.

    Attributes:
        agent / task / setting: the cell.
        outcomes: per world (:func:`world_of`), per seed, the episode's result.
    """

    agent: str
    task: str
    setting: str
    outcomes: dict[str, dict[int, EpisodeResult]] = field(
        default_factory=lambda: defaultdict(dict))

    def successes(self, world: str) -> tuple[int, int]:
        """Successes and episodes in ``world``."""
        results = self.outcomes.get(world, {}).values()
        return sum(r.success for r in results), len(results)

    def broken(self, world: str) -> list[EpisodeResult]:
        """``world``'s failures on the trials the ideal world solved."""
        ideal = self.outcomes.get("ideal", {})
        return [result for seed, result in sorted(self.outcomes.get(world, {}).items())
                if not result.success and seed in ideal and ideal[seed].success]

    def exposed(self, world: str) -> int:
        """Trials the ideal world solved that also ran in ``world``: what it could break."""
        ideal = self.outcomes.get("ideal", {})
        return sum(seed in ideal and ideal[seed].success for seed in self.outcomes.get(world, {}))

    def causes(self, world: str) -> Counter[str]:
        """The causes of ``world``'s failures on the ideal world's successes."""
        return Counter(classify_failure(r.failure, r.failure_detail) for r in self.broken(world))

    def recovered(self, world: str) -> int:
        """Successes in ``world`` that needed a replan or more actions than the reference plan
        (a step failed and the agent coped)."""
        return sum(recovered(r) for r in self.outcomes.get(world, {}).values())


def recovered(result: EpisodeResult) -> bool:
    """A success that needed more than the reference plan's actions, or a replan: some step
    failed or was undone and the agent coped."""
    return result.success and (result.replans > 0 or result.n_extra > 0)


def world_cells(results: Iterable[EpisodeResult]) -> list[WorldCell]:
    """The results by agent x task x setting, in the order they first appear."""
    cells: dict[tuple[str, str, str], WorldCell] = {}
    for result in results:
        spec = result.spec
        cell = cells.setdefault((spec.agent, spec.task, spec.setting),
                                WorldCell(spec.agent, spec.task, spec.setting))
        cell.outcomes[world_of(spec)][spec.seed] = result
    return list(cells.values())


def causes_text(causes: Counter[str]) -> str:
    """``"slip 2, depth hole 1"`` in :data:`CAUSES` order; ``"-"`` when none."""
    return ", ".join(f"{cause} {causes[cause]}" for cause in CAUSES if causes[cause]) or "-"


def _rate(part: int, whole: int) -> str:
    return f"{part}/{whole}" + (f" {100 * part / whole:.0f}%" if whole else "")


def _columns(values: Sequence[object], widths: Sequence[int]) -> str:
    return "".join(f" {value!s:>{width}}" for value, width in zip(values, widths, strict=True))


def bound_verdict(cell: WorldCell) -> str:
    """``PASS`` or ``MISS``: the cell's realistic success rate against
    :data:`LAB_SORTING_BOUND` (``-`` with no realistic episode)."""
    success, total = cell.successes(REALISTIC)
    if not total:
        return "-"
    return "PASS" if success / total >= LAB_SORTING_BOUND else "MISS"


def format_budget(cells: Sequence[WorldCell], effects: Sequence[str]) -> str:
    """The table: per cell the successes in both worlds, recoveries, the realistic world's
    failures on the ideal world's successes as a rate with their causes, each effect alone's
    count of those, and the bound beside lab sorting; then totals per agent."""
    widths = [max(len(effect), 4) for effect in effects]
    effect_head = _columns(effects, widths)
    head = (f"{'agent':<16} {'task':<13} {'setting':<7} {'n':>2} {'ideal':>5} {'real.':>5} "
            f"{'rec.i/r':>7} {'world fails':>11}{effect_head} {'bound':>5}  world's causes")
    lines = [head, "-" * len(head)]
    totals: dict[str, list[int]] = defaultdict(lambda: [0] * (5 + len(effects)))
    for cell in cells:
        (ideal, n), (real, _) = cell.successes("ideal"), cell.successes(REALISTIC)
        broke, exposed = len(cell.broken(REALISTIC)), cell.exposed(REALISTIC)
        per_effect = [len(cell.broken(effect)) for effect in effects]
        for index, value in enumerate((n, ideal, real, broke, exposed, *per_effect)):
            totals[cell.agent][index] += value
        bound = (bound_verdict(cell) if (cell.task, cell.setting) == BOUND_CELL[1:] else "")
        recoveries = f"{cell.recovered('ideal')}/{cell.recovered(REALISTIC)}"
        effect_cols = _columns(per_effect, widths)
        lines.append(f"{cell.agent:<16} {cell.task:<13} {cell.setting:<7} {n:>2} {ideal:>5} "
                     f"{real:>5} {recoveries:>7} {_rate(broke, exposed):>11}{effect_cols} "
                     f"{bound:>5}  {causes_text(cell.causes(REALISTIC))}")
    lines.append("-" * len(head))
    for agent, (n, ideal, real, broke, exposed, *per_effect) in totals.items():
        effect_cols = _columns(per_effect, widths)
        lines.append(f"{agent:<16} {'all':<13} {'':<7} {n:>2} {ideal:>5} {real:>5} {'':>7} "
                     f"{_rate(broke, exposed):>11}{effect_cols}")
    return "\n".join(lines)


def format_effects(cells: Sequence[WorldCell], effects: Sequence[str]) -> str:
    """Per effect alone: the ideal world's successes it breaks, by cause, and in which
    cells."""
    lines = []
    for effect in effects:
        causes: Counter[str] = Counter()
        broken = []
        for cell in cells:
            causes += cell.causes(effect)
            count = len(cell.broken(effect))
            if count:
                broken.append(f"{cell.agent}/{cell.task}/{cell.setting} {count}")
        exposed = sum(cell.exposed(effect) for cell in cells)
        lines.append(f"  {effect:<12} breaks {_rate(sum(causes.values()), exposed):<11} "
                     f"{causes_text(causes)}" + (f"; in {', '.join(broken)}" if broken else ""))
    return "\n".join(lines)


def bound_line(cells: Sequence[WorldCell]) -> str:
    """The paper's bound checked on the AgenticLab lab sorting cell's realistic successes."""
    agent, task, setting = BOUND_CELL
    head = (f"paper bound, {agent} {setting} {task} with a perfect model: realistic success "
            f">= {LAB_SORTING_BOUND:.0%} (Gemini 3 Flash: 75 % on the real robot)")
    for cell in cells:
        if (cell.agent, cell.task, cell.setting) == BOUND_CELL:
            success, total = cell.successes(REALISTIC)
            if total:
                return f"{head}: {_rate(success, total)} -> {bound_verdict(cell)}"
    return f"{head}: not measured (run {agent} on {task} in {setting}, realistic)"


def still_fails_line(cells: Sequence[WorldCell]) -> str:
    """Whether the realistic world still breaks some trial the ideal world solves (``YES``
    with the count and causes; ``NO`` when it is an ideal world in disguise)."""
    causes: Counter[str] = Counter()
    for cell in cells:
        causes += cell.causes(REALISTIC)
    exposed = sum(cell.exposed(REALISTIC) for cell in cells)
    broke = sum(causes.values())
    verdict = "YES" if broke else "NO (an ideal world in disguise)"
    return (f"realistic world still fails somewhere: {verdict}: it breaks "
            f"{_rate(broke, exposed)} of the ideal world's successes ({causes_text(causes)})")
