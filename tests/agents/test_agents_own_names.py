"""Every agent works with a model that names things its own way.

The naming role of each agent (the module whose answers introduce the object names the rest
of the episode uses) is played by ``sim-oracle?names=described``, which names things by
their looks (``blue-tub``, ``left-cube-with-letter-s``, ``cell-2``) and never by the
simulator's ids; every other module is the plain sim-oracle, which learns those names only
from the answers, as it would a real model's. The trial must come out as with the pure
oracle.
"""

from __future__ import annotations

import pytest

from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.runner import run_episode

#: The module whose answers introduce each agent's object names.
NAMING_ROLE = {"agenticlab": "parser", "mallvi": "descriptor", "alrm": "detector",
               "planner-executor": "planner"}
DESCRIBED = "sim-oracle?names=described"


def _episode(agent: str, task: str, seed: int, own_names: bool) -> tuple[bool, set[str]]:
    modules = ((NAMING_ROLE[agent], DESCRIBED),) if own_names else ()
    spec = EpisodeSpec(task, setting="kitchen", seed=seed, agent=agent, modules=modules,
                       realism="ideal")
    targets: set[str] = set()

    def seen(_env: object, event: dict) -> None:
        if event.get("kind") == "detection":
            targets.add(str(event["target"]))

    return run_episode(spec, video=False, on_agent_event=seen).success, targets


@pytest.mark.parametrize("agent", sorted(NAMING_ROLE))
def test_an_agent_solves_a_crossword_with_a_models_own_names(agent: str) -> None:
    """Letters, slot numbers and left/right look-alikes (three letters on two blocks each):
    the hardest names to bind."""
    success, targets = _episode(agent, "crossword", 8108, own_names=True)
    assert success
    assert targets and not any(t.startswith(("block-", "slot-")) for t in targets), targets


@pytest.mark.slow
@pytest.mark.parametrize("task", ["sorting", "stacking", "reorientation", "kitchen"])
@pytest.mark.parametrize("agent", sorted(NAMING_ROLE))
def test_own_names_solve_what_the_oracles_ids_solve(agent: str, task: str) -> None:
    for seed in (8102, 8103):
        assert _episode(agent, task, seed, own_names=True)[0] == \
            _episode(agent, task, seed, own_names=False)[0], seed
