"""The sim-oracle's typed scene listing: true kinds from the task's PDDL types, the table,
one wrong kind at the detector's error rate; routed by the listing's template."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from agentic_env.agents.models.base import ModelImage, ModelQuery
from agentic_env.agents.runtime.listing import LISTING_TEMPLATE, Kind
from agentic_env.envs.sim_env import SimEnv
from agentic_env.oracle import SimOracle, answer_for
from agentic_env.oracle.backend import OracleContext
from agentic_env.oracle.listing import answer, true_kinds
from agentic_env.oracle.naming import thing_geoms

CROSSWORD = {"block-1": "block", "block-2": "block", "slot-1": "slot", "slot-2": "slot"}


def listing(objects: dict[str, str], wrong: bool = False) -> dict[str, str]:
    context = SimpleNamespace(task=SimpleNamespace(pddl_objects=lambda: objects),
                              wrong=lambda module, **_: wrong and module == "detector",
                              rng=np.random.default_rng(0), sees_image_only=False)
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


def _listed(oracle: SimOracle, obs: dict) -> set[str]:
    image = ModelImage("shoulder_rgb", obs["shoulder_rgb"])
    query = ModelQuery("detector", LISTING_TEMPLATE, "", images=(image,),
                       fields={"list": True, "camera": "shoulder"})
    return {e["name"] for e in json.loads(oracle.complete(query).text)["objects"]}


def test_an_oracle_that_sees_only_the_image_lists_only_what_it_shows(sorting_env) -> None:
    env = sorting_env
    obs = env.observe()
    item = next(n for n, t in env.task.pddl_objects().items() if t == "item")
    count = int(np.isin(env.segmentation("shoulder"), thing_geoms(env, item)).sum())
    assert item in _listed(SimOracle(env, min_visible_px=count, sees_image_only=True), obs)
    assert item not in _listed(SimOracle(env, min_visible_px=count + 1,
                                         sees_image_only=True), obs)
    assert item in _listed(SimOracle(env, min_visible_px=count + 1), obs)  # lists all


def test_a_closed_drawers_inside_is_never_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    env = SimEnv("kitchen")
    try:
        obs, _ = env.reset(seed=0)  # open, with a spice bottle in it the camera sees
        assert "in-drawer spice-bottle-1 top-drawer" in env.task.facts(env.scene_state)
        assert "spice-bottle-1" in _listed(SimOracle(env, sees_image_only=True), obs)
        facts = OracleContext.facts
        monkeypatch.setattr(OracleContext, "facts", lambda self: {
            f.replace("drawer-open", "drawer-closed") for f in facts(self)})
        listed = _listed(SimOracle(env, sees_image_only=True), obs)
        assert "spice-bottle-1" not in listed and "top-drawer" in listed
        size = list(obs["shoulder_rgb"].shape[:2])
        described = json.loads(SimOracle(env, sees_image_only=True).complete(ModelQuery(
            "descriptor", "descriptor", "", fields={"camera": "shoulder",
                                                    "image_size": size})).text)
        names = {o["name"] for o in described["objects"]}
        assert "spice-bottle-1" not in names and "top-drawer" in names
    finally:
        env.close()



def test_an_emulated_listing_mistypes_the_least_visible_thing_at_its_sightings_rate(
        sorting_env) -> None:
    """An emulated model's listing error follows the image: the rate is the difficulty
    model's for the least visible listed thing in the frame sent, and that thing is the one
    given a wrong kind."""
    from agentic_env.oracle import load_profile
    from agentic_env.oracle.difficulty import sighting
    from agentic_env.oracle.emulated import difficulty_models

    env = sorting_env
    obs = env.observe()
    profile = load_profile("gpt-4o")
    rate = 1.0 - profile.modules["detector"].success.value
    difficulty = difficulty_models(profile)
    oracle = OracleContext(env, {"detector": rate}, seed=3, difficulty=difficulty,
                           sees_image_only=True, min_visible_px=40)
    truth = true_kinds(env.task.pddl_objects())
    segmentation = env.segmentation("shoulder")
    pixels = {n: int(np.isin(segmentation, thing_geoms(env, n)).sum()) for n in truth
              if n != "table" and thing_geoms(env, n)}
    shown = {n: px for n, px in pixels.items() if px >= 40}
    hardest = min(shown, key=lambda n: (shown[n], n))
    query = ModelQuery("detector", LISTING_TEMPLATE, "",
                       images=(ModelImage("shoulder_rgb", obs["shoulder_rgb"]),),
                       fields={"list": True, "camera": "shoulder"})
    n, wrong, names = 300, 0, set()
    for _ in range(n):
        changed = {e["name"] for e in answer(oracle, query)["objects"]
                   if Kind(e["kind"]) != truth[e["name"]]}
        wrong += bool(changed)
        names |= changed
    expected = difficulty["detector"].rate(rate, sighting(
        env, segmentation, hardest, shown[hardest], 10**9, obs["shoulder_rgb"]))
    assert names == {hardest}
    assert abs(wrong / n - expected) < 3.5 * (expected * (1 - expected) / n) ** 0.5 + 0.01
