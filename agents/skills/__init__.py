"""Robot skills every agent design stands on (observation-only: they read observations and
primitive status, never the simulator): a :class:`~agentic_env.agents.skills.scene.SceneView`
of one observation, :func:`~agentic_env.agents.skills.locate.locate` with active perception,
the grasp/place geometry (what the hand holds, :mod:`~agentic_env.agents.skills.holding`;
where to set it down, :mod:`~agentic_env.agents.skills.spots`; clearance on the way,
:mod:`~agentic_env.agents.skills.clearance`) and the reorientation turn
(:mod:`~agentic_env.agents.skills.reorient`); each skill returns a
:class:`~agentic_env.agents.skills.result.SkillResult`. Model judgements (the detector) are
injected callables, so a skill never knows which agent or model calls it.
"""

from agentic_env.agents.skills.drawers import close_drawer, handle_pose, open_drawer, outward_yaw
from agentic_env.agents.skills.io import SkillIO
from agentic_env.agents.skills.locate import Detection, Target, locate, look_from_above
from agentic_env.agents.skills.pick import (
    Grasp,
    GraspJudge,
    accepted_grasps,
    execute_grasp,
    pick,
    plan_grasps,
)
from agentic_env.agents.skills.place import place_at, place_in, place_in_slot, place_on
from agentic_env.agents.skills.result import SkillCode, SkillResult

__all__ = [
    "Detection", "Grasp", "GraspJudge", "SkillCode", "SkillIO", "SkillResult",
    "Target", "accepted_grasps", "close_drawer", "execute_grasp", "handle_pose", "locate",
    "look_from_above", "open_drawer", "outward_yaw",
    "pick", "place_at", "place_in", "place_in_slot", "place_on", "plan_grasps",
]
