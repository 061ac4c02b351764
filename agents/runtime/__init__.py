"""What every agent design stands on besides the skills: the episode's bookkeeping
(:class:`Episode`: events, limits, the robot-stop and first-failure rules), prompt loading,
one :class:`Manipulator` for named objects, and the model modules two or more agents share
(the detector and the grasp judgement)."""

from agentic_env.agents.runtime.detector import (
    detect,
    detection_from,
    detector_for,
    pointing_format,
    words_for,
)
from agentic_env.agents.runtime.episode import Episode, Limits, StopEpisodeError
from agentic_env.agents.runtime.grasp_judge import evaluate_grasp, grasp_judge
from agentic_env.agents.runtime.manipulator import Manipulator, Place
from agentic_env.agents.runtime.prompts import ask_json, camera_image, render_prompt

__all__ = ["Episode", "Limits", "Manipulator", "Place", "StopEpisodeError", "ask_json",
           "camera_image", "detect", "detection_from", "detector_for", "evaluate_grasp",
           "grasp_judge", "pointing_format", "render_prompt", "words_for"]
