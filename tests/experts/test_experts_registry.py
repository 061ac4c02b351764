"""The experts' registry: every task has its expert, found by name; tasks never know theirs."""

from __future__ import annotations

import ast
import pathlib

import pytest

from agentic_env import experts
from agentic_env.errors import InvalidConfigError
from agentic_env.experts import EXPERTS, PlanExpert, expert_for, primitive_for, register_expert
from agentic_env.pddl.planning import PlanStep
from agentic_env.tasks import TASKS, make_task
from agentic_env.tasks.base import SymbolicTask
from agentic_env.tasks.variants import Variant, VariantTask


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_task_has_its_expert_built_once(name: str) -> None:
    task = make_task(name)
    expert = expert_for(task)
    assert expert is expert_for(task)
    assert expert.task is task  # type: ignore[attr-defined]
    assert isinstance(expert, PlanExpert) == isinstance(task, SymbolicTask)
    assert expert_for(make_task(name)) is not expert


def test_a_variant_uses_its_base_task_expert() -> None:
    base = make_task("stacking")
    variant = VariantTask(base, Variant("estop", "Stack them.", "act", ()))
    assert expert_for(variant) is expert_for(base)


def test_unknown_tasks_and_steps_name_what_is_valid() -> None:
    task = make_task("tabletop")
    with pytest.raises(InvalidConfigError, match="grounds no plan steps"):
        primitive_for(task, PlanStep("pick", ("red-cube-1",)), None)  # type: ignore[arg-type]
    unknown = make_task("tabletop")
    unknown.name = "no-such-task"
    with pytest.raises(InvalidConfigError, match="tasks with one: crossword, kitchen"):
        expert_for(unknown)


def test_register_expert_adds_a_lazy_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(EXPERTS, "renamed", "agentic_env.experts.tabletop:NoSuchExpert")
    task = make_task("tabletop")
    task.name = "renamed"
    with pytest.raises(InvalidConfigError, match="NoSuchExpert"):
        expert_for(task)
    register_expert("renamed", "agentic_env.experts.tabletop:TabletopExpert")
    assert type(expert_for(task)).__name__ == "TabletopExpert"


def test_experts_read_only_their_tasks_public_api() -> None:
    folder = pathlib.Path(experts.__file__).parent
    private = [
        f"{path.name}:{node.lineno} reads {ast.unparse(node)}"
        for path in sorted(folder.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr.startswith("_")
        and ast.unparse(node.value).split(".")[-1] == "task"
    ]
    assert not private, "\n".join(private)
