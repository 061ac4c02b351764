"""Symbolic planning layer: PDDL domains, problem text, validation, Fast Downward, plan checks.

AgenticLab's task parser turns an instruction and a scene into a PDDL problem over a fixed,
hand-written domain (paper Fig. 9-11); a classical planner (Fast Downward) turns the problem
into the sequence of high-level actions that the agent then executes. This module provides:

* :func:`load_domain` -- the project's domains (``assets/pddl/<task>.pddl``: ``stacking``,
  ``sorting``, ``crossword``, ``reorientation``, ``kitchen``);
* :func:`problem_text` -- a PDDL problem from objects, initial facts and goal facts;
* :func:`validate` -- parse a domain + problem (unified-planning's ``PDDLReader``) and raise
  :class:`PDDLError` with a message precise enough to send back to a VLM to fix its PDDL;
* :func:`solve` -- plan with Fast Downward through unified-planning's ``OneshotPlanner``;
* :func:`simulate` -- apply a plan to a problem's initial state and report whether the goal
  holds, the final facts and the first violated precondition (for checking a model's plan
  against the true problem).

Facts are written like the paper's ``:init`` lines, either bare (``"on-top-of a b"``,
``"hand-empty"``) or parenthesised (``"(on-top-of a b)"``). PDDL is case-insensitive and the
parser lower-cases everything, so names in plans and facts come back lower-case.

unified-planning takes about a second to import, so it is imported inside the functions that
need it: ``import agentic_env`` (and this module) stays fast. The planner runs Fast Downward's
bundled binary in a subprocess; nothing touches the network.
"""

from __future__ import annotations

import contextlib
import functools
import re
import tempfile
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from agentic_env.errors import AgenticEnvError, InvalidConfigError
from agentic_env.pddl.diagnostics import describe_error

if TYPE_CHECKING:
    from unified_planning.model import FNode, Problem

__all__ = [
    "PDDLError",
    "PlanNotFoundError",
    "PlanStep",
    "PlannerFailedError",
    "PlanningTimeoutError",
    "SimulationResult",
    "domain_names",
    "load_domain",
    "problem_text",
    "simulate",
    "solve",
    "validate",
]

#: A PDDL name: a letter followed by letters, digits, ``-`` or ``_``.
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")
#: A problem's ``(define (problem NAME)`` opening, which names it and changes nothing else.
_PROBLEM_NAME = re.compile(r"\(\s*define\s*\(\s*problem\s+[^\s()]+", re.IGNORECASE)
#: Parsed texts and plans kept for reuse (the least recently used go first). An agent
#: validates, plans, grounds every step's conditions and checks the goal of one problem (about
#: 0.25 s per parse), and the episode's score plans the same problem again.
CACHE_SIZE = 16


#: Plans found by :func:`solve`, keyed by the texts (the problem's name aside) and options.
_plans: OrderedDict[tuple[str, str, float, bool], tuple[PlanStep, ...]] = OrderedDict()


class PDDLError(AgenticEnvError, ValueError):
    """A PDDL domain, problem or plan is malformed: syntax, unknown name, wrong type or arity,
    or a plan step whose preconditions do not hold.

    The message says which text (domain, problem or plan), where (line and column, or the
    step number) and what is wrong, with the valid names where a name is unknown, so that it
    can be sent back verbatim to the model that wrote the PDDL.
    """


class PlanNotFoundError(AgenticEnvError, RuntimeError):
    """The planner found no plan: Fast Downward proved the goal unreachable from the
    initial state (the message says whether it was proved)."""


class PlanningTimeoutError(PlanNotFoundError):
    """The planner ran out of time before finding a plan or proving there is none."""


class PlannerFailedError(AgenticEnvError, RuntimeError):
    """Fast Downward crashed or ran out of memory (not a fault of the PDDL)."""


