"""Symbolic planning layer: domains, problem text, PDDL errors, Fast Downward, plan simulation."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentic_env.errors import AgenticEnvError, InvalidConfigError
from agentic_env.pddl import planning
from agentic_env.pddl.planning import (
    PDDLError,
    PlanningTimeoutError,
    PlanNotFoundError,
    PlanStep,
    domain_names,
    goal_literals,
    load_domain,
    problem_text,
    simulate,
    solve,
    step_conditions,
    validate,
)

# The paper's Fig. 10 problem, rewritten for the exact Fig. 9 domain: Fig. 10 types its plates
# pink-plate / turquoise-plate / cream-plate, which Fig. 9 does not declare (the paper's task
# parser had the model add them to an "updated domain"); here they are of the domain's type
# plate. The cubes keep their colour subtypes, which Fig. 9 declares. The init and goal are
# verbatim (the goal is green on the plate, then yellow, orange and blue, as in the figure's
# :goal, which differs from its caption's order).
FIG10_PROBLEM = """\
(define (problem stacking-stack-cubes-on-pink-plate)
  (:domain stacking)

  (:objects
    green-cube-1 - green-cube
    yellow-cube-1 - yellow-cube
    orange-cube-1 - orange-cube
    blue-cube-1 - blue-cube
    pink-plate-1 - plate
    turquoise-plate-1 - plate
    cream-plate-1 - plate
  )

  (:init
    (hand-empty)
    (on-top-of yellow-cube-1 blue-cube-1)
    (on-top-of blue-cube-1 cream-plate-1)
    (on-top-of green-cube-1 orange-cube-1)
    (on-top-of orange-cube-1 turquoise-plate-1)
    (clear yellow-cube-1)
    (clear green-cube-1)
    (clear pink-plate-1)
  )

  (:goal
    (and
      (on-top-of green-cube-1 pink-plate-1)
      (on-top-of yellow-cube-1 green-cube-1)
      (on-top-of orange-cube-1 yellow-cube-1)
      (on-top-of blue-cube-1 orange-cube-1)
    )
  )
)
"""

FIG10_GOAL = (
    "on-top-of green-cube-1 pink-plate-1",
    "on-top-of yellow-cube-1 green-cube-1",
    "on-top-of orange-cube-1 yellow-cube-1",
    "on-top-of blue-cube-1 orange-cube-1",
)

# One small problem per domain, with the length of its optimal plan.
DOMAIN_PROBLEMS: dict[str, tuple[str, int]] = {
    # Table V "Sort": fruit into the white bin, everything else into the blue bin.
    "sorting": (
        """(define (problem sort-fruit-white-others-blue) (:domain sorting)
  (:objects apple-1 banana-1 ball-1 toy-car-1 - item white-bin-1 blue-bin-1 - container)
  (:init (hand-empty) (on-table apple-1) (on-table banana-1) (in ball-1 white-bin-1)
         (on-table toy-car-1))
  (:goal (and (in apple-1 white-bin-1) (in banana-1 white-bin-1)
              (in ball-1 blue-bin-1) (in toy-car-1 blue-bin-1))))""",
        8,  # 4 items x (pick + place); the ball comes out of the white bin with pick-from
    ),
    # "CAT" on a 3-slot board whose middle slot holds a wrong block.
    "crossword": (
        """(define (problem crossword-cat) (:domain crossword)
  (:objects block-c block-a block-t block-x - block slot-1 slot-2 slot-3 - slot)
  (:init (hand-empty) (on-table block-c) (on-table block-a) (on-table block-t)
         (in-slot block-x slot-2) (slot-empty slot-1) (slot-empty slot-3))
  (:goal (and (in-slot block-c slot-1) (in-slot block-a slot-2) (in-slot block-t slot-3))))""",
        8,  # x out of slot 2 onto the table (2) + 3 blocks into slots (6)
    ),
    "reorientation": (
        """(define (problem turn-mug-and-bottle) (:domain reorientation)
  (:objects mug-1 bottle-1 - item upright on-side handle-left handle-right - pose)
  (:init (hand-empty) (in-pose mug-1 handle-left) (in-pose bottle-1 on-side))
  (:goal (and (in-pose mug-1 handle-right) (in-pose bottle-1 upright))))""",
        4,
    ),
    # Table V "Kitchen B": snack into the top drawer, spice bottle from the drawer to the
    # table, drawer closed.
    "kitchen": (
        """(define (problem kitchen-b) (:domain kitchen)
  (:objects blue-snack-pack-1 spice-bottle-1 - item top-drawer - drawer)
  (:init (hand-empty) (on-table blue-snack-pack-1) (in-drawer spice-bottle-1 top-drawer)
         (drawer-closed top-drawer))
  (:goal (and (in-drawer blue-snack-pack-1 top-drawer) (on-table spice-bottle-1)
              (drawer-closed top-drawer))))""",
        6,  # open, pick-from-drawer, place-on-table, pick, place-in-drawer, close
    ),
    "stacking": (FIG10_PROBLEM, 8),
}


@pytest.fixture(scope="module")
def stacking() -> str:
    return load_domain("stacking")


def _with_goal(goal: str) -> str:
    """The Fig. 10 problem with another goal."""
    return FIG10_PROBLEM[: FIG10_PROBLEM.index("(:goal")] + f"(:goal {goal}))\n"


# --------------------------------------------------------------------------- PlanStep


def test_plan_step_text_round_trip() -> None:
    step = PlanStep("pick", ("green-cube-1", "orange-cube-1"))
    assert str(step) == "(pick green-cube-1 orange-cube-1)"
    assert PlanStep.parse(str(step)) == step
    assert PlanStep.parse("(pick green-cube-1 orange-cube-1);") == step  # paper Fig. 11
    assert PlanStep.parse("pick(green-cube-1, orange-cube-1)") == step  # unified-planning
    assert PlanStep.parse("  (PICK Green-Cube-1 orange-cube-1) ") == step
    assert str(PlanStep("open-drawer", ("top-drawer",))) == "(open-drawer top-drawer)"
    assert str(PlanStep("home")) == "(home)"


@pytest.mark.parametrize("text", ["", "()", "(pick a ?b)", "(pick a.b)"])
def test_plan_step_parse_rejects_malformed(text: str) -> None:
    with pytest.raises(PDDLError, match="pick a b"):
        PlanStep.parse(text)


# --------------------------------------------------------------------------- domains


def test_domains_are_listed_and_unknown_names_listed_in_error() -> None:
    assert domain_names() == ["crossword", "kitchen", "reorientation", "sorting", "stacking"]
    with pytest.raises(InvalidConfigError, match="crossword, kitchen, reorientation"):
        load_domain("stack")


def test_stacking_domain_is_the_papers_fig9(stacking: str) -> None:
    body = stacking[stacking.index("(define") :]
    assert "(:types cube cloth plate bowl mat paper - object" in body
    assert "purple-cube blue-cube orange-cube yellow-cube green-cube - cube)" in body
    for action in ("(:action pick", "(:action place-on-object"):
        assert body.count(action) == 1
    assert body.count("(:action") == 2


@pytest.mark.parametrize("task", sorted(DOMAIN_PROBLEMS))
def test_each_domain_solves_a_small_problem(task: str) -> None:
    problem, optimal_length = DOMAIN_PROBLEMS[task]
    domain = load_domain(task)
    validate(domain, problem)
    plan = solve(domain, problem)
    assert len(plan) == optimal_length
    result = simulate(domain, problem, plan)
    assert result.goal_reached
    assert result.unmet_goals == ()
    assert "hand-empty" in result.facts


# --------------------------------------------------------------------------- Fig. 10


def test_fig10_problem_is_solved_optimally_and_reaches_goal(stacking: str) -> None:
    plan = solve(stacking, FIG10_PROBLEM)
    # Each of the 4 cubes is moved once (pick + place): green onto the pink plate first, then
    # yellow, orange and blue, each onto the previous one. 8 steps is the minimum, since every
    # cube has to move at least once. (The paper's Fig. 11 plan, 14 steps, is for a different
    # initial state and goal.)
    assert [str(s) for s in plan] == [
        "(pick green-cube-1 orange-cube-1)",
        "(place-on-object green-cube-1 pink-plate-1)",
        "(pick yellow-cube-1 blue-cube-1)",
        "(place-on-object yellow-cube-1 green-cube-1)",
        "(pick orange-cube-1 turquoise-plate-1)",
        "(place-on-object orange-cube-1 yellow-cube-1)",
        "(pick blue-cube-1 cream-plate-1)",
        "(place-on-object blue-cube-1 orange-cube-1)",
    ]
    result = simulate(stacking, FIG10_PROBLEM, plan)
    assert result.goal_reached
    assert set(FIG10_GOAL) <= result.facts
    assert {"hand-empty", "clear blue-cube-1", "clear cream-plate-1"} <= result.facts
    assert not any(f.startswith("holding") for f in result.facts)


def test_satisficing_configuration_also_solves_fig10(stacking: str) -> None:
    plan = solve(stacking, FIG10_PROBLEM, optimal=False)
    assert simulate(stacking, FIG10_PROBLEM, plan).goal_reached
    assert len(plan) >= 8


def test_problem_text_builds_the_fig10_problem(stacking: str) -> None:
    objects = {
        "green-cube-1": "green-cube",
        "yellow-cube-1": "yellow-cube",
        "orange-cube-1": "orange-cube",
        "blue-cube-1": "blue-cube",
        "pink-plate-1": "plate",
        "turquoise-plate-1": "plate",
        "cream-plate-1": "plate",
    }
    init = [
        "hand-empty",
        "on-top-of yellow-cube-1 blue-cube-1",
        "(on-top-of blue-cube-1 cream-plate-1)",  # parenthesised facts pass through
        "on-top-of green-cube-1 orange-cube-1",
        "on-top-of orange-cube-1 turquoise-plate-1",
        "clear yellow-cube-1",
        "clear green-cube-1",
        "clear pink-plate-1",
    ]
    text = problem_text("stacking", "stacking-stack-cubes-on-pink-plate", objects, init, FIG10_GOAL)
    assert text == FIG10_PROBLEM
    assert solve(stacking, text) == solve(stacking, FIG10_PROBLEM)


def test_problem_text_rejects_bad_names() -> None:
    with pytest.raises(PDDLError, match="'red cube'"):
        problem_text("stacking", "p", {"red cube": "cube"}, [], [])
    with pytest.raises(PDDLError, match="empty fact"):
        problem_text("stacking", "p", {"a": "cube"}, ["  "], [])


def test_goal_already_true_gives_empty_plan(stacking: str) -> None:
    assert solve(stacking, _with_goal("(on-top-of yellow-cube-1 blue-cube-1)")) == []


def test_solve_prints_nothing(stacking: str, capfd: pytest.CaptureFixture[str]) -> None:
    solve(stacking, FIG10_PROBLEM)
    captured = capfd.readouterr()
    assert captured.out == ""
    assert captured.err == ""


def test_a_problem_is_planned_once_under_any_name(stacking: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    plan = solve(stacking, FIG10_PROBLEM)
    expected = list(plan)
    plan.clear()  # the caller's list is its own
    renamed = FIG10_PROBLEM.replace("stacking-stack-cubes-on-pink-plate", "another-name")
    monkeypatch.setattr(planning, "_solve", lambda *args: pytest.fail("planned again"))
    assert solve(stacking.strip(), renamed + "\n") == expected
    assert len(expected) == 8


def test_a_text_is_parsed_once_for_validation_steps_and_goal(stacking: str) -> None:
    planning._parse.cache_clear()
    validate(stacking, FIG10_PROBLEM)
    step_conditions(stacking, FIG10_PROBLEM, PlanStep("pick", ("yellow-cube-1", "blue-cube-1")))
    assert goal_literals(stacking, FIG10_PROBLEM)[0] == "(on-top-of green-cube-1 pink-plate-1)"
    info = planning._parse.cache_info()
    assert (info.misses, info.hits) == (1, 2)


# --------------------------------------------------------------------------- no plan


@pytest.mark.parametrize("optimal", [True, False])
@pytest.mark.parametrize(
    "goal",
    [
        "(on-top-of green-cube-1 green-cube-1)",  # a cube on itself
        # two cubes directly on the same cube
        "(and (on-top-of green-cube-1 blue-cube-1) (on-top-of yellow-cube-1 blue-cube-1))",
        # something on the blue cube, which must stay clear
        "(and (on-top-of green-cube-1 blue-cube-1) (clear blue-cube-1))",
    ],
)
def test_impossible_goal_raises_plan_not_found(stacking: str, goal: str, optimal: bool) -> None:
    with pytest.raises(PlanNotFoundError, match="proved"):
        solve(stacking, _with_goal(goal), optimal=optimal)


def test_timeout_raises_planning_timeout(stacking: str) -> None:
    with pytest.raises(PlanningTimeoutError, match="within 0.01 s"):
        solve(stacking, FIG10_PROBLEM, timeout=0.01)


# --------------------------------------------------------------------------- PDDL errors


def test_syntax_error_names_line_and_column(stacking: str) -> None:
    broken = FIG10_PROBLEM.replace("(:init", "(:inti")
    with pytest.raises(PDDLError) as info:
        validate(stacking, broken)
    message = str(info.value)
    assert message.startswith("problem PDDL syntax error at line 14, column 4")
    assert "(:inti" in message  # the offending line is quoted


def test_unclosed_parenthesis_is_reported(stacking: str) -> None:
    broken = FIG10_PROBLEM.replace("(clear pink-plate-1)", "(clear pink-plate-1")
    with pytest.raises(PDDLError, match="end of the text.*parenthesis"):
        solve(stacking, broken)


def test_unknown_object_lists_declared_objects(stacking: str) -> None:
    broken = FIG10_PROBLEM.replace(
        "(on-top-of yellow-cube-1 green-cube-1)", "(on-top-of yellow-cube-1 red-cube-1)"
    )
    with pytest.raises(PDDLError) as info:
        solve(stacking, broken)
    message = str(info.value)
    assert "problem PDDL error at line 28, column 32" in message
    assert "'red-cube-1' is neither a declared object nor a predicate" in message
    assert "Declared objects: green-cube-1, yellow-cube-1" in message
    assert "(on-top-of ?o1 - object ?o2 - object)" in message


def test_unknown_predicate_and_wrong_arity(stacking: str) -> None:
    with pytest.raises(PDDLError, match="'handempty' is neither"):
        validate(stacking, FIG10_PROBLEM.replace("(hand-empty)", "(handempty)"))
    with pytest.raises(PDDLError, match="holding has arity 1 but 0"):
        validate(stacking, FIG10_PROBLEM.replace("(hand-empty)", "(holding)"))


def test_papers_fig10_types_are_undeclared_in_fig9(stacking: str) -> None:
    """Fig. 10 verbatim types its plates pink-plate etc., which Fig. 9 lacks."""
    verbatim = FIG10_PROBLEM.replace("pink-plate-1 - plate", "pink-plate-1 - pink-plate")
    with pytest.raises(PDDLError, match="undeclared type 'pink-plate'.*plate, purple-cube"):
        validate(stacking, verbatim)


def test_type_error_names_the_predicate_signature() -> None:
    problem = DOMAIN_PROBLEMS["sorting"][0].replace("(on-table apple-1)", "(on-table white-bin-1)")
    with pytest.raises(PDDLError) as info:
        validate(load_domain("sorting"), problem)
    message = str(info.value)
    assert "on-table(white-bin-1)" in message
    assert "(on-table ?o - item)" in message
    assert "white-bin-1 is of type container" in message


def test_domain_errors_are_attributed_to_the_domain(stacking: str) -> None:
    with pytest.raises(PDDLError, match=r"^domain PDDL error at line \d+, column \d+: .*targt"):
        validate(stacking.replace("(clear ?target))", "(clear ?targt))"), FIG10_PROBLEM)
    with pytest.raises(PDDLError, match="^domain PDDL syntax error"):
        validate(stacking + ")", FIG10_PROBLEM)


def test_domain_name_mismatch_is_accepted(stacking: str) -> None:
    """The paper's Fig. 10 problem names (:domain vlmrobobench) for the stacking domain."""
    validate(stacking, FIG10_PROBLEM.replace("(:domain stacking)", "(:domain vlmrobobench)"))


