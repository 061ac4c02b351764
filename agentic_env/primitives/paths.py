"""Via poses of the primitives: transits above the table and approaches along the tool axis.

Poses are (4, 4) in the robot base frame, metres; the tool's z axis is the approach direction.
"""

from __future__ import annotations

import numpy as np


def transit_poses(start: np.ndarray, goal: np.ndarray, height: float) -> list[np.ndarray]:
    """Via poses (4x4, base frame) from ``start`` to ``goal`` through the transit ``height``.

    The crossing height is ``height`` or ``goal``'s height, whichever is higher: rise
    vertically to it (if lower), cross to above ``goal``, descend to it; the last pose is
    ``goal`` itself (or the one above it, when ``goal`` is that high already). A caller that
    raises ``goal`` above the obstacles along the way (a longer approach) therefore raises the
    whole crossing, not only its end.
    """
    crossing = max(height, goal[2, 3])
    via = []
    if start[2, 3] < crossing:
        up = start.copy()
        up[2, 3] = crossing
        via.append(up)
    above_goal = goal.copy()
    above_goal[2, 3] = crossing
    via.append(above_goal)
    if goal[2, 3] < above_goal[2, 3]:
        via.append(goal)
    return via


def approach_via(start: np.ndarray, target: np.ndarray, approach: float,
                 height: float) -> list[np.ndarray]:
    """Via poses (4x4, base frame) of a pick or place at ``target`` from TCP pose ``start``:
    through the transit ``height`` (:func:`transit_poses`) to the pre-pose ``approach`` m
    back along the target's z axis, then ``target``."""
    return [*transit_poses(start, offset_along_approach(target, -approach), height), target]


def offset_along_approach(pose: np.ndarray, distance: float) -> np.ndarray:
    """``pose`` moved by ``distance`` metres along its own z (approach) axis."""
    moved = pose.copy()
    moved[:3, 3] += distance * pose[:3, 2]
    return moved
