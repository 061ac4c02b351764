"""The single-agent baseline of the MALLVI paper (Fig. 2, Table 1 "Single-Agent").

One model call plans every move of the episode, with pick and place pixels in the first
shoulder image; the moves then run open-loop from that first view (its depth lifts the
pixels to 3D clouds), with no Localizer, no Thinker and no Reflector. Base frame, metres.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from agentic_env.agents.mallvi import roles
from agentic_env.agents.mallvi.roles import PlannedMove
from agentic_env.agents.models.context import ModuleContext
from agentic_env.agents.perception import target_cloud
from agentic_env.agents.runtime import Manipulator, Place
from agentic_env.agents.skills import Detection, SkillCode, SkillResult
from agentic_env.agents.skills.locate import MIN_TARGET_POINTS, Target

#: Grasp candidates tried per pick (the next only when the arm cannot reach one).
GRASPS_TRIED = 3


def run_single_agent(hands: Manipulator, ctx: ModuleContext, instruction: str) -> bool:
    """Plan once and run every move; whether every move's primitives ran.

    Raises:
        ModuleFailedError: the planning call failed after its re-asks.
        RoleAnswerError: the plan cannot be used.
    """
    episode = hands.episode
    first = episode.obs
    plan = roles.plan_single(ctx, first, instruction)
    episode.event("single_agent_plan", moves=[str(p.move) for p in plan])
    all_ok = True
    for index, planned in enumerate(plan):
        result = _run_move(hands, first, planned)
        episode.event("actor", index=index, subtask=str(planned.move), ok=result.ok,
                      report=result.render()[:500])
        if not result.ok:
            all_ok = False
            episode.fail_first("execution", result.message)
    return all_ok


def _target(first: Mapping[str, np.ndarray], name: str, seen: Detection | None,
            whole: bool) -> Target | None:
    """``name`` as the first image showed it (``whole``: the box's cloud as one target)."""
    if seen is None:
        return None
    cloud = target_cloud(first, "shoulder", seen.point, seen.box)
    if len(cloud) < MIN_TARGET_POINTS:
        return None
    detection = Detection(seen.point, None) if whole else seen
    return Target(name, "object", "shoulder", detection, cloud)


def _run_move(hands: Manipulator, first: Mapping[str, np.ndarray],
              planned: PlannedMove) -> SkillResult:
    move = planned.move
    source = _target(first, move.source, planned.pick, whole=False)
    if source is None:
        return SkillResult(SkillCode.NOT_FOUND, f"no points at the planned pick of "
                           f"{move.source}")
    picked = hands.pick_target(source, lambda offered, slab, scene: range(len(offered)),
                               shown=GRASPS_TRIED, why=str(move))
    if not picked.ok:
        return picked
    if planned.place_mode == "table":
        return hands.place(move.source, Place.TABLE, why=str(move))
    destination = _target(first, move.destination, planned.place, whole=True)
    if destination is None:
        return SkillResult(SkillCode.NOT_FOUND, f"no points at the planned place on "
                           f"{move.destination}")
    mode = Place.IN if planned.place_mode in ("in", "drawer") else Place.ON
    return hands.place(move.source, mode, destination, why=str(move))
