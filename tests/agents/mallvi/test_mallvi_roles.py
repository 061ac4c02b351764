"""MALLVI's roles: bounded re-asks on malformed answers, unusable answers blamed on the role."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agentic_env.agents.mallvi import roles
from agentic_env.agents.mallvi.roles import Move, RoleAnswerError
from agentic_env.agents.models.base import Completion, ModelQuery, Usage
from agentic_env.agents.models.context import ModuleContext, ModuleFailedError
from agentic_env.agents.models.registry import ModelRouter

OBS = {"shoulder_rgb": np.zeros((48, 64, 3), np.uint8),
       "wrist_rgb": np.zeros((48, 64, 3), np.uint8)}
MOVE = Move("red-cube-1", "blue-bin")
POSE = np.eye(4)


class Scripted:
    """Answers with the scripted texts in order; records the queries."""

    name = "scripted"

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)
        self.queries: list[ModelQuery] = []

    def complete(self, query: ModelQuery) -> Completion:
        self.queries.append(query)
        return Completion(self.texts.pop(0), Usage())


def context(backend: Scripted, retries: int = 2) -> ModuleContext:
    return ModuleContext(ModelRouter(backend), retries=retries)


GOOD = {
    "decomposer": lambda ctx: roles.decompose(ctx, OBS, "put the red cube in the bin"),
    "localizer": lambda ctx: roles.localize(ctx, OBS, "shoulder", "red-cube-1"),
    "thinker": lambda ctx: roles.think_pick(ctx, OBS, MOVE, [
        {"pose": POSE, "width": 0.04, "score": 0.9}]),
    "reflector": lambda ctx: roles.reflect(ctx, OBS, OBS, MOVE, "OK: place done", None),
    "single_agent": lambda ctx: roles.plan_single(ctx, OBS, "put the red cube in the bin"),
}
ANSWERS = {
    "decomposer": {"subtasks": [{"source": "red-cube-1", "destination": "blue-bin",
                                 "rotation_deg": 0}], "reasoning": "one move"},
    "localizer": {"found": True, "point": [10, 20], "box": [5, 15, 30, 40]},
    "thinker": {"decision": "SUCCESS", "pick_candidates": [0]},
    "reflector": {"task_complete": True, "verification_result": "in the bin",
                  "confidence": 0.8},
    "single_agent": {"plan": [{"source": "red-cube-1", "destination": "blue-bin",
                               "pick_point": [10, 20], "place_point": [30, 30],
                               "place_mode": "in"}]},
}


@pytest.mark.parametrize("role", sorted(GOOD))
def test_a_malformed_answer_is_re_asked_and_the_next_one_used(role: str) -> None:
    backend = Scripted("I think the cube is red.", json.dumps({"wrong": 1}),
                       json.dumps(ANSWERS[role]))
    result = GOOD[role](context(backend))
    assert len(backend.queries) == 3
    assert all(q.module == role for q in backend.queries)
    assert "YOUR PREVIOUS ANSWER WAS REJECTED" in backend.queries[-1].prompt
    assert result is not None


@pytest.mark.parametrize("role", sorted(GOOD))
def test_malformed_answers_past_the_bound_fail_the_role(role: str) -> None:
    backend = Scripted("no", "still no", "nope", json.dumps(ANSWERS[role]))
    with pytest.raises(ModuleFailedError) as failed:
        GOOD[role](context(backend, retries=1))
    assert failed.value.module == role
    assert len(backend.queries) == 2  # one answer and one re-ask, no more


def test_decomposed_moves_and_a_memory_destination() -> None:
    answer = {"subtasks": [{"source": "lemon-1", "destination": "bowl"},
                           {"source": "lemon-1", "destination": "memory:previous location",
                            "rotation_deg": 0}]}
    moves, _ = roles.decompose(context(Scripted(json.dumps(answer))), OBS, "x")
    assert [str(m) for m in moves] == ["move(lemon-1, bowl, 0)",
                                       "move(lemon-1, memory:previous location, 0)"]
    assert [m.from_memory for m in moves] == [False, True]


def test_unusable_answers_are_blamed_on_their_role() -> None:
    empty = {"subtasks": [{"source": " ", "destination": "bowl"}]}
    with pytest.raises(RoleAnswerError) as bad:
        roles.decompose(context(Scripted(json.dumps(empty))), OBS, "x")
    assert bad.value.role == "decomposer"
    out_of_range = {"decision": "SUCCESS", "pick_candidates": [3]}
    with pytest.raises(RoleAnswerError) as bad:
        roles.think_pick(context(Scripted(json.dumps(out_of_range))), OBS, MOVE,
                         [{"pose": POSE, "width": 0.04, "score": 0.9}])
    assert bad.value.role == "thinker"
    no_point = {"decision": "SUCCESS", "place_mode": "point", "place_point": None}
    with pytest.raises(RoleAnswerError):
        roles.think_place(context(Scripted(json.dumps(no_point))), OBS, MOVE, "x", None)


def test_a_thinker_failure_chooses_nothing_and_the_localizer_clips_pixels() -> None:
    failure = {"decision": "FAILURE", "pick_candidates": [0], "reasoning": "all miss"}
    choice = roles.think_pick(context(Scripted(json.dumps(failure))), OBS, MOVE,
                              [{"pose": POSE, "width": 0.04, "score": 0.9}])
    assert choice.order == ()
    far = {"found": True, "point": [500, -3], "box": [60, 40, 90, 90]}
    seen = roles.localize(context(Scripted(json.dumps(far))), OBS, "shoulder", "x-1")
    assert seen is not None and seen.point == (63, 0) and seen.box == (60, 40, 64, 48)
    unseen = {"found": False, "point": None}
    assert roles.localize(context(Scripted(json.dumps(unseen))), OBS, "wrist", "x") is None


def test_the_reflector_sees_before_and_after_images_and_the_actor_report() -> None:
    backend = Scripted(json.dumps({"task_complete": False, "confidence": 3.0}))
    verdict = roles.reflect(context(backend), OBS, OBS, MOVE, "OK: place done", (0.4, 0.1))
    query = backend.queries[0]
    assert [i.name for i in query.images] == ["before_shoulder_rgb", "after_shoulder_rgb",
                                              "after_wrist_rgb"]
    assert "OK: place done" in query.prompt and str(MOVE) in query.prompt
    assert query.fields["place_point"] == [0.4, 0.1]
    assert not verdict.complete and verdict.confidence == 1.0


def test_turns_and_drawer_moves_are_decomposed_as_moves() -> None:
    answer = {"subtasks": [
        {"source": "top-drawer", "destination": "open", "rotation_deg": 0},
        {"source": "spice-bottle-1", "destination": "table", "from_drawer": "top-drawer"},
        {"source": "red-box-1", "destination": "red-box-1", "rotation_deg": 90,
         "pose": "on-side", "from_drawer": None},
        {"source": "red-cube-1", "destination": "red-cube-1", "rotation_deg": -45},
        {"source": "top-drawer", "destination": "closed", "pose": " "}]}
    moves, _ = roles.decompose(context(Scripted(json.dumps(answer))), OBS, "x")
    assert [str(m) for m in moves] == [
        "move(top-drawer, open, 0)", "move(spice-bottle-1, table, 0) out of top-drawer",
        "move(red-box-1, red-box-1, 90, on-side)", "move(red-cube-1, red-cube-1, -45)",
        "move(top-drawer, closed, 0)"]
    assert [m.drawer_state for m in moves] == ["open", None, None, None, "closed"]
    assert [m.is_turn for m in moves] == [False, False, True, True, False]
    assert moves[1].from_drawer == "top-drawer" and moves[4].pose is None
    assert not Move("lemon-1", "lemon-1").is_turn  # no rotation, no pose: not a turn
