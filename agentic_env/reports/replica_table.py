"""An emulated profile's Table II row on the calibration replica, beside the paper's
(``agentic-env modules --replica``).

Each emulated module whose errors follow what it is sent (:mod:`agentic_env.oracle.causes`:
the parser, the action checker, the grasp judge, the goal checker) has one normaliser per
model x module, solved so that its mean error probability over the calibration replica
(:mod:`agentic_env.oracle.replica`) is the profile's measured rate, i.e. one minus AgenticLab
Table II's success rate. This module evaluates the profile's own cause models on every
replica situation and averages the probabilities exactly (no sampling), so each module's
replica success rate equals the paper's **by construction**: the row checks the calibration
(the normaliser, the replica file, the profile's copy of Table II), it predicts nothing.

The object detector has no cause model: its difficulty model
(:mod:`agentic_env.oracle.difficulty`) keeps its rate as the mean over the module
benchmark's detector sightings (``_benchmark_sightings.toml``, in the lab), and is shown the
same way over those, with its boxes' mean IoU beside Table II's Bbox IoU (the profile's copy):
a right detection's box has the mean IoU its loose-box model was solved for
(:mod:`agentic_env.oracle.boxes`), a wrong one IoU 0, so over the sightings the mean is the
pointing rate times that, Table II's IoU by construction (tight boxes: the pointing rate).
A module whose cause model is switched off (``[causes.<module>]
enabled = 0``) errs by the constant coin: its mean is the rate itself on every situation.

Optionally one sampled pass (a fixed seed: one draw per situation at its probability) shows
the spread a benchmark of the replica's size has: the paper's rate should lie within the
95 % Wilson interval of the sampled successes (about 1 module in 20 misses by chance); the
box IoU's sampled pass draws a box per rightly pointed situation (continuous coordinates),
with a normal 95 % interval of its mean. The IoU of boxes rounded to pixels and clipped to
rendered images is measured by the module benchmark itself (``agentic-env modules``: the
detector's IoU column).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agentic_env.bench.modules import MODULE_ORDER
from agentic_env.errors import InvalidConfigError
from agentic_env.oracle.boxes import mean_unit_iou, unit_iou
from agentic_env.oracle.difficulty import Sighting
from agentic_env.oracle.emulated import box_models, cause_models, difficulty_models
from agentic_env.oracle.profile import ModelProfile, load_profile, profile_names
from agentic_env.oracle.replica import packaged_replica
from agentic_env.reports.paper_modules import SOURCE, TABLE_TWO, PaperRow
from agentic_env.stats import wilson_interval

#: The header's statement of what the comparison is.
BY_CONSTRUCTION = (
    "Equal by construction: each module's normaliser was solved on this replica so that its "
    "mean error rate is the profile's Table II rate (the detector's on the module "
    "benchmark's sightings, and its boxes' scale so that their mean IoU is Table II's); "
    "this checks the calibration, it is not a prediction.")
#: Where a box IoU's sampled pass draws from (apart from the sampled successes).
_IOU_STREAM = 1


@dataclass(frozen=True)
class IouCell:
    """The detector's boxes on the replica: mean IoU with the tight box of the target's
    visible pixels.

    Attributes:
        paper: the profile's Table II Bbox IoU (``None``: not measured, tight boxes).
        replica: the exact mean over the sightings (wrong pointings at IoU 0).
        n: the sightings averaged over.
        source: how the boxes are drawn.
        sampled: the sampled pass's mean IoU and the half-width of its normal 95 %
            interval (``None``: not sampled).
    """

    paper: float | None
    replica: float
    n: int
    source: str
    sampled: tuple[float, float] | None = None


@dataclass(frozen=True)
class ReplicaCell:
    """One module of a profile's row on the replica.

    Attributes:
        module: the measured module (:data:`~agentic_env.bench.modules.MODULE_ORDER`).
        paper: Table II's success rate (``None``: the paper's "–", no usable result).
        replica: one minus the mean error probability over the situations (``None``: none).
        n: the situations averaged over.
        source: what the situations are and which model rates them.
        sampled: successes of one sampled pass over the situations (``None``: not sampled).
        iou: the detector's box IoU (``None``: another module).
    """

    module: str
    paper: float | None
    replica: float | None
    n: int
    source: str
    sampled: int | None = None
    iou: IouCell | None = None

    @property
    def difference(self) -> float | None:
        """Replica minus paper success rate ("–" counts as 0; ``None``: no situations)."""
        return None if self.replica is None else self.replica - (self.paper or 0.0)

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95 % Wilson interval of the sampled pass (``None``: not sampled)."""
        return None if self.sampled is None else wilson_interval(self.sampled, self.n)


