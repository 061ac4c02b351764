"""ALRM's dry-run protocol: a symbolic robot that accepts every well-formed call and keeps
the PDDL state, so the trace and the world state can disagree."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from agentic_env.agents.alrm.judge import build_judge, disagrees, judge_with_panel
from agentic_env.agents.runtime.sandbox import run_program
from agentic_env.contract.workcell import SceneConfig
from agentic_env.envs.sim_env import SimEnv
from agentic_env.geometry.camera import azure_kinect_color, realsense_d405
from agentic_env.harness.dry_run import DryRunWorld
from agentic_env.oracle import judge_factory
from agentic_env.pddl.planning import PlanStep
from agentic_env.tasks.kitchen import KitchenConfig, KitchenTask
from agentic_env.tasks.subtasks import ground_truth_subtasks, subtasks_from_plan

OBJECTS = {"apple-1": "item", "duck-1": "item", "bin-left": "container",
           "bin-right": "container"}


def _sorting(*goal: str) -> DryRunWorld:
    return DryRunWorld("sorting", OBJECTS, ["hand-empty", "on-table apple-1", "on-table duck-1"],
                       goal or ["in apple-1 bin-left"], positions={"apple-1": (0.4, 0.1, 0.02)})


def test_every_well_formed_call_succeeds_but_only_possible_ones_change_the_world() -> None:
    world = _sorting()
    tools = world.tools()
    assert tools["get_objects"]() == ["apple-1", "duck-1"]
    assert tools["get_reference_names"]() == ["bin-left", "bin-right", "table"]
    assert tools["get_pose"]("apple-1") == [0.4, 0.1, 0.02]
    assert tools["pick"]("orange") == "Object orange not found"
    assert tools["pick"]("duck-1") == "The duck was successfully picked"
    assert tools["pick"]("apple-1") == "The apple was successfully picked"
    assert tools["place"]("bin-left") == "The duck was successfully placed at the bin left"
    assert [(entry.step, entry.applied) for entry in world.history] == [
        (PlanStep("pick", ("duck-1",)), True), (PlanStep("pick", ("apple-1",)), False),
        (PlanStep("place-in", ("duck-1", "bin-left")), True)]
    assert "(hand-empty)" in (world.history[1].reason or "")
    assert world.unmet_goals() == ("(in apple-1 bin-left)",)
    assert tools["move_to_home_pos"]() == "Moved to the home position"
    assert "open_drawer" not in tools


def test_a_sandboxed_program_solves_the_dry_run_task() -> None:
    world = _sorting()
    program = ("for name in get_objects():\n"
               "    if name.startswith('apple'):\n"
               "        print(pick(name))\n"
               "        print(place('bin-left'))\n"
               "move_to_home_pos()\n")
    result = run_program(program, world.tools())
    assert result.ok, result.error
    assert result.log == ("The apple was successfully picked\n"
                          "The apple was successfully placed at the bin left\n")
    assert [call.name for call in result.tool_calls] == [
        "get_objects", "pick", "place", "move_to_home_pos"]
    assert world.unmet_goals() == ()
    assert world.facts == {"hand-empty", "in apple-1 bin-left", "on-table duck-1"}


def test_place_actions_follow_the_target_type() -> None:
    world = DryRunWorld("stacking", {"red-cube-1": "red-cube", "blue-plate-1": "plate",
                                     "table": "object"}, ["hand-empty"], ["clear red-cube-1"])
    assert world.place_step("red-cube-1", "table") == PlanStep(
        "place-on-object", ("red-cube-1", "table"))
    assert world.place_step("red-cube-1", "blue-plate-1").name == "place-on-object"
    assert _sorting().place_step("duck-1", "table") == PlanStep("place-on-table", ("duck-1",))


def test_the_ground_truth_solves_a_kitchen_chore_in_the_dry_run(
    make_sim_env: Callable[..., SimEnv],
) -> None:
    small = SceneConfig(shoulder_camera=azure_kinect_color(64, 36),
                        wrist_camera=realsense_d405(64, 36))
    env = make_sim_env(task=KitchenTask(replace(KitchenConfig(), variant="A")), scene=small)
    env.reset(seed=0)
    world = DryRunWorld.from_task(env.task, env.scene_state)
    tools = world.tools()
    for subtask in ground_truth_subtasks(env.task, env.scene_state):
        if subtask.kind == "pick_and_place":
            tools["pick"](subtask.obj)
            tools["place"](subtask.destination)
        else:
            past = {"open": "opened", "close": "closed"}[subtask.kind]
            reply = tools[f"{subtask.kind}_drawer"](subtask.obj)
            assert reply == f"The top drawer was successfully {past}"
    assert all(entry.applied for entry in world.history)
    assert world.unmet_goals() == ()


def test_the_mock_lets_the_trace_judge_and_the_world_state_disagree() -> None:
    """The agent's claimed subtasks match the ground truth, every call said "successfully",
    but one pick happened while holding another object: the world never changed."""
    world = _sorting("in apple-1 bin-left", "in duck-1 bin-right")
    tools = world.tools()
    for call, arg in (("pick", "apple-1"), ("pick", "duck-1"), ("place", "bin-left"),
                      ("place", "bin-right")):
        assert "successfully" in tools[call](arg)
    truth = [s.text for s in subtasks_from_plan(
        [PlanStep("pick", ("apple-1",)), PlanStep("place-in", ("apple-1", "bin-left")),
         PlanStep("pick", ("duck-1",)), PlanStep("place-in", ("duck-1", "bin-right"))])]
    judges = [build_judge(f"sim-oracle?seed={seed}", oracle_factory=judge_factory)
              for seed in range(3)]
    claimed = judge_with_panel(judges, "Apple to the left bin, duck to the right.", truth, truth)
    happened = judge_with_panel(judges, "Apple to the left bin, duck to the right.", truth,
                                [s.text for s in subtasks_from_plan(world.applied_steps())])
    world_success = not world.unmet_goals()
    assert (claimed.score, happened.score, world_success) == (2.0, 1.0, False)
    assert disagrees(claimed.score, world_success)
    assert not disagrees(happened.score, world_success)
