"""Errors from what a module is sent: error rates that follow the image's cause, with the
measured rate kept as the mean over the module benchmark's calibration replica.

Each model is a documented functional form whose slopes are the profile's stated
assumptions (``[causes.<module>]``) and whose one constant per model x module (the
*normaliser*) is solved so that the mean rate over the calibration replica
(:mod:`agentic_env.oracle.replica`: simulated instances of the paper's own module benchmark,
on reserved calibration seeds) equals the measured rate (AgenticLab Table II). Nothing is
fitted to an outcome: the replica holds situations (pixels, truths, goal sizes), never a
verdict.

* :class:`VerdictModel` (action checker, goal checker; MALLVI's Reflector through the
  checker's): logistic in the log of the visible pixels (in the view the module was sent)
  of the objects a predicate is about::

      logit p = logit r + c_r + max_literal [h(px) ln(per_halving) + ln(family)] + ln(view)

  with ``h(px) = log2(reference_px / px)`` halvings below ``reference_px`` (0 above; an
  object below the visibility threshold counts as the threshold), ``px`` the smallest
  visible object of the literal, ``family`` the predicate kind's odds (``hand``: holding /
  hand-empty; ``relation``: on / in / on-top-of; ``state``: the rest) and ``view`` the
  camera's odds. The direction of an error is the only one the verdict's truth allows
  (``false_fail`` when the conditions hold, ``false_pass`` when they do not): the profile's
  ``[kinds.<module>]`` split says which way errors go and never changes a call's rate (over
  the replica's natural mix, 2 checks in 3 hold, so 2 errors in 3 are false fails).
  Form: recall of detectors rises about linearly with the log of an object's pixel area
  below COCO's medium size (32 x 32 px) and flattens above it (Lin et al. 2014, COCO's
  small / medium / large split; Hoiem, Chodpathumwan & Dai 2012, "Diagnosing Error in Object
  Detectors", Fig. on object size); a logistic in log area is the standard smooth form of
  that curve.
* :class:`CropModel` (grasp judge; MALLVI's Thinker): logistic in the clutter and occlusion
  inside the crop it judges: ``logit p = logit r + c_r + n ln(per_neighbour) + f ln(occluded)``,
  ``n`` other objects in the crop, ``f`` the share of the target's outline
  others cover (AgenticLab Sec. VI-D: in clutter "imperfect bounding boxes often include
  multiple objects and collision-prone grasps are common"; Hoiem et al. 2012: occlusion is a
  main cause of false negatives).
* :class:`LiteralModel` (task parser): a constant per-literal hazard, ``p(n) = 1 - (1 -
  p_literal)^n`` for a goal of ``n`` literals, ``p_literal`` solved so that the mean over the
  replica's instructions equals the measured rate: long instructions fail more (PlanBench,
  Valmeekam et al. 2023: success falls as the problem grows).

Every model has an ablation switch (``[causes.<module>] enabled = 0``) that restores the
constant coin (:func:`cause_models` builds no model for it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from agentic_env.oracle.odds import expit, logit, solve_increasing, solve_mean

if TYPE_CHECKING:
    from agentic_env.oracle.visibility import CropSight, Visibility

#: Predicates about what the hand holds.
HAND_PREDICATES = ("holding", "hand-empty")
#: Predicates relating two things (what is on or in what).
RELATION_PREDICATES = ("on", "in", "on-top-of", "in-drawer", "in-slot", "in-pose")
#: The predicate families a verdict model weighs.
FAMILIES = ("hand", "relation", "state")
_LITERAL = re.compile(r"\(\s*(?:not\s*\(\s*)?([A-Za-z0-9_-]+)([^()]*)\)")


def literal_parts(literal: str) -> tuple[str, str, tuple[str, ...]]:
    """``(family, predicate, arguments)`` of ``(p a b)`` or ``(not (p a b))`` (lower case;
    an unreadable literal is a ``state`` with no arguments)."""
    match = _LITERAL.search(literal.lower())
    if match is None:
        return "state", "", ()
    predicate, args = match.group(1), tuple(match.group(2).split())
    family = ("hand" if predicate in HAND_PREDICATES else "relation"
              if predicate in RELATION_PREDICATES else "state")
    return family, predicate, args


@dataclass(frozen=True)
class VerdictSight:
    """One verdict call's situation.

    Attributes:
        view: the camera of the image sent (``shoulder``, ``wrist``).
        kind: the only error its truth allows (``false_fail``: the conditions hold;
            ``false_pass``: they do not).
        literals: (family, raw visible px of each of its objects with geometry) per
            literal asked.
    """

    view: str
    kind: str
    literals: tuple[tuple[str, tuple[int, ...]], ...]


def verdict_sight(sight: Visibility, literals: Iterable[str], holds: bool, camera: str,
                  size: tuple[int, int]) -> VerdictSight:
    """The :class:`VerdictSight` of a verdict on ``literals`` (true: ``holds``) sent the
    image of ``camera`` at ``size`` (height, width; 0, 0: its own)."""
    parts = [literal_parts(str(lit)) for lit in literals]
    counts = sight.pixels({a for _, _, args in parts for a in args}, camera, size)
    return VerdictSight(camera, "false_fail" if holds else "false_pass", tuple(
        (family, tuple(counts[a] for a in args if a in counts)) for family, _, args in parts))


class _Calibrated:
    """A logistic rate model: the measured rate's log-odds plus a normaliser (cached per
    rate) plus the situation's shift; the normaliser keeps the rate the replica's mean."""

    replica: Sequence[Any]
    _normalisers: dict[float, float]

    def shift(self, situation: Any) -> float:  # pragma: no cover - every model has one
        raise NotImplementedError

    def normaliser(self, rate: float) -> float:
        """The log-odds constant ``c_r`` that keeps ``rate`` (in (0, 1)) as the mean over
        the replica (0 when it is empty)."""
        if rate not in self._normalisers:
            shifts = np.array([self.shift(s) for s in self.replica], float)
            self._normalisers[rate] = solve_mean(rate, shifts) if shifts.size else 0.0
        return self._normalisers[rate]

    def rate(self, rate: float, situation: Any) -> float:
        """The error probability in [0, 1] of a call whose measured rate is ``rate`` in
        ``situation`` (0 and 1 stay as they are)."""
        if rate <= 0.0 or rate >= 1.0:
            return rate
        return expit(logit(rate) + self.normaliser(rate) + self.shift(situation))

    def replica_mean(self, rate: float) -> float:
        """The mean error probability over the replica (``rate`` by construction)."""
        return float(np.mean([self.rate(rate, s) for s in self.replica]))


@dataclass(frozen=True)
class VerdictModel(_Calibrated):
    """Verdict errors from the pixels of what a predicate is about (module docstring).

    Args:
        min_visible_px: below this an object is not seen (it counts as this many px).
        reference_px: px at and above which an object is not small (COCO: 32 x 32).
        per_halving: odds multiplier (> 0) per halving of the pixels below it.
        view: camera -> odds multiplier (> 0; a camera not named: 1).
        family: predicate family (:data:`FAMILIES`) -> odds multiplier (> 0).
        replica: the calibration replica's :class:`VerdictSight` s.
    """

    min_visible_px: float
    reference_px: float
    per_halving: float
    view: Mapping[str, float]
    family: Mapping[str, float]
    replica: Sequence[VerdictSight]
    _normalisers: dict[float, float] = field(default_factory=dict, compare=False, repr=False)

    def halvings(self, px: int) -> float:
        """Halvings of ``px`` below :attr:`reference_px` (>= 0; unseen: the threshold's)."""
        seen = max(float(px), self.min_visible_px, 1.0)
        return max(0.0, math.log2(self.reference_px / seen))

    def shift(self, situation: VerdictSight) -> float:
        """The situation's log-odds shift before normalisation."""
        per = [(self.halvings(min(px)) if px else 0.0) * math.log(self.per_halving)
               + math.log(self.family.get(family, 1.0)) for family, px in situation.literals]
        return (max(per) if per else 0.0) + math.log(self.view.get(situation.view, 1.0))


@dataclass(frozen=True)
class CropSituation:
    """One grasp judgement's situation: what its crop holds and its truth's error kind
    (``false_reject`` for a good grasp, ``false_execute`` for a bad one)."""

    neighbours: int
    occluded: float
    kind: str


def crop_situation(crop: CropSight, good: bool) -> CropSituation:
    """The :class:`CropSituation` of a judgement of a grasp (``good``: it is) whose crop
    holds ``crop``."""
    return CropSituation(crop.neighbours, crop.occluded,
                         "false_reject" if good else "false_execute")


@dataclass(frozen=True)
class CropModel(_Calibrated):
    """Grasp-judge errors from clutter and occlusion in the crop (module docstring).

    Args:
        per_neighbour: odds multiplier (> 0) per other object in the crop.
        occluded: odds multiplier (> 0) of a target whose outline others cover wholly
            (log-linear in the covered share).
        replica: the calibration replica's :class:`CropSituation` s.
    """

    per_neighbour: float
    occluded: float
    replica: Sequence[CropSituation]
    _normalisers: dict[float, float] = field(default_factory=dict, compare=False, repr=False)

    def shift(self, situation: CropSituation) -> float:
        """The situation's log-odds shift before normalisation."""
        return situation.neighbours * math.log(self.per_neighbour) \
            + situation.occluded * math.log(self.occluded)


@dataclass(frozen=True)
class LiteralModel:
    """Parser errors per goal literal (module docstring).

    Args:
        replica: goal sizes (literals, >= 1) of the replica's instructions.
    """

    replica: Sequence[int]
    _per_literal: dict[float, float] = field(default_factory=dict, compare=False, repr=False)

    def per_literal(self, rate: float) -> float:
        """``p_literal`` in [0, 1] whose mean instruction error over the replica is ``rate``
        (``rate`` itself with an empty replica)."""
        if rate <= 0.0 or rate >= 1.0 or not self.replica:
            return rate
        if rate not in self._per_literal:
            sizes = np.maximum(np.asarray(self.replica, float), 1.0)
            c = solve_increasing(
                lambda x: float(np.mean(1.0 - (1.0 - expit(x)) ** sizes)), rate)
            self._per_literal[rate] = expit(c)
        return self._per_literal[rate]

    def rate(self, rate: float, literals: int) -> float:
        """The error probability of an instruction of ``literals`` goal literals (``rate``
        itself with an empty replica: nothing to calibrate on)."""
        if rate <= 0.0 or rate >= 1.0 or not self.replica:
            return rate
        return 1.0 - (1.0 - self.per_literal(rate)) ** max(int(literals), 1)

    def replica_mean(self, rate: float) -> float:
        """The mean error probability over the replica (``rate`` by construction)."""
        return float(np.mean([self.rate(rate, n) for n in self.replica]))


#: A model that turns a measured rate and a call's situation into that call's rate.
CauseModel = VerdictModel | CropModel | LiteralModel
#: The measured modules with a cause model, and the roles each one's model serves (a role
#: errs by it only where its answer states its situation).
CAUSE_ROLES: Mapping[str, tuple[str, ...]] = {
    "checker": ("checker", "reflector"), "goal": ("goal",), "grasp": ("grasp", "thinker"),
    "parser": ("parser",)}
#: Each cause table's keys (``view.<camera>`` / ``family.<family>`` as sub-tables).
CAUSE_KEYS: Mapping[str, tuple[str, ...]] = {
    "checker": ("enabled", "reference_px", "per_halving", "view", "family"),
    "goal": ("enabled", "reference_px", "per_halving", "view", "family"),
    "grasp": ("enabled", "per_neighbour", "occluded"),
    "parser": ("enabled",)}


def build_model(module: str, numbers: Mapping[str, float], min_visible_px: float,
                replica: Mapping[str, Sequence[Any]]) -> CauseModel:
    """The cause model of measured ``module`` from its flat ``numbers`` (``view.wrist``...)
    and the calibration ``replica`` (module -> situations)."""
    situations = tuple(replica.get(module, ()))
    if module in ("checker", "goal"):
        def sub(prefix: str) -> dict[str, float]:
            return {k.removeprefix(prefix): v for k, v in numbers.items()
                    if k.startswith(prefix)}
        return VerdictModel(min_visible_px, numbers["reference_px"], numbers["per_halving"],
                            sub("view."), sub("family."), situations)
    if module == "grasp":
        return CropModel(numbers["per_neighbour"], numbers["occluded"], situations)
    return LiteralModel(tuple(int(n) for n in situations))