def table_two_profiles() -> dict[str, str]:
    """Table II's row name -> the packaged profile emulating it (its ``title``), in the
    table's order."""
    titles = {load_profile(name).title: name for name in profile_names()}
    return {row.model: titles[row.model] for row in TABLE_TWO if row.model in titles}


def replica_profile(name: str) -> tuple[ModelProfile, PaperRow]:
    """The profile named ``name`` (``emulated:<profile>``, ``<profile>`` or a Table II row's
    model, case-insensitive) and its Table II row.

    Raises:
        InvalidConfigError: no such profile, or one without a Table II row; the message
            lists the profiles that have one.
    """
    rows = table_two_profiles()
    valid = ", ".join(f"emulated:{profile} ({row})" for row, profile in rows.items())
    wanted = name.strip().removeprefix("emulated:").lower()
    for row in TABLE_TWO:
        profile = rows.get(row.model)
        if profile is not None and wanted in (profile.lower(), row.model.lower()):
            return load_profile(profile), row
    if wanted in profile_names():
        raise InvalidConfigError(
            f"model profile {wanted!r} ({load_profile(wanted).title}) has no row in "
            f"{SOURCE} to run on the calibration replica; profiles with one: {valid}")
    raise InvalidConfigError(f"no model profile {name!r} with a row in {SOURCE} (give "
                             f"emulated:NAME); profiles with one: {valid}")


def _probabilities(profile: ModelProfile, module: str) -> tuple[list[float], str]:
    """Each situation's error probability of ``module`` by the profile's own model, and
    what the situations are."""
    rate = 1.0 - profile.modules[module].success.value
    if module == "detector":
        model = difficulty_models(profile)["detector"]
        return ([model.rate(rate, Sighting(px, n))
                 for px, n in model.situations],
                "benchmark sightings, difficulty model (no cause model)")
    causal = cause_models(profile).get(module)
    if causal is None:
        return ([rate] * len(packaged_replica().get(module, ())),
                "calibration replica, constant coin (cause model off)")
    return ([causal.rate(rate, s) for s in causal.replica],
            f"calibration replica, {type(causal).__name__}")


def _iou_cell(profile: ModelProfile, p: np.ndarray, right: np.ndarray | None,
              rng: np.random.Generator | None) -> IouCell:
    """The detector's box IoU over sightings of error probabilities ``p``; ``right``: the
    sampled pass's rightly pointed sightings (drawn from ``rng``), ``None``: not sampled."""
    measured = profile.modules["detector"].box_iou
    model = box_models(profile).get("detector")
    right_iou = 1.0 if model is None else mean_unit_iou(model.scale, model.grow,
                                                        model.max_shrink)
    source = ("tight boxes" if model is None else
              f"loose boxes: edges moved up to {model.scale:.3f} of the box's size, "
              f"outward {100 * model.grow:.0f} %")
    sampled = None
    if right is not None and rng is not None and p.size:
        draws = np.zeros(p.size)
        hits = int(right.sum())
        draws[right] = 1.0 if model is None else unit_iou(model.offsets(rng, hits))
        sampled = (float(draws.mean()), 1.96 * float(draws.std(ddof=1)) / np.sqrt(p.size)
                   if p.size > 1 else 0.0)
    return IouCell(None if measured is None else measured.value,
                   float(np.mean(1.0 - p)) * right_iou if p.size else 0.0, int(p.size),
                   source, sampled)


