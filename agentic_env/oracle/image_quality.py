"""How much of a detector's performance the quality of the image it was sent leaves.

An emulated detector (and MALLVI's Localizer) is sent a rendered colour frame; the frame's
quality, measured on its pixels, sets the share of the detector's pointing success that
survives, from a published detector's loss under the matching corruption:

* :func:`measure` reads three properties of an 8-bit RGB frame, on the 0..1 scale of
  ImageNet-C's corruptions (Hendrycks & Dietterich 2019, as packaged by the
  ``imagecorruptions`` library that made COCO-C): its sensor-noise standard deviation
  (Immerkær 1996, "Fast noise variance estimation", CVIU 64(2):300-302: the 3 x 3
  difference-of-Laplacians kernel, whose response to image structure is small and to white
  noise of std ``s`` has mean absolute value ``6 s sqrt(2 / pi)``), its RMS contrast (the
  standard deviation of its grey levels) and its brightness (the mean of HSV's value,
  ``max(R, G, B)``);
* against the same properties of the images the module benchmark's detector situations
  were taken from (:data:`REFERENCE_FILE`, the lab of AgenticLab's Table II, realistic world,
  calibration seeds), each becomes one corruption's parameter: the noise added in
  quadrature (``gaussian_noise``: std 0.08-0.38 at severities 1-5), the contrast kept
  (``contrast``: factor 0.4-0.05) and the brightness added (``brightness``: +0.1-+0.5 to
  HSV's value). Only the direction each corruption degrades counts: a cleaner, more
  contrasted or darker frame than the reference leaves its corruption at severity 0;
* each corruption's relative performance is Faster R-CNN R50-FPN's COCO-C box AP50 at that
  parameter over its clean AP50 (Michaelis et al. 2019, arXiv 1907.07484, the benchmark's
  published results file; :data:`CORRUPTIONS_FILE`), linear between the published
  severities and flat beyond the last; the three multiply (an assumption: the corruptions'
  losses are taken as independent).

The detector's pointing success becomes ``success x performance``
(:meth:`agentic_env.oracle.difficulty.DifficultyModel.rate`). A VLM pointing is assumed to
lose what a CNN detector's AP50 loses: the papers measure no VLM under corruption.
What COCO-C has no corruption for (hard shadows, a busy background, a colour cast) costs
nothing here; the setting-wide light multipliers this replaces had no source.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import cv2
import numpy as np

#: The packaged corruption curves (severity parameters and AP50 per severity).
CORRUPTIONS_FILE = "_coco_c.toml"
#: The packaged reference image quality (the module benchmark's shoulder frames).
REFERENCE_FILE = "_image_quality_reference.toml"
#: The three measured corruptions, in :class:`ImageQuality`'s order.
CORRUPTIONS: tuple[str, ...] = ("gaussian_noise", "contrast", "brightness")
#: Immerkær's kernel: two Laplacians' difference, zero response to planes and ramps.
_KERNEL = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float32)
#: ITU-R BT.601 luma weights (the grey level ImageNet-C's frost and snow use).
_LUMA = np.array([0.299, 0.587, 0.114], np.float32)


@dataclass(frozen=True)
class ImageQuality:
    """One frame's measured quality, on the 0..1 scale of 8-bit levels / 255.

    Attributes:
        noise: sensor-noise standard deviation of the grey levels.
        contrast: RMS contrast: the standard deviation of the grey levels.
        brightness: mean of HSV's value (``max(R, G, B)``).
    """

    noise: float
    contrast: float
    brightness: float


def measure(pixels: np.ndarray) -> ImageQuality:
    """The :class:`ImageQuality` of an 8-bit RGB frame ``pixels`` (H, W, 3), H, W >= 3."""
    rgb = np.asarray(pixels, np.float32) / 255.0
    grey = rgb @ _LUMA
    response = cv2.filter2D(grey, cv2.CV_32F, _KERNEL)[1:-1, 1:-1]
    noise = math.sqrt(math.pi / 2.0) * float(np.abs(response).mean()) / 6.0
    return ImageQuality(noise=noise, contrast=float(grey.std()),
                        brightness=float(rgb.max(axis=2).mean()))


@dataclass(frozen=True)
class CorruptionCurve:
    """A detector's relative performance along one corruption's parameter.

    Attributes:
        parameters: the parameter at severities 0 (clean) to 5, monotone.
        relative: AP50 at each severity over the clean AP50 (1 at severity 0).
    """

    parameters: tuple[float, ...]
    relative: tuple[float, ...]

    def at(self, parameter: float) -> float:
        """The relative performance at ``parameter``: linear between the severities, the
        end values beyond them."""
        xs = np.array(self.parameters, float)
        ys = np.array(self.relative, float)
        if xs[0] > xs[-1]:  # a decreasing parameter (contrast kept)
            xs, ys = xs[::-1], ys[::-1]
        return float(np.interp(parameter, xs, ys))


@dataclass(frozen=True)
class QualityModel:
    """The share of performance a frame's quality leaves (see the module docstring).

    Args:
        reference: the quality of the module benchmark's frames (severity 0).
        curves: corruption name (:data:`CORRUPTIONS`) -> its curve.
    """

    reference: ImageQuality
    curves: Mapping[str, CorruptionCurve]

    def parameters(self, quality: ImageQuality) -> dict[str, float]:
        """Each corruption's parameter for ``quality`` against the reference."""
        ref = self.reference
        return {
            "gaussian_noise": math.sqrt(max(quality.noise ** 2 - ref.noise ** 2, 0.0)),
            "contrast": min(quality.contrast / ref.contrast, 1.0) if ref.contrast > 0 else 1.0,
            "brightness": max(quality.brightness - ref.brightness, 0.0),
        }

    def performance(self, quality: ImageQuality) -> float:
        """The product of the corruptions' relative performances, in (0, 1]."""
        return math.prod(self.curves[name].at(value)
                         for name, value in self.parameters(quality).items())


def _profiles_file(name: str) -> dict:
    path = resources.files("agentic_env.oracle") / "profiles" / name
    return tomllib.loads(path.read_text(encoding="utf-8"))


@cache
def quality_model() -> QualityModel:
    """The packaged :class:`QualityModel` (:data:`CORRUPTIONS_FILE`, :data:`REFERENCE_FILE`)."""
    curves = {}
    for name, raw in _profiles_file(CORRUPTIONS_FILE)["corruption"].items():
        ap50 = [float(v) for v in raw["ap50"]]
        curves[name] = CorruptionCurve(tuple(float(v) for v in raw["parameters"]),
                                       tuple(v / ap50[0] for v in ap50))
    ref = _profiles_file(REFERENCE_FILE)["reference"]
    return QualityModel(ImageQuality(float(ref["noise"]), float(ref["contrast"]),
                                     float(ref["brightness"])),
                        {name: curves[name] for name in CORRUPTIONS})


def reference_toml(qualities: Sequence[ImageQuality], header: str) -> str:
    """The text of :data:`REFERENCE_FILE`: the median of each property of ``qualities``
    under a comment ``header``."""
    medians = {field: float(np.median([getattr(q, field) for q in qualities]))
               for field in ("noise", "contrast", "brightness")}
    comment = "\n".join(f"# {line}" if line else "#" for line in header.splitlines())
    rows = "\n".join(f"{key} = {value:.5f}" for key, value in medians.items())
    return f"{comment}\n\n[reference]\nframes = {len(qualities)}\n{rows}\n"