def test_errors_share_the_package_base_class() -> None:
    assert issubclass(PDDLError, AgenticEnvError)
    assert issubclass(PlanNotFoundError, AgenticEnvError)


# --------------------------------------------------------------------------- simulate


def test_simulate_partial_plan_reports_unmet_goals(stacking: str) -> None:
    plan = solve(stacking, FIG10_PROBLEM)
    result = simulate(stacking, FIG10_PROBLEM, plan[:3])
    assert not result.goal_reached
    assert result.unmet_goals == (
        "(on-top-of yellow-cube-1 green-cube-1)",
        "(on-top-of orange-cube-1 yellow-cube-1)",
        "(on-top-of blue-cube-1 orange-cube-1)",
    )
    assert "holding yellow-cube-1" in result.facts
    assert "hand-empty" not in result.facts


def test_simulate_accepts_text_steps(stacking: str) -> None:
    plan = [str(step) + ";" for step in solve(stacking, FIG10_PROBLEM)]
    assert simulate(stacking, FIG10_PROBLEM, plan).goal_reached


def test_simulate_reports_the_failing_precondition(stacking: str) -> None:
    plan = ["(pick green-cube-1 orange-cube-1)", "(pick yellow-cube-1 blue-cube-1)"]
    with pytest.raises(
        PDDLError,
        match=r"plan step 2 \(pick yellow-cube-1 blue-cube-1\): .*do not hold: \(hand-empty\)",
    ):
        simulate(stacking, FIG10_PROBLEM, plan)
    # picking a covered cube: (clear orange-cube-1) and the wrong support both fail
    with pytest.raises(PDDLError, match=r"\(clear orange-cube-1\) \(on-top-of orange-cube-1 pink"):
        simulate(stacking, FIG10_PROBLEM, ["(pick orange-cube-1 pink-plate-1)"])


