"""AgenticLab's episodes are the ones recorded before its bookkeeping and named-object
manipulation moved into the shared agent runtime: the same primitives, at the same places
(within a centimetre), with the same outcome; and its domain guard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentic_env.agents.agenticlab.pipeline import _domain_changed_actions
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.runner import run_episode
from agentic_env.pddl.planning import load_domain

#: ``task:setting:seed`` -> the recorded outcome and primitives (name, position rounded to
#: cm, ok), from the AgenticLab agent with the perfect sim-oracle before the runtime.
RECORDED = json.loads((Path(__file__).parent / "recorded_episodes.json").read_text())


@pytest.mark.parametrize("key", sorted(RECORDED))
def test_an_episode_replays_as_recorded_before_the_runtime(key: str) -> None:
    task, setting, seed = key.split(":")
    primitives: list[list[Any]] = []

    def on_event(env: Any, event: dict[str, Any]) -> None:
        if event.get("kind") == "primitive":
            primitives.append([event["primitive"], event["position"], event["ok"]])

    result = run_episode(EpisodeSpec(task=task, setting=setting, seed=int(seed),
                                     realism="ideal"), video=False,
                         on_agent_event=on_event)
    recorded = RECORDED[key]
    assert result.success == recorded["success"]
    assert [(p[0], p[2]) for p in primitives] == [(p[0], p[2]) for p in recorded["prims"]]
    for now, then in zip(primitives, recorded["prims"], strict=True):
        np.testing.assert_allclose(now[1], then[1], atol=0.011, err_msg=str(now))


def test_an_updated_domain_may_add_types_but_not_actions() -> None:
    domain = load_domain("sorting")
    with_type = domain.replace("(:types item container", "(:types item container toy")
    assert not _domain_changed_actions(domain, with_type)
    injected = domain.replace("(:action pick", "(:action throw-away :parameters (?o - item) "
                              ":precondition (holding ?o) :effect (hand-empty))\n  (:action pick")
    assert _domain_changed_actions(domain, injected)
