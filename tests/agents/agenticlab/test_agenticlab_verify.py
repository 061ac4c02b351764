"""The VLM's check of detections made by another detector (AgenticLab Sec. IV: "LangSAM for
segmentation with subsequent VLM verification for object correctness"), end to end on the
sim: a detector model that marks a wrong object first is caught by the VLM and asked again;
a pipeline whose VLM detects itself is not checked."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from agentic_env.agents.agenticlab.modules import ModuleContext
from agentic_env.agents.agenticlab.pipeline import AgentConfig, AgenticLabAgent
from agentic_env.agents.base import AgentReport, TaskContext
from agentic_env.agents.models.base import CallRecord, Completion, ModelQuery, Usage
from agentic_env.agents.models.registry import ModelRouter
from agentic_env.agents.runtime import Limits
from agentic_env.envs.sim_env import SimEnv
from agentic_env.harness.robot_io import EnvRobotIO
from agentic_env.oracle import SimOracle
from agentic_env.oracle.naming import thing_geoms
from agentic_env.pddl.planning import load_domain


class WrongFirstDetector:
    """A detector model of its own (another name than the VLM's) that marks another object
    than the one asked for on its first ``wrong`` answers, then answers as the sim-oracle."""

    name = model = "segmenter"

    def __init__(self, env: SimEnv, wrong: int) -> None:
        self.env, self.wrong, self.inner = env, wrong, SimOracle(env)

    def complete(self, query: ModelQuery) -> Completion:
        if self.wrong <= 0:
            return self.inner.complete(query)
        self.wrong -= 1
        target = str(query.fields["target"])
        segmentation = self.env.segmentation(str(query.fields["camera"]))
        other = next(n for n in self.env.task.pddl_objects() if n != target
                     and np.isin(segmentation, thing_geoms(self.env, n)).sum() > 50)
        rows, cols = np.nonzero(np.isin(segmentation, thing_geoms(self.env, other)))
        middle = len(rows) // 2
        answer = {"found": True, "point": [int(cols[middle]), int(rows[middle])],
                  "box": None, "coordinates": "pixels", "reasoning": "there"}
        return Completion(json.dumps(answer), Usage(0, 0, 0.5))


def _run(env: SimEnv, detector: Any | None) -> tuple[AgentReport, list[CallRecord]]:
    _, info = env.reset(seed=0)
    calls: list[CallRecord] = []
    vlm = SimOracle(env)  # judges without error
    router = ModelRouter(vlm, {"detector": detector} if detector is not None else None)
    agent = AgenticLabAgent(ModuleContext(router, None, calls.append),
                            AgentConfig(limits=Limits(max_actions=0)))
    report = agent.run(EnvRobotIO(env), info["instruction"], TaskContext(load_domain("sorting")))
    vlm.close()
    return report, calls


def _checks(report: AgentReport) -> list[dict[str, Any]]:
    return [e for e in report.events if e["kind"] == "detection_check"]


def test_a_wrong_detection_is_rejected_by_the_vlm_and_asked_again(sorting_env) -> None:
    report, calls = _run(sorting_env, WrongFirstDetector(sorting_env, wrong=1))
    checks = _checks(report)
    assert [(c["attempt"], c["accepted"]) for c in checks[:2]] == [(1, False), (2, True)]
    assert checks[0]["target"] == checks[1]["target"]
    asked = [c for c in calls if c.query.template == "detection_check"]
    assert asked and all(c.query.module == "grasp" and c.model == "sim-oracle" for c in asked)
    assert asked[0].query.images[0].name == "shoulder_detection"
    # the image the VLM judges is the detector's, with the mark drawn on it
    seen = next(c for c in calls if c.query.module == "detector").query.images[0].pixels
    judged = asked[0].query.images[0].pixels
    assert judged.shape == seen.shape and not np.array_equal(judged, seen)


def test_a_target_rejected_on_every_re_detection_counts_as_not_seen(sorting_env) -> None:
    report, _ = _run(sorting_env, WrongFirstDetector(sorting_env, wrong=2))
    checks = _checks(report)
    assert [(c["attempt"], c["accepted"]) for c in checks[:2]] == [(1, False), (2, False)]
    # not seen in the shoulder view: the skills look again from elsewhere (an arm move,
    # which the zero action budget refuses)
    assert report.failure in ("limits", "detector")


def test_a_vlm_that_detects_itself_is_not_checked(sorting_env) -> None:
    report, calls = _run(sorting_env, None)
    assert not _checks(report)
    assert not [c for c in calls if c.query.template == "detection_check"]
    assert any(c.query.module == "detector" for c in calls)