@dataclass(frozen=True)
class PlanStep:
    """One ground action of a plan, e.g. ``PlanStep("pick", ("green-cube-1", "orange-cube-1"))``.

    ``str(step)`` gives the PDDL form ``(pick green-cube-1 orange-cube-1)``.
    """

    name: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return "(" + " ".join((self.name, *self.args)) + ")"

    @classmethod
    def parse(cls, text: str) -> PlanStep:
        """Parse one action: ``"(pick a b)"``, ``"(pick a b);"`` (paper Fig. 11),
        ``"pick a b"`` or unified-planning's ``"pick(a, b)"``. Names are lower-cased.

        Raises:
            PDDLError: the text is empty or holds something other than names.
        """
        body = text.strip().rstrip(";").strip()
        if body.startswith("(") and body.endswith(")"):
            body = body[1:-1]
        body = body.replace("(", " ").replace(")", " ").replace(",", " ")
        tokens = body.lower().split()
        if not tokens:
            raise PDDLError(f"plan step {text!r} is empty; expected e.g. '(pick a b)'")
        bad = [token for token in tokens if not _NAME.fullmatch(token)]
        if bad:
            raise PDDLError(
                f"plan step {text!r}: {', '.join(map(repr, bad))} is not a PDDL name "
                "(a letter, then letters, digits, '-' or '_'); expected e.g. '(pick a b)'"
            )
        return cls(tokens[0], tuple(tokens[1:]))


@dataclass(frozen=True)
class SimulationResult:
    """Outcome of :func:`simulate`.

    Attributes:
        goal_reached: every goal condition holds in the final state.
        facts: the atoms true in the final state, bare (``"on-top-of a b"``, ``"hand-empty"``).
        unmet_goals: the goal's top-level conjuncts that do not hold, in PDDL
            (``"(on-top-of a b)"``); empty when ``goal_reached``.
    """

    goal_reached: bool
    facts: frozenset[str]
    unmet_goals: tuple[str, ...]


# --------------------------------------------------------------------------- domains


def domain_names() -> list[str]:
    """Names accepted by :func:`load_domain` (the ``.pddl`` files of ``assets/pddl``)."""
    folder = resources.files("agentic_env.assets").joinpath("pddl")
    return sorted(
        entry.name.removesuffix(".pddl")
        for entry in folder.iterdir()
        if entry.name.endswith(".pddl")
    )


def load_domain(task: str) -> str:
    """Text of the PDDL domain of ``task`` (``assets/pddl/<task>.pddl``).

    Raises:
        InvalidConfigError: no domain of that name; the message lists the valid names.
    """
    names = domain_names()
    if task not in names:
        raise InvalidConfigError(f"no PDDL domain {task!r}; valid: {', '.join(names)}")
    folder = resources.files("agentic_env.assets").joinpath("pddl")
    return folder.joinpath(f"{task}.pddl").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- problems


def _fact(fact: str) -> str:
    """``"on-top-of a b"`` or ``"(on-top-of a b)"`` -> ``"(on-top-of a b)"``."""
    text = " ".join(fact.split())
    if not text:
        raise PDDLError("empty fact; expected e.g. 'on-top-of a b' or 'hand-empty'")
    return text if text.startswith("(") else f"({text})"


