"""How hard a target is to find in the image a role was sent, and the error rate that follows.

An emulated detector (and MALLVI's Localizer) errs more often on a target that is hard to
see and less often on an easy one, with its profile's measured rate kept on average:

* a :class:`Sighting` is the documented difficulty of one target in one image: its visible
  pixels, the same-category look-alikes in view (another fruit, another letter block:
  :func:`same_category`) and the image's measured quality
  (:mod:`agentic_env.oracle.image_quality`);
* a :class:`DifficultyModel` turns it into a rate: the measured rate's odds times one odds
  multiplier per feature (the profile's assumed weights), times a normalising constant
  solved so that the rate averaged over the module benchmark's detector situations
  (:data:`BENCHMARK_SIGHTINGS`, the setting of AgenticLab's Table II) equals the measured
  rate. The image's quality then scales the success that rate leaves by the share a
  published detector keeps under the matching corruption (COCO-C); the benchmark's own
  frames are that share's reference (severity 0), so the mean over the benchmark's
  situations stays the measured rate and a worse frame elsewhere errs more.

The benchmark's situations are data, made by
:func:`agentic_env.bench.modules.benchmark_sightings` (its docstring says how to
write the file again); they carry features only, no outcome, so nothing is fitted to a
result.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING

import numpy as np

from agentic_env.oracle.image_quality import ImageQuality, QualityModel, measure
from agentic_env.oracle.naming import scene_things, thing_geoms
from agentic_env.oracle.odds import expit, logit, solve_mean

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv

#: The packaged file of the module benchmark's detector situations.
BENCHMARK_SIGHTINGS = "_benchmark_sightings.toml"


@dataclass(frozen=True)
class Sighting:
    """The difficulty of one target in one image.

    Attributes:
        visible_px: the target's pixels in the image sent (0: not seen at all).
        lookalikes: other objects of the target's category the image shows at least the
            visibility threshold of.
        quality: the image's measured quality; ``None`` when no frame was sent (the
            quality term then leaves the rate as it is).
    """

    visible_px: int
    lookalikes: int
    quality: ImageQuality | None = None


def same_category(env: SimEnv, target: str) -> set[str]:
    """The other task objects of ``target``'s PDDL type that share a noun or a label with
    it (another fruit, another letter block): what a model may take for it."""
    things = {t.id: t for t in scene_things(env)}
    own = things.get(target)
    if own is None:
        return set()
    return {t.id for t in things.values() if t.id != target and t.kind == own.kind
            and (t.nouns & own.nouns or t.labels & own.labels)}


def lookalike_pixels(env: SimEnv, segmentation: np.ndarray, target: str) -> list[int]:
    """Pixels of each same-category look-alike of ``target`` (:func:`same_category`) in an
    image of geom ids ``segmentation`` (H, W), sorted."""
    return sorted(int(np.isin(segmentation, thing_geoms(env, other)).sum())
                  for other in same_category(env, target))


def sighting(env: SimEnv, segmentation: np.ndarray, target: str, visible_px: int,
             min_visible_px: int, frame: np.ndarray | None = None) -> Sighting:
    """``target``'s :class:`Sighting` in an image of geom ids ``segmentation`` (H, W).

    Args:
        env: the simulator (its task, geoms and setting).
        segmentation: geom id per pixel of the image sent (-1 = none).
        target: the PDDL name asked for.
        visible_px: the target's pixels the model sees there (0 when fewer than the
            visibility threshold, or inside a closed drawer).
        min_visible_px: a look-alike with fewer pixels than this is not in view.
        frame: the 8-bit RGB image (H, W, 3) the module was sent, whose quality is
            measured; ``None`` when none was.
    """
    alikes = sum(px >= min_visible_px for px in lookalike_pixels(env, segmentation, target))
    return Sighting(int(visible_px), alikes, None if frame is None else measure(frame))


@dataclass(frozen=True)
class DifficultyModel:
    """A measured rate made to depend on a :class:`Sighting` (see the module docstring).

    Args:
        reference_px: visible pixels at and above which a target is not small.
        per_halving: odds multiplier per halving of the visible pixels below
            ``reference_px`` (1: size does not matter).
        per_lookalike: odds multiplier per same-category look-alike in view.
        situations: the module benchmark's detector situations (visible px, look-alikes),
            over which the mean rate is kept.
        quality: the share of success an image's quality leaves; ``None``: switched off
            (the profile's ``image_quality = 0``).
    """

    reference_px: float
    per_halving: float
    per_lookalike: float
    situations: Sequence[tuple[int, int]]
    quality: QualityModel | None = None
    _normalisers: dict[float, float] = field(default_factory=dict, compare=False, repr=False)

    def log_odds(self, visible_px: int, lookalikes: int) -> float:
        """The features' log-odds shift, before normalisation. A target not seen at all has
        no size term (there is nothing small to point at; saying so is the right answer)."""
        small = math.log2(self.reference_px / visible_px) \
            if 0 < visible_px < self.reference_px else 0.0
        return small * math.log(self.per_halving) + lookalikes * math.log(self.per_lookalike)

    def normaliser(self, rate: float) -> float:
        """The log-odds constant that keeps ``rate`` (in (0, 1)) as the mean over
        :attr:`situations` (solved by bisection; 0 when there are none)."""
        if rate not in self._normalisers:
            shifts = np.array([self.log_odds(px, n) for px, n in self.situations], float)
            self._normalisers[rate] = solve_mean(rate, shifts) if shifts.size else 0.0
        return self._normalisers[rate]

    def rate(self, rate: float, seen: Sighting) -> float:
        """The error probability of a call whose base rate is ``rate`` on ``seen``."""
        if rate <= 0.0 or rate >= 1.0:
            return rate
        shift = self.normaliser(rate) + self.log_odds(seen.visible_px, seen.lookalikes)
        error = expit(logit(rate) + shift)
        if self.quality is None or seen.quality is None:
            return error
        return 1.0 - (1.0 - error) * self.quality.performance(seen.quality)


def benchmark_situations() -> tuple[tuple[int, int], ...]:
    """The packaged module benchmark's detector situations: (visible px, look-alikes)."""
    path = resources.files("agentic_env.oracle") / "profiles" / BENCHMARK_SIGHTINGS
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return tuple((int(px), int(n)) for px, n in data["situations"])


def situations_toml(sightings: Iterable[Sighting], header: str) -> str:
    """The text of :data:`BENCHMARK_SIGHTINGS` for ``sightings`` under a comment ``header``."""
    rows = ",\n".join(f"  [{s.visible_px}, {s.lookalikes}]" for s in sightings)
    comment = "\n".join(f"# {line}" if line else "#" for line in header.splitlines())
    return f"{comment}\n\nsituations = [\n{rows},\n]\n"
