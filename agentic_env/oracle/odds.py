"""Log-odds arithmetic the emulated models' error rates share (one copy of each helper)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np


def logit(p: float) -> float:
    """``log(p / (1 - p))`` of a probability ``p`` in (0, 1)."""
    return math.log(p / (1.0 - p))


def expit(x: float) -> float:
    """The probability in (0, 1) of log-odds ``x`` (overflow-safe)."""
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def expit_array(x: np.ndarray) -> np.ndarray:
    """:func:`expit` of every element of ``x`` (clipped to +-500 against overflow)."""
    return 1.0 / (1.0 + np.exp(-np.clip(x, -500.0, 500.0)))


def solve_increasing(mean: Callable[[float], float], target: float,
                     low: float = -40.0, high: float = 40.0, steps: int = 80) -> float:
    """``c`` in [``low``, ``high``] with ``mean(c) == target`` for an increasing ``mean``
    (bisection; an end of the bracket when ``target`` lies outside its range)."""
    for _ in range(steps):
        middle = (low + high) / 2
        low, high = (middle, high) if mean(middle) < target else (low, middle)
    return (low + high) / 2


def solve_mean(rate: float, shifts: np.ndarray) -> float:
    """The log-odds constant ``c`` with ``mean(expit(logit(rate) + c + shifts)) == rate``:
    the normaliser that keeps a measured ``rate`` in (0, 1) as the mean over situations of
    log-odds ``shifts``."""
    base = logit(rate)
    return solve_increasing(lambda c: float(np.mean(expit_array(base + c + shifts))), rate)