def problem_text(
    domain_name: str,
    problem_name: str,
    objects: Mapping[str, str],
    init: Iterable[str],
    goal: Iterable[str],
) -> str:
    """Build a PDDL problem in the layout of the paper's Fig. 10.

    Args:
        domain_name: the ``(define (domain ...))`` name, e.g. ``"stacking"``.
        problem_name: any PDDL name for the problem.
        objects: object name -> type, e.g. ``{"green-cube-1": "green-cube"}``.
        init: true facts of the initial state, e.g. ``["hand-empty", "on-top-of a b"]``;
            everything not listed is false (closed world).
        goal: facts that must hold at the end (conjoined); parenthesised PDDL such as
            ``"(not (holding a))"`` passes through unchanged.

    Returns:
        The problem text; :func:`validate` checks it against a domain.

    Raises:
        PDDLError: a name or type is not a PDDL name, or a fact is empty.
    """
    for kind, name in (("domain", domain_name), ("problem", problem_name)):
        if not _NAME.fullmatch(name):
            raise PDDLError(f"{kind} name {name!r} is not a PDDL name")
    for name, type_name in objects.items():
        for what, value in (("object", name), (f"type of object {name!r}", type_name)):
            if not _NAME.fullmatch(value):
                raise PDDLError(
                    f"{what} {value!r} is not a PDDL name (a letter, then letters, digits, "
                    "'-' or '_')"
                )
    lines = [f"(define (problem {problem_name})", f"  (:domain {domain_name})", "", "  (:objects"]
    lines += [f"    {name} - {type_name}" for name, type_name in objects.items()]
    lines += ["  )", "", "  (:init"]
    lines += [f"    {_fact(fact)}" for fact in init]
    lines += ["  )", "", "  (:goal", "    (and"]
    lines += [f"      {_fact(fact)}" for fact in goal]
    lines += ["    )", "  )", ")", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- parsing


def _unified_planning() -> Any:
    """Import unified-planning on first use and silence its credits banner."""
    import unified_planning.shortcuts as shortcuts

    shortcuts.get_environment().credits_stream = None
    return shortcuts


@functools.lru_cache(maxsize=CACHE_SIZE)
def _parse(domain: str, problem: str | None) -> Problem:
    """Parse ``domain`` (and ``problem``) into a unified-planning problem.

    The result is cached by the two texts and shared between callers, which only read it.
    When parsing fails (not cached), the domain is parsed on its own to attribute the error to
    the right text (and to list the domain's names in the message).
    """
    try:
        return _read(domain, problem)
    except Exception as exc:  # the reader raises many types; all mean "bad PDDL"
        error = exc
    try:
        domain_only = _read(domain, None)
    except Exception as exc:
        raise PDDLError(describe_error(exc, "domain", domain, None)) from exc
    assert problem is not None  # the domain alone parsed, so the problem failed
    raise PDDLError(describe_error(error, "problem", problem, domain_only)) from error


def _read(domain: str, problem: str | None) -> Problem:
    """unified-planning's PDDL reader on the two texts, its parser's memo emptied after.

    The reader's grammar is pyparsing with packrat memoisation, which unified-planning (and
    matplotlib's mathtext) switch on for the whole process: the memo keeps the parse's
    failed alternatives, exceptions whose tracebacks hold every calling frame, so without
    emptying it a finished episode's env, agent and observations stayed alive until other
    parses pushed them out (two stale environments per worker between episodes).
    """
    _unified_planning()
    import pyparsing
    from unified_planning.io import PDDLReader

    try:
        return PDDLReader().parse_problem_string(domain, problem)
    finally:
        pyparsing.ParserElement.reset_cache()


def validate(domain: str, problem: str) -> None:
    """Check that ``problem`` parses against ``domain`` and that Fast Downward can plan for it.

    Checks syntax, declared types, objects and predicates, predicate arity and argument
    types, and that the problem uses only features Fast Downward supports (STRIPS with
    typing, negative and disjunctive conditions, conditional effects, action costs). The
    problem's ``(:domain ...)`` name is not compared with the domain's: the paper's own
    Fig. 10 problem names ``vlmrobobench`` for the ``stacking`` domain.

    Raises:
        PDDLError: with the parser's message, the line and column and the offending line.
    """
    _check_supported(_parse(domain, problem))


def _check_supported(parsed: Problem) -> None:
    from up_fast_downward import FastDownwardPDDLPlanner

    if not FastDownwardPDDLPlanner.supports(parsed.kind):
        supported = FastDownwardPDDLPlanner.supported_kind()
        extra = [
            f"{feature}"
            for feature in parsed.kind.features
            if feature not in supported.features
        ]
        raise PDDLError(
            "problem uses PDDL features Fast Downward does not support: "
            + ", ".join(sorted(extra))
        )


# --------------------------------------------------------------------------- planning


def solve(
    domain: str, problem: str, timeout: float = 30.0, *, optimal: bool = True
) -> list[PlanStep]:
    """Plan with Fast Downward (unified-planning engine ``fast-downward-opt`` or
    ``fast-downward``).

    By default the plan is *optimal* (A* with the LM-cut heuristic, engine
    ``fast-downward-opt``): fewest actions, so it serves as the reference (required)
    sequence of :func:`agentic_env.tasks.score.progress_score`. On the paper's Fig. 10
    problem this takes 0.15-0.2 s (mostly process start-up), as does the satisficing one; both
    find the 8-step plan. ``optimal=False`` uses the satisficing ``lama-first``
    configuration (the default of engine ``fast-downward``, as in the paper), which scales
    to larger problems but may return longer plans. Plans are kept (:data:`CACHE_SIZE`): the
    same problem, under any problem name, is solved once.

    Args:
        domain: PDDL domain text (e.g. :func:`load_domain`).
        problem: PDDL problem text.
        timeout: wall-clock limit in seconds for the planner subprocess.
        optimal: search for a shortest plan (see above).

    Returns:
        The plan's steps in order; empty when the goal already holds.

    Raises:
        PDDLError: the domain or problem does not parse or uses unsupported features.
        PlanNotFoundError: the goal is unreachable (Fast Downward proved it).
        PlanningTimeoutError: no plan or proof within ``timeout``.
        PlannerFailedError: Fast Downward crashed or ran out of memory.
    """
    # the problem's name and white space around the texts change nothing
    key = (domain.strip(), _PROBLEM_NAME.sub("(define (problem p", problem.strip(), count=1),
           timeout, optimal)
    if key in _plans:
        _plans.move_to_end(key)
        return list(_plans[key])
    plan = _solve(domain, problem, timeout, optimal)
    _plans[key] = tuple(plan)
    if len(_plans) > CACHE_SIZE:
        _plans.popitem(last=False)
    return plan


def _solve(domain: str, problem: str, timeout: float, optimal: bool) -> list[PlanStep]:
    """:func:`solve` without the cache."""
    shortcuts = _unified_planning()
    from unified_planning.engines import PlanGenerationResultStatus as Status

    parsed = _parse(domain, problem)
    _check_supported(parsed)
    engine = "fast-downward-opt" if optimal else "fast-downward"
    # Fast Downward's translator writes output.sas into the working directory: run each solve
    # in a private one, or concurrent processes started in one folder swap plans.
    with (tempfile.TemporaryDirectory(prefix="agentic-fd-") as workdir,
          contextlib.chdir(workdir),
          shortcuts.OneshotPlanner(name=engine) as planner):
        result = planner.solve(parsed, timeout=timeout)
    status = result.status
    if status in (Status.SOLVED_SATISFICING, Status.SOLVED_OPTIMALLY) and result.plan is not None:
        return [
            PlanStep(
                item.action.name,
                tuple(p.object().name for p in item.actual_parameters),
            )
            for item in result.plan.actions
        ]
    if status == Status.UNSOLVABLE_PROVEN:
        raise PlanNotFoundError(
            "no plan exists: Fast Downward proved the goal unreachable from the initial "
            "state (check the goal for contradictions, e.g. two objects directly on the same "
            "object, an object on itself, or a fact no action can make true)"
        )
    if status == Status.UNSOLVABLE_INCOMPLETELY:
        raise PlanNotFoundError("Fast Downward found no plan (unsolvability not proven)")
    if status == Status.TIMEOUT:
        raise PlanningTimeoutError(f"Fast Downward found no plan within {timeout:g} s")
    if status == Status.UNSUPPORTED_PROBLEM:
        raise PDDLError("problem uses PDDL features Fast Downward does not support")
    log = "\n".join(m.message for m in result.log_messages)[-2000:]
    raise PlannerFailedError(f"Fast Downward failed with status {status.name}:\n{log}")


# --------------------------------------------------------------------------- simulation


def _conjuncts(node: FNode) -> list[FNode]:
    if node.is_and():
        return [leaf for arg in node.args for leaf in _conjuncts(arg)]
    return [node]


def _pddl(node: FNode) -> str:
    """An expression of unified-planning as PDDL text: ``(on-top-of a b)``."""
    if node.is_fluent_exp():
        args = [a.object().name if a.is_object_exp() else _pddl(a) for a in node.args]
        return "(" + " ".join([node.fluent().name, *args]) + ")"
    if node.is_object_exp():
        return node.object().name
    if node.is_parameter_exp():
        return f"?{node.parameter().name}"
    for test, keyword in (
        (node.is_not, "not"),
        (node.is_and, "and"),
        (node.is_or, "or"),
        (node.is_equals, "="),
        (node.is_implies, "imply"),
    ):
        if test():
            return f"({keyword} " + " ".join(_pddl(a) for a in node.args) + ")"
    return str(node)


def _ground_step(parsed: Problem, step: PlanStep, index: int) -> tuple[Any, tuple[Any, ...]]:
    """The unified-planning action and object expressions of ``step``, with checks."""
    where = f"plan step {index} {step}"
    if not parsed.has_action(step.name):
        actions = ", ".join(
            f"({a.name}{''.join(f' ?{p.name} - {p.type}' for p in a.parameters)})"
            for a in parsed.actions
        )
        raise PDDLError(f"{where}: unknown action {step.name!r}; the domain's actions: {actions}")
    action = parsed.action(step.name)
    params = action.parameters
    signature = " ".join(f"?{p.name} - {p.type}" for p in params)
    if len(step.args) != len(params):
        raise PDDLError(
            f"{where}: {step.name} takes {len(params)} argument(s) ({signature}), "
            f"got {len(step.args)}"
        )
    objects = []
    for arg, param in zip(step.args, params, strict=True):
        if not parsed.has_object(arg):
            names = ", ".join(o.name for o in parsed.all_objects)
            raise PDDLError(f"{where}: unknown object {arg!r}; the problem's objects: {names}")
        obj = parsed.object(arg)
        if not param.type.is_compatible(obj.type):
            raise PDDLError(
                f"{where}: ?{param.name} of {step.name} must be of type {param.type}, "
                f"but {arg} is of type {obj.type}"
            )
        objects.append(parsed.environment.expression_manager.ObjectExp(obj))
    return action, tuple(objects)


def simulate(domain: str, problem: str, plan: Iterable[PlanStep | str]) -> SimulationResult:
    """Apply ``plan`` to the initial state of ``problem`` and evaluate the goal.

    Uses unified-planning's sequential simulator: each step's preconditions must hold in the
    state the previous steps produced (the plan is a *valid* plan only if they all do and
    the goal holds at the end).

    Args:
        domain: PDDL domain text.
        problem: PDDL problem text (the true problem, to check a model's plan against it).
        plan: the steps, as :class:`PlanStep` or text accepted by :meth:`PlanStep.parse`.

    Returns:
        Whether the goal holds, the final facts and the unmet goal conjuncts.

    Raises:
        PDDLError: the domain or problem does not parse; or a step names an unknown action
            or object, has the wrong number or type of arguments, or its preconditions do not
            hold (the message gives the step number, the step and the failed conditions).
    """
    shortcuts = _unified_planning()
    from unified_planning.model.walkers import StateEvaluator

    parsed = _parse(domain, problem)
    evaluator = StateEvaluator(parsed)
    steps = [s if isinstance(s, PlanStep) else PlanStep.parse(s) for s in plan]
    with shortcuts.SequentialSimulator(problem=parsed) as simulator:
        state = simulator.get_initial_state()
        for index, step in enumerate(steps, start=1):
            action, args = _ground_step(parsed, step, index)
            next_state = simulator.apply(state, action, args)
            if next_state is None:
                unsatisfied, _ = simulator.get_unsatisfied_conditions(state, action, args)
                failed = [
                    _pddl(c)
                    for condition in unsatisfied
                    for c in _conjuncts(condition)
                    if not evaluator.evaluate(c, state).bool_constant_value()
                ]
                detail = (
                    "these preconditions do not hold: " + " ".join(failed)
                    if failed
                    else "it is not applicable (conflicting effects)"
                )
                raise PDDLError(f"plan step {index} {step}: {detail}")
            state = next_state
        unmet = tuple(
            _pddl(c)
            for goal in parsed.goals
            for c in _conjuncts(goal)
            if not evaluator.evaluate(c, state).bool_constant_value()
        )
    facts = frozenset(
        _pddl(fluent)[1:-1]
        for fluent in parsed.initial_values
        if fluent.fluent().type.is_bool_type()
        and evaluator.evaluate(fluent, state).bool_constant_value()
    )
    return SimulationResult(goal_reached=not unmet, facts=facts, unmet_goals=unmet)


def step_conditions(domain: str, problem: str, step: PlanStep) -> tuple[list[str], list[str]]:
    """The grounded preconditions and effects of one plan step, as PDDL literals.

    What the action checker verifies before and after executing ``step``: e.g. for
    ``(pick a b)`` in the stacking domain, preconditions ``["(hand-empty)", "(clear a)",
    "(on-top-of a b)"]`` and effects ``["(holding a)", "(clear b)", "(not (hand-empty))",
    ...]``, with the step's objects substituted for the action's parameters.

    Raises:
        PDDLError: the texts do not parse, or the step names an unknown action or object or
            has the wrong number or types of arguments.
    """
    parsed = _parse(domain, problem)
    action, objects = _ground_step(parsed, step, 1)
    manager = parsed.environment.expression_manager
    mapping = {manager.ParameterExp(p): o for p, o in zip(action.parameters, objects,
                                                            strict=True)}
    substitute = parsed.environment.substituter.substitute
    preconditions = [_pddl(substitute(c, mapping)) for p in action.preconditions
                     for c in _conjuncts(p)]
    effects = []
    for effect in action.effects:
        fluent = _pddl(substitute(effect.fluent, mapping))
        effects.append(fluent if effect.value.bool_constant_value() else f"(not {fluent})")
    return preconditions, effects


def goal_literals(domain: str, problem: str) -> list[str]:
    """The conjuncts of ``problem``'s goal as PDDL literals, e.g. ``["(on-top-of a b)"]``.

    Raises:
        PDDLError: the texts do not parse.
    """
    parsed = _parse(domain, problem)
    return [_pddl(c) for goal in parsed.goals for c in _conjuncts(goal)]
