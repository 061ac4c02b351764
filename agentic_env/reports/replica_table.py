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
same way over those. A module whose cause model is switched off (``[causes.<module>]
enabled = 0``) errs by the constant coin: its mean is the rate itself on every situation.

Optionally one sampled pass (a fixed seed: one draw per situation at its probability) shows
the spread a benchmark of the replica's size has: the paper's rate should lie within the
95 % Wilson interval of the sampled successes (about 1 module in 20 misses by chance).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agentic_env.errors import InvalidConfigError
from agentic_env.harness.module_bench import MODULE_ORDER
from agentic_env.oracle.difficulty import Sighting
from agentic_env.oracle.emulated import cause_models, difficulty_models
from agentic_env.oracle.profile import ModelProfile, load_profile, profile_names
from agentic_env.oracle.replica import packaged_replica
from agentic_env.reports.metrics import wilson_interval
from agentic_env.reports.paper_modules import SOURCE, TABLE_TWO, PaperRow

#: The setting of the module measurements (Table II) and of the detector's sightings.
REFERENCE_SETTING = "lab"
#: The header's statement of what the comparison is.
BY_CONSTRUCTION = (
    "Equal by construction: each module's normaliser was solved on this replica so that its "
    "mean error rate is the profile's Table II rate (the detector's on the module "
    "benchmark's sightings); this checks the calibration, it is not a prediction.")


@dataclass(frozen=True)
class ReplicaCell:
    """One module of a profile's row on the replica.

    Attributes:
        module: the measured module (:data:`~agentic_env.harness.module_bench.MODULE_ORDER`).
        paper: Table II's success rate (``None``: the paper's "–", no usable result).
        replica: one minus the mean error probability over the situations (``None``: none).
        n: the situations averaged over.
        source: what the situations are and which model rates them.
        sampled: successes of one sampled pass over the situations (``None``: not sampled).
    """

    module: str
    paper: float | None
    replica: float | None
    n: int
    source: str
    sampled: int | None = None

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
        return ([model.rate(rate, Sighting(px, n, REFERENCE_SETTING))
                 for px, n in model.situations],
                "benchmark sightings, difficulty model (no cause model)")
    causal = cause_models(profile).get(module)
    if causal is None:
        return ([rate] * len(packaged_replica().get(module, ())),
                "calibration replica, constant coin (cause model off)")
    return ([causal.rate(rate, s) for s in causal.replica],
            f"calibration replica, {type(causal).__name__}")


def replica_row(profile: ModelProfile, row: PaperRow, modules: Sequence[str] = MODULE_ORDER,
                sample_seed: int | None = None) -> list[ReplicaCell]:
    """``profile``'s success rate per module of ``modules`` over its situations (exact
    means of its models' probabilities) beside Table II's ``row``; with ``sample_seed``,
    also one sampled pass (one draw per situation, seeded by the seed and the module)."""
    cells = []
    for module in modules:
        if module not in profile.modules:
            continue
        probabilities, source = _probabilities(profile, module)
        p = np.asarray(probabilities, float)
        sampled = None
        if sample_seed is not None:
            rng = np.random.default_rng([sample_seed, MODULE_ORDER.index(module)])
            sampled = int((rng.random(p.size) >= p).sum())
        rate = 1.0 - profile.modules[module].success.value
        if rate <= 0.0 or rate >= 1.0:
            source += f" (rate {rate:.0f}: nothing to normalise)"
        cells.append(ReplicaCell(module, row.success.get(module),
                                 1.0 - float(p.mean()) if p.size else None, int(p.size),
                                 source, sampled))
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
    return "\n".join(lines)


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
