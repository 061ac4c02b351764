"""Ground-truth subtask sequences (ALRM) from PDDL plans: one object per subtask, in words,
and the orderings the plan's PDDL conditions impose on them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.pddl.planning import PlanStep, load_domain, problem_text, step_conditions
from agentic_env.tasks.kitchen import DRAWER, KitchenConfig, KitchenTask
from agentic_env.tasks.subtasks import (
    ground_truth_dependencies,
    ground_truth_subtasks,
    object_words,
    subtask_dependencies,
    subtasks_from_plan,
)

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
    after = ground_truth_dependencies(env.task, env.scene_state, subtasks)
    into = [i for i, s in enumerate(subtasks) if s.destination == DRAWER]
    assert len(after) == len(subtasks) and set(into) <= set(after[-1])


def _dependencies(domain: str, objects: dict[str, str], init: list[str],
                  *steps: str) -> list[tuple[int, ...]]:
    problem = problem_text(domain, "p", objects, init, [])
    text = load_domain(domain)
    return subtask_dependencies(subtasks_from_plan(_plan(*steps)),
                                lambda step: step_conditions(text, problem, step))


def test_sorting_subtasks_may_run_in_any_order() -> None:
    """hand-empty, needed and restored by every pick and place, orders nothing."""
    assert _dependencies("sorting", {"apple-1": "item", "duck-1": "item", "bin": "container"},
                         ["hand-empty", "on-table apple-1", "on-table duck-1"],
                         "(pick apple-1)", "(place-in apple-1 bin)",
                         "(pick duck-1)", "(place-in duck-1 bin)") == [(), ()]


def test_a_drawer_is_opened_before_and_closed_after_what_goes_in() -> None:
    assert _dependencies(
        "kitchen", {"lemon-1": "item", "pear-1": "item", "top-drawer": "drawer"},
        ["hand-empty", "on-table lemon-1", "on-table pear-1", "drawer-closed top-drawer"],
        "(open-drawer top-drawer)", "(pick lemon-1)", "(place-in-drawer lemon-1 top-drawer)",
        "(pick pear-1)", "(place-in-drawer pear-1 top-drawer)", "(close-drawer top-drawer)",
    ) == [(), (0,), (0,), (0, 1, 2)]


def test_a_stack_is_built_from_the_bottom() -> None:
    assert _dependencies(
        "stacking", {"red-cube-1": "purple-cube", "green-cube-1": "green-cube",
                     "blue-cube-1": "blue-cube", "felt-mat": "mat"},
        ["hand-empty", "clear red-cube-1", "clear green-cube-1", "clear blue-cube-1",
         "on-top-of red-cube-1 felt-mat", "on-top-of green-cube-1 felt-mat",
         "on-top-of blue-cube-1 felt-mat"],
        "(pick green-cube-1 felt-mat)", "(place-on-object green-cube-1 red-cube-1)",
        "(pick blue-cube-1 felt-mat)", "(place-on-object blue-cube-1 green-cube-1)",
    ) == [(), (0,)]
