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
from agentic_env.agents.runtime import Episode
from agentic_env.agents.skills import Detection, SkillCode, SkillResult, grounding
from agentic_env.agents.skills.locate import MIN_TARGET_POINTS, Target
from agentic_env.agents.skills.pick import Grasp, execute_grasp, plan_grasps
from agentic_env.agents.skills.place import place_at, place_in, place_on

#: Grasp candidates tried per pick (the next only when the arm cannot reach one).
GRASPS_TRIED = 3


def run_single_agent(episode: Episode, ctx: ModuleContext, rng: np.random.Generator,
                     instruction: str) -> bool:
    """Plan once and run every move; whether every move's primitives ran.

    Raises:
        ModuleFailedError: the planning call failed after its re-asks.
        RoleAnswerError: the plan cannot be used.
    """
    first = episode.obs
    plan = roles.plan_single(ctx, first, instruction)
    episode.event("single_agent_plan", moves=[str(p.move) for p in plan])
    all_ok = True
    for index, planned in enumerate(plan):
        result = _run_move(episode, rng, first, planned)
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


def _run_move(agent: Episode, rng: np.random.Generator, first: Mapping[str, np.ndarray],
              planned: PlannedMove) -> SkillResult:
    move = planned.move
    if move.is_turn or move.drawer_state is not None:
        return SkillResult(SkillCode.BAD_ARGS, f"{move}: the single-agent baseline only "
                           "picks and places (no turns, no drawer moves)")
    source = _target(first, move.source, planned.pick, whole=False)
    if source is None:
        return SkillResult(SkillCode.NOT_FOUND, f"no points at the planned pick of "
                           f"{move.source}")
    yaw = grounding.tcp_yaw(agent.obs["tcp_pose"])
    candidates, _slab, scene = plan_grasps(agent, source, yaw, rng)
    result = SkillResult(SkillCode.GRASP_FAILED, f"no grasp candidate on {move.source}")
    for candidate in candidates[:GRASPS_TRIED]:
        result = execute_grasp(agent, Grasp(candidate, source, scene), str(move))
        if result.ok or result.code is not SkillCode.UNREACHABLE:
            break
    if not result.ok:
        return result
    held = result.data["held"]
    if planned.place_mode == "table":
        return place_at(agent, held, why=str(move))
    destination = _target(first, move.destination, planned.place, whole=True)
    if destination is None:
        return SkillResult(SkillCode.NOT_FOUND, f"no points at the planned place on "
                           f"{move.destination}")
    if planned.place_mode in ("in", "drawer"):
        return place_in(agent, held, destination, why=str(move))
    return place_on(agent, held, destination, align_faces=True, why=str(move))