def test_simulate_rejects_unknown_actions_objects_and_arity(stacking: str) -> None:
    with pytest.raises(PDDLError, match=r"unknown action 'stack'.*place-on-object \?obj"):
        simulate(stacking, FIG10_PROBLEM, ["(stack green-cube-1 pink-plate-1)"])
    with pytest.raises(PDDLError, match="unknown object 'red-cube-1'.*green-cube-1"):
        simulate(stacking, FIG10_PROBLEM, ["(pick red-cube-1 orange-cube-1)"])
    with pytest.raises(PDDLError, match="pick takes 2 argument"):
        simulate(stacking, FIG10_PROBLEM, ["(pick green-cube-1)"])


def test_simulate_rejects_argument_of_wrong_type() -> None:
    problem = DOMAIN_PROBLEMS["sorting"][0]
    with pytest.raises(PDDLError, match=r"\?obj of pick must be of type item, but white-bin-1"):
        simulate(load_domain("sorting"), problem, ["(pick white-bin-1)"])


def test_kitchen_drawer_must_be_open_to_reach_into() -> None:
    problem = DOMAIN_PROBLEMS["kitchen"][0]
    with pytest.raises(PDDLError, match=r"do not hold: \(drawer-open top-drawer\)"):
        simulate(load_domain("kitchen"), problem, ["(pick-from-drawer spice-bottle-1 top-drawer)"])


# --------------------------------------------------------------------------- import cost


def test_importing_the_module_does_not_import_unified_planning() -> None:
    code = (
        "import sys, agentic_env.pddl.planning, agentic_env.tasks.score; "
        "print('unified_planning' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False"



def test_parsing_keeps_no_caller_alive(stacking: str) -> None:
    """The PDDL parser's packrat memo (switched on process-wide by unified-planning) holds
    exceptions whose tracebacks reach the caller's frames; the memo is emptied after each
    parse, so what the caller held (an episode's env, its frames) dies with the caller."""
    import gc
    import weakref

    class Held:
        pass

    def caller() -> weakref.ref:
        held = Held()  # a local of a frame the parse runs under
        objects = {"green-cube-1": "green-cube", "pink-plate-1": "plate"}
        text = problem_text("stacking", f"p{id(held)}", objects,
                            ["hand-empty", "clear green-cube-1", "clear pink-plate-1"],
                            ["on-top-of green-cube-1 pink-plate-1"])
        validate(stacking, text)  # a text never parsed before: the cache cannot answer
        return weakref.ref(held)

    ref = caller()
    gc.collect()
    assert ref() is None
