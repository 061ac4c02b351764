"""The sim-oracle's typed scene listing: true kinds from the task's PDDL types, the table,
one wrong kind at the detector's error rate; routed by the listing's template."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from agentic_env.agents.models.base import ModelQuery
from agentic_env.agents.runtime.listing import LISTING_TEMPLATE, Kind
from agentic_env.oracle import answer_for
from agentic_env.oracle.listing import answer, true_kinds

CROSSWORD = {"block-1": "block", "block-2": "block", "slot-1": "slot", "slot-2": "slot"}


def listing(objects: dict[str, str], wrong: bool = False) -> dict[str, str]:
    context = SimpleNamespace(task=SimpleNamespace(pddl_objects=lambda: objects),
                              wrong=lambda module: wrong and module == "detector",
                              rng=np.random.default_rng(0))
    query = ModelQuery("detector", LISTING_TEMPLATE, "", fields={"list": True})
    return {e["name"]: e["kind"] for e in answer(context, query)["objects"]}  # type: ignore[arg-type]


@pytest.mark.parametrize(("objects", "expected"), [
    (CROSSWORD, {"block-1": "object", "block-2": "object", "slot-1": "slot",
                 "slot-2": "slot", "table": "table"}),
    ({"apple-1": "item", "pot": "container", "drawer": "drawer"},
     {"apple-1": "object", "pot": "container", "drawer": "drawer", "table": "table"}),
    ({"red-cube-1": "red-cube", "blue-plate-1": "plate", "table": "object"},
     {"red-cube-1": "object", "blue-plate-1": "surface", "table": "table"}),
    ({"mug-1": "item", "upright": "pose"}, {"mug-1": "object", "table": "table"}),  # no poses
])
def test_the_listing_types_each_thing_by_its_pddl_type(objects: dict[str, str],
                                                      expected: dict[str, str]) -> None:
    assert listing(objects) == expected
    assert true_kinds(objects) == {k: Kind(v) for k, v in expected.items()}


def test_a_detector_error_gives_one_thing_a_wrong_kind_and_never_touches_the_table() -> None:
    truth, corrupted = listing(CROSSWORD), listing(CROSSWORD, wrong=True)
    assert truth.keys() == corrupted.keys()
    changed = [name for name in truth if truth[name] != corrupted[name]]
    assert len(changed) == 1 and changed[0] != "table"
    assert corrupted[changed[0]] != "table"


def test_the_listing_template_is_answered_by_the_listing_not_the_module() -> None:
    assert answer_for("detector", LISTING_TEMPLATE) is answer
