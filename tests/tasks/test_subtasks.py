"""Ground-truth subtask sequences (ALRM) from PDDL plans: one object per subtask, in words."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.pddl.planning import PlanStep
from agentic_env.tasks.kitchen import DRAWER, KitchenConfig, KitchenTask
from agentic_env.tasks.subtasks import ground_truth_subtasks, object_words, subtasks_from_plan

SMALL_SCENE = SceneConfig(
    shoulder_camera=azure_kinect_color(64, 36), wrist_camera=realsense_d405(64, 36)
)


def _plan(*steps: str) -> list[PlanStep]:
    return [PlanStep.parse(step) for step in steps]


def test_pick_and_place_pairs_become_one_subtask_each() -> None:
    subtasks = subtasks_from_plan(_plan(
        "(pick apple-1)", "(place-in apple-1 bin-left)",
        "(pick-from duck-1 bin-left)", "(place-on-table duck-1)"))
    assert [s.text for s in subtasks] == [
        "Pick up the apple and place it in the bin left.",
        "Pick up the duck and place it on the table."]
    assert [(s.kind, s.obj, s.destination) for s in subtasks] == [
        ("pick_and_place", "apple-1", "bin-left"), ("pick_and_place", "duck-1", "table")]
    assert subtasks[0].steps == tuple(_plan("(pick apple-1)", "(place-in apple-1 bin-left)"))


def test_stacking_crossword_reorientation_and_drawer_phrases() -> None:
    texts = [s.text for s in subtasks_from_plan(_plan(
        "(pick red-cube-1 table)", "(place-on-object red-cube-1 blue-cube-1)",
        "(pick green-cube-1 red-cube-1)", "(place-on-object green-cube-1 table)",
        "(pick block-a)", "(place-in-slot block-a slot-3)",
        "(pick mug-1 upside-down)", "(place-in-pose mug-1 upright)",
        "(open-drawer top-drawer)", "(pick spice-bottle)",
        "(place-in-drawer spice-bottle top-drawer)", "(close-drawer top-drawer)"))]
    assert texts == [
        "Pick up the red cube and place it on the blue cube.",
        "Pick up the green cube and place it on the table.",
        "Pick up the block a and place it in slot 3.",
        "Pick up the mug and place it in the upright pose.",
        "Open the top drawer.",
        "Pick up the spice bottle and place it in the top drawer.",
        "Close the top drawer."]


def test_unpaired_steps_and_custom_words() -> None:
    subtasks = subtasks_from_plan(_plan("(pick lemon-1)", "(pick-from pear-1 bowl-1)",
                                        "(place-in pear-1 bowl-1)", "(place-on-table lemon-1)"),
                                  words={"bowl-1": "white bowl"})
    assert [(s.kind, s.text) for s in subtasks] == [
        ("pick", "Pick up the lemon."),
        ("pick_and_place", "Pick up the pear and place it in the white bowl."),
        ("place", "Place the lemon on the table.")]
    assert subtasks_from_plan([]) == []


def test_object_words_keep_the_index_only_when_needed() -> None:
    assert object_words(["apple-1", "apple-2", "red-cube-1", "slot-3", "top_drawer"]) == {
        "apple-1": "apple 1", "apple-2": "apple 2", "red-cube-1": "red cube",
        "slot-3": "slot 3", "top_drawer": "top drawer"}


def test_ground_truth_of_a_kitchen_chore(make_sim_env: Callable[..., SimEnv]) -> None:
    env = make_sim_env(task=KitchenTask(replace(KitchenConfig(), variant="A")),
                       scene=SMALL_SCENE)
    env.reset(seed=0)
    subtasks = ground_truth_subtasks(env.task, env.scene_state)
    assert [s.kind for s in subtasks][-1] == "close"
    assert subtasks[-1].obj == DRAWER
    assert any(s.kind == "pick_and_place" and s.destination == DRAWER for s in subtasks)
    assert all(len({arg for step in s.steps for arg in step.args[:1]}) == 1 for s in subtasks)