def replica_row(profile: ModelProfile, row: PaperRow, modules: Sequence[str] = MODULE_ORDER,
                sample_seed: int | None = None) -> list[ReplicaCell]:
    """``profile``'s success rate per module of ``modules`` over its situations (exact
    means of its models' probabilities) beside Table II's ``row``; with ``sample_seed``,
    also one sampled pass (one draw per situation, seeded by the seed and the module; the
    detector's boxes from a stream of their own)."""
    cells = []
    for module in modules:
        if module not in profile.modules:
            continue
        probabilities, source = _probabilities(profile, module)
        p = np.asarray(probabilities, float)
        sampled, right = None, None
        if sample_seed is not None:
            rng = np.random.default_rng([sample_seed, MODULE_ORDER.index(module)])
            right = rng.random(p.size) >= p
            sampled = int(right.sum())
        iou = None
        if module == "detector":
            boxes = None if sample_seed is None else np.random.default_rng(
                [sample_seed, MODULE_ORDER.index(module), _IOU_STREAM])
            iou = _iou_cell(profile, p, right, boxes)
        rate = 1.0 - profile.modules[module].success.value
        if rate <= 0.0 or rate >= 1.0:
            source += f" (rate {rate:.0f}: nothing to normalise)"
        cells.append(ReplicaCell(module, row.success.get(module),
                                 1.0 - float(p.mean()) if p.size else None, int(p.size),
                                 source, sampled, iou))
    return cells


def _percent(rate: float | None) -> str:
    return "–" if rate is None else f"{100 * rate:.5f}"


def format_replica_rows(rows: Sequence[tuple[ModelProfile, Sequence[ReplicaCell]]]) -> str:
    """Text: the by-construction header, then per profile and module the paper's success
    rate, the replica's, their difference and the situations (and, where sampled, the
    sampled pass with its 95 % interval and whether it holds the paper's rate)."""
    sampled = any(c.sampled is not None for _, cells in rows for c in cells)
    lines = [f"Emulated profiles on the calibration replica of the module benchmark beside "
             f"{SOURCE} (success rate, %; '–': the paper's no usable result, taken as 0).",
             BY_CONSTRUCTION]
    head = (f"{'module':<10}{'paper %':>11}{'replica %':>12}{'diff (pp)':>12}"
            f"{'n':>6}  ")
    head += f"{'sampled % [95 % interval]':<34}" if sampled else ""
    for profile, cells in rows:
        lines += ["", f"emulated:{profile.name} ({profile.title})", head + "situations"]
        for cell in cells:
            diff = "–" if cell.difference is None else f"{100 * cell.difference:+.1e}"
            text = (f"{cell.module:<10}{_percent(cell.paper):>11}"
                    f"{_percent(cell.replica):>12}{diff:>12}{cell.n:>6}  ")
            interval = cell.interval
            if sampled:
                shown = ""
                if cell.sampled is not None and interval is not None and cell.n:
                    holds = interval[0] <= (cell.paper or 0.0) <= interval[1]
                    shown = (f"{100 * cell.sampled / cell.n:.1f} [{100 * interval[0]:.1f}, "
                             f"{100 * interval[1]:.1f}] {'holds' if holds else 'MISSES'}")
                text += f"{shown:<34}"
            lines.append(text + cell.source)
            if cell.iou is not None:
                lines.append(_iou_line(cell.iou, sampled))
    return "\n".join(lines)


def _iou_line(cell: IouCell, sampled: bool) -> str:
    """The detector's box IoU as a row of the table (``bbox_iou``, %; the paper's "–":
    not measured)."""
    diff = "–" if cell.paper is None else f"{100 * (cell.replica - cell.paper):+.1e}"
    text = (f"{'bbox_iou':<10}{_percent(cell.paper):>11}{_percent(cell.replica):>12}"
            f"{diff:>12}{cell.n:>6}  ")
    if sampled:
        shown = ""
        if cell.sampled is not None:
            mean, half = cell.sampled
            holds = cell.paper is not None and abs(mean - cell.paper) <= half
            shown = (f"{100 * mean:.1f} [{100 * (mean - half):.1f}, "
                     f"{100 * (mean + half):.1f}] {'holds' if holds else 'MISSES'}")
        text += f"{shown:<34}"
    return text + "benchmark sightings, " + cell.source


def replica_table(names: Sequence[str], modules: Sequence[str] = MODULE_ORDER,
                  sample_seed: int | None = None) -> str:
    """The text of ``agentic-env modules --replica`` for the profiles ``names`` (see
    :func:`replica_profile`).

    Raises:
        InvalidConfigError: a name is no profile with a Table II row.
    """
    found = [replica_profile(name) for name in names]
    return format_replica_rows([(profile, replica_row(profile, row, modules, sample_seed))
                                for profile, row in found])
