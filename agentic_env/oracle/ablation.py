"""Emulated models with mechanisms switched off (``emulated:PROFILE?ablate=M1,M2``): what an
untargeted prediction compares each mechanism's effect with.

A mechanism is one way an emulated model's errors follow what a call is sent:

* ``parser``, ``checker``, ``goal``, ``grasp``: that module's cause model
  (:mod:`agentic_env.oracle.causes`), replaced by the constant coin of its Table II rate
  (``[causes.<module>] enabled = 0``);
* ``difficulty``: the detector's and Localizer's odds by visible pixels and look-alikes
  (:mod:`agentic_env.oracle.difficulty`), flattened (every odds multiplier 1);
* ``quality``: the share of their success the measured quality of the frame sent leaves
  (:mod:`agentic_env.oracle.image_quality`), switched off (``image_quality = 0``); with
  ``difficulty`` too, a pointing errs at its Table II rate everywhere;
* ``boxes``: the loose boxes of :mod:`agentic_env.oracle.boxes`, replaced by tight ones
  (``[boxes] enabled = 0``);
* ``all``: every one of them.

The rates stay each module's Table II rate; only their dependence on the image goes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from types import MappingProxyType

from agentic_env.errors import InvalidConfigError
from agentic_env.oracle.profile import ModelProfile, Number

#: The mechanisms ``ablate=`` may name (besides ``all``).
MECHANISMS: tuple[str, ...] = ("parser", "checker", "goal", "grasp", "difficulty", "quality",
                                "boxes")
#: The difficulty weights that multiply odds (``reference_px`` is a threshold, kept).
_ODDS_PREFIXES = ("per_halving", "per_lookalike")
_ABLATED = "switched off by ablate= (an untargeted prediction's ablation)"


def check_mechanisms(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` as the sorted mechanisms they mean (``all``: every one).

    Raises:
        InvalidConfigError: an unknown name (the message lists the valid ones).
    """
    wanted = set(names)
    unknown = sorted(wanted - {*MECHANISMS, "all"})
    if unknown:
        raise InvalidConfigError(f"ablate: unknown mechanism(s) {', '.join(unknown)}; valid: "
                                 f"{', '.join(MECHANISMS)}, all")
    return MECHANISMS if "all" in wanted else tuple(sorted(wanted))


def ablated(profile: ModelProfile, names: Iterable[str]) -> ModelProfile:
    """``profile`` with the mechanisms ``names`` (see the module docstring) switched off.

    Raises:
        InvalidConfigError: an unknown mechanism.
    """
    mechanisms = check_mechanisms(names)
    if not mechanisms:
        return profile
    off = Number(0, assumption=_ABLATED)
    causes = {module: (MappingProxyType({**numbers, "enabled": off})
                       if module in mechanisms else numbers)
              for module, numbers in profile.causes.items()}
    difficulty: Mapping[str, Number] = profile.difficulty
    if "difficulty" in mechanisms:
        difficulty = MappingProxyType({
            key: Number(1.0, assumption=_ABLATED) if key.startswith(_ODDS_PREFIXES) else n
            for key, n in difficulty.items()})
    if "quality" in mechanisms:
        difficulty = MappingProxyType({**difficulty, "image_quality": off})
    boxes: Mapping[str, Number] = profile.boxes
    if "boxes" in mechanisms and boxes:
        boxes = MappingProxyType({**boxes, "enabled": off})
    return replace(profile, causes=MappingProxyType(causes), difficulty=difficulty,
                   boxes=boxes)
