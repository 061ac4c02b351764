"""MALLVI's roles: bounded re-asks on malformed answers, unusable answers blamed on the role,
typed move kinds, the Thinker shown its candidates drawn, the Descriptor's description in the
Decomposer's prompt."""

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
DRAWING = np.full((60, 80, 3), 90, np.uint8)


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
    "descriptor": lambda ctx: roles.describe_scene(ctx, OBS),
    "localizer": lambda ctx: roles.localize(ctx, OBS, "shoulder", "red-cube-1"),
    "thinker": lambda ctx: roles.think_pick(ctx, OBS, MOVE, [
        {"pose": POSE, "width": 0.04, "score": 0.9}], [DRAWING]),
    "reflector": lambda ctx: roles.reflect(ctx, OBS, OBS, MOVE, "OK: place done", None),
    "single_agent": lambda ctx: roles.plan_single(ctx, OBS, "put the red cube in the bin"),
}
ANSWERS = {
    "decomposer": {"subtasks": [{"kind": "place", "source": "red-cube-1",
                                 "destination": "blue-bin", "rotation_deg": 0}],
                   "reasoning": "one move"},
    "descriptor": {"objects": [{"name": "red-cube-1", "description": "a small red cube",
                                "position": "near left",
                                "relations": [{"relation": "left of", "object": "blue-bin"}]}],
                   "summary": "a cube beside a bin"},
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


def test_decomposed_moves_of_each_kind() -> None:
    answer = {"subtasks": [
        {"kind": "place", "source": "lemon-1", "destination": "bowl"},
        {"kind": "memory", "source": "lemon-1", "destination": "wherever it was"},
        {"kind": "memory", "source": "ball-1", "memory_of": "lemon-1"},
        {"kind": "table", "source": "ball-1", "destination": "the table top"},
        {"kind": "turn", "source": "mug-1", "rotation_deg": 30},
        {"kind": "turn", "source": "mug-1", "pose": "handle-left", "rotation_deg": 90},
        {"kind": "open_drawer", "source": "top-drawer"},
        {"kind": "close_drawer", "source": "top-drawer", "destination": "shut"}]}
    moves, _ = roles.decompose(context(Scripted(json.dumps(answer))), OBS, "x")
    assert [str(m) for m in moves] == [
        "move(lemon-1, bowl, 0)", "move(lemon-1, memory:previous location, 0)",
        "move(ball-1, memory:previous location of lemon-1, 0)", "move(ball-1, table, 0)",
        "move(mug-1, mug-1, 30)", "move(mug-1, mug-1, 90, handle-left)",
        "move(top-drawer, open, 0)", "move(top-drawer, closed, 0)"]
    assert [m.from_memory for m in moves] == [False, True, True] + [False] * 5
    assert [m.remembered for m in moves[1:3]] == ["lemon-1", "lemon-1"]
    assert [m.to_table for m in moves] == [False] * 3 + [True] + [False] * 4
    assert [m.is_turn for m in moves] == [False] * 4 + [True] * 2 + [False] * 2
    assert [m.drawer_state for m in moves[-2:]] == ["open", "closed"]
    # what a move does is its kind, not its names' spelling
    named_like_a_table = {"subtasks": [{"kind": "place", "source": "cup-1",
                                        "destination": "table"}]}
    (move,), _ = roles.decompose(context(Scripted(json.dumps(named_like_a_table))), OBS, "x")
    assert move.kind == "place" and not move.to_table


def test_unusable_answers_are_blamed_on_their_role() -> None:
    for empty in ({"kind": "place", "source": " ", "destination": "bowl"},
                  {"kind": "place", "source": "lemon-1", "destination": None},
                  {"kind": "turn", "source": "mug-1", "rotation_deg": 0}):
        with pytest.raises(RoleAnswerError) as bad:
            roles.decompose(context(Scripted(json.dumps({"subtasks": [empty]}))), OBS, "x")
        assert bad.value.role == "decomposer"
    out_of_range = {"decision": "SUCCESS", "pick_candidates": [3]}
    with pytest.raises(RoleAnswerError) as bad:
        roles.think_pick(context(Scripted(json.dumps(out_of_range))), OBS, MOVE,
                         [{"pose": POSE, "width": 0.04, "score": 0.9}], [DRAWING])
    assert bad.value.role == "thinker"
    no_point = {"decision": "SUCCESS", "place_mode": "point", "place_point": None}
    with pytest.raises(RoleAnswerError):
        roles.think_place(context(Scripted(json.dumps(no_point))), OBS, MOVE, "x", None)


def test_the_thinker_is_shown_the_candidates_drawn_and_numbered() -> None:
    backend = Scripted(json.dumps({"decision": "SUCCESS", "pick_candidates": [1, 0]}))
    drawings = [np.full((60, 80, 3), v, np.uint8) for v in (40, 200)]
    choice = roles.think_pick(context(backend), OBS, MOVE,
                              [{"pose": POSE, "width": 0.04, "score": s} for s in (0.9, 0.5)],
                              drawings)
    assert choice.order == (1, 0)
    (query,) = backend.queries
    assert [i.name for i in query.images] == ["shoulder_rgb", "grasp_candidates"]
    sheet = query.images[1].pixels
    assert sheet.shape == (60, 2 * 80 + 2, 3)
    assert np.all(sheet[55, 5] == 40) and np.all(sheet[55, 82 + 5] == 200)
    assert "sheet of\nthe 2 grasp candidates" in query.prompt and "0: grasp at" in query.prompt
    assert len(query.fields["candidates"]) == 2  # the sim-oracle still reads the poses
    with pytest.raises(ValueError):
        roles.think_pick(context(Scripted()), OBS, MOVE,
                         [{"pose": POSE, "width": 0.04, "score": 0.9}], [])


def test_the_descriptor_s_description_reaches_the_decomposer_s_prompt() -> None:
    backend = Scripted(json.dumps(ANSWERS["descriptor"]), json.dumps(ANSWERS["decomposer"]))
    ctx = context(backend)
    scene = roles.describe_scene(ctx, OBS)
    assert scene.names() == ["red-cube-1"]
    assert scene.objects[0].relations == (("left of", "blue-bin"),)
    roles.decompose(ctx, OBS, "put the red cube in the bin", scene)
    describing, decomposing = backend.queries
    assert describing.module == "descriptor" and describing.images[0].name == "shoulder_rgb"
    assert "- red-cube-1: a small red cube; at the near left of the table; left of blue-bin" \
        in decomposing.prompt
    assert decomposing.fields["scene_objects"] == ["red-cube-1"]


def test_a_thinker_failure_chooses_nothing_and_the_localizer_clips_pixels() -> None:
    failure = {"decision": "FAILURE", "pick_candidates": [0], "reasoning": "all miss"}
    choice = roles.think_pick(context(Scripted(json.dumps(failure))), OBS, MOVE,
                              [{"pose": POSE, "width": 0.04, "score": 0.9}], [DRAWING])
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
        {"kind": "open_drawer", "source": "top-drawer", "destination": "open",
         "rotation_deg": 0},
        {"kind": "table", "source": "spice-bottle-1", "destination": "table",
         "from_drawer": "top-drawer"},
        {"kind": "turn", "source": "red-box-1", "destination": "red-box-1", "rotation_deg": 90,
         "pose": "on-side", "from_drawer": None},
        {"kind": "turn", "source": "red-cube-1", "destination": "red-cube-1",
         "rotation_deg": -45},
        {"kind": "close_drawer", "source": "top-drawer", "destination": "closed",
         "pose": None}]}
    moves, _ = roles.decompose(context(Scripted(json.dumps(answer))), OBS, "x")
    assert [str(m) for m in moves] == [
        "move(top-drawer, open, 0)", "move(spice-bottle-1, table, 0) out of top-drawer",
        "move(red-box-1, red-box-1, 90, on-side)", "move(red-cube-1, red-cube-1, -45)",
        "move(top-drawer, closed, 0)"]
    assert [m.drawer_state for m in moves] == ["open", None, None, None, "closed"]
    assert [m.is_turn for m in moves] == [False, False, True, True, False]
    assert moves[1].from_drawer == "top-drawer" and moves[4].pose is None
    assert not Move("lemon-1", "lemon-1").is_turn  # a place (the default kind): not a turn
