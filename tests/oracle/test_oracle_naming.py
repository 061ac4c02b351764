"""Name alignment: a model's own names bound to scene objects, and the sim-oracle speaking them."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest

from agentic_env.agents.models.base import CallRecord, ModelQuery, ModelReply, ToolCall, Usage
from agentic_env.envs.sim_env import SimEnv
from agentic_env.oracle import SimOracle
from agentic_env.oracle.described import described_names
from agentic_env.oracle.name_book import NameBook, new_name_book
from agentic_env.oracle.naming import Mention, align, scene_things, thing_geoms
from agentic_env.tasks import BENCHMARK_TASKS


@pytest.fixture(scope="module")
def envs() -> Iterator[dict[str, SimEnv]]:
    made = {task: SimEnv(task) for task in BENCHMARK_TASKS}
    yield made
    for env in made.values():
        env.close()


def _record(module: str, fields: dict, answer: dict, template: str = "") -> CallRecord:
    query = ModelQuery(module, template or module, "", fields=fields)
    reply = ModelReply(answer, json.dumps(answer), Usage(), "a-model")
    return CallRecord(query, reply, None, (json.dumps(answer),), Usage(), "a-model")


@pytest.mark.parametrize("seed", [31, 32, 33])
@pytest.mark.parametrize("task", BENCHMARK_TASKS)
def test_names_by_looks_bind_back_to_their_objects(envs: dict[str, SimEnv], task: str,
                                                   seed: int) -> None:
    """Colour + synonym names, letters, slot numbers and left/right for look-alikes: every
    invented name binds to its own object, with its description and from the name alone."""
    env = envs[task]
    env.reset(seed=seed)
    things = scene_things(env)
    named = described_names(things, np.random.default_rng(seed))
    assert named and all(m.name != thing for thing, m in named.items())
    with_words = align(list(named.values()), things)
    names_only = align([Mention(m.name) for m in named.values()], things)
    for thing, mention in named.items():
        assert with_words.bound[mention.name] == thing, mention
        assert names_only.bound[mention.name] == thing, mention


def test_words_that_contradict_an_object_do_not_bind_to_it(envs: dict[str, SimEnv]) -> None:
    env = envs["crossword"]
    env.reset(seed=3)
    things = scene_things(env)
    letters = {t.letter for t in things if t.letter}
    missing = next(c for c in "QZJKVW" if c not in letters)
    found = align([Mention(f"block-with-letter-{missing.lower()}"), Mention("purple-giraffe"),
                   Mention("square-3")], things)
    assert found.unbound == [f"block-with-letter-{missing.lower()}", "purple-giraffe"]
    assert found.bound["square-3"] == "slot-3"
    sorting = envs["sorting"]
    sorting.reset(seed=3)
    found = align([Mention("blue-container"), Mention("white-tub")], scene_things(sorting))
    assert found.bound == {"blue-container": "blue-bin", "white-tub": "white-bin"}
    assert not align([Mention("red-bin")], scene_things(sorting)).bound


def test_look_alike_names_without_a_relation_are_reported_ambiguous(
        envs: dict[str, SimEnv]) -> None:
    env = envs["sorting"]
    env.reset(seed=3)
    found = align([Mention("bin")], scene_things(env))
    assert set(found.ambiguous["bin"]) == {"white-bin", "blue-bin"}
    assert found.bound["bin"] in {"white-bin", "blue-bin"}
    book = NameBook(env)
    assert book.resolve("bin") is None  # alone and ambiguous: not guessed
    assert book.resolve("the blue container") == "blue-bin"


def test_the_book_learns_introductions_detections_and_plans(envs: dict[str, SimEnv]) -> None:
    env = envs["sorting"]
    env.reset(seed=3)
    book = NameBook(env)
    book.observe(_record("parser", {}, {"objects_identified": [
        {"name": "yellow-toy-duck", "type": "item", "description": "a rubber duck"},
        {"name": "tub-a", "type": "container", "description": "the white tub"}]}))
    assert book.resolve("yellow-toy-duck") == "rubber-duck-1"
    assert book.resolve("tub-a") == "white-bin"
    assert book.name_for("white-bin") == "tub-a"
    # a detection of a name nothing introduced binds it to the object under its point
    segmentation = env.segmentation("shoulder")
    rows, cols = np.nonzero(np.isin(segmentation, thing_geoms(env, "lemon-1")))
    height, width = segmentation.shape
    book.observe(_record("detector", {"target": "thing-7", "camera": "shoulder",
                                      "image_size": [height, width]},
                         {"found": True, "point": [int(cols.mean()), int(rows.mean())]}))
    assert book.resolve("thing-7") == "lemon-1"
    # names written into a plan's free text are bound while the scene is as the model saw it;
    # the domain's own words and geom names in an error message are not names
    book.observe(_record("planner", {}, {"text": "pick blue-container then place-in "
                                                 "tub-a; bowl_wall_+y blocked"}))
    assert book.alignment.bound["blue-container"] == "blue-bin"
    assert "place-in" not in book.alignment.bound and "bowl_wall_" not in str(book.alignment)


def test_queries_are_read_in_ids_and_answers_written_in_the_agents_names(
        envs: dict[str, SimEnv]) -> None:
    env = envs["sorting"]
    env.reset(seed=3)
    book = NameBook(env)
    book.introduce([Mention("tub-a", "the white tub"), Mention("duckie", "yellow duck")])
    fields = book.to_ids({"target": "duckie", "conditions": ["(in duckie tub-a)",
                                                             "(not (holding duckie))"],
                          "note": "put duckie in tub-a"})
    assert fields == {"target": "rubber-duck-1",
                      "conditions": ["(in rubber-duck-1 white-bin)",
                                     "(not (holding rubber-duck-1))"],
                      "note": "put rubber-duck-1 in white-bin"}
    assert book.from_ids({"plan": ["pick rubber-duck-1", "place rubber-duck-1 white-bin"]}) \
        == {"plan": ["pick duckie", "place duckie tub-a"]}
    problem = "(:objects duckie - item tub-a - container) (:goal (in duckie tub-a))"
    assert book.pddl_in_ids(problem) == ("(:objects rubber-duck-1 - item white-bin - container)"
                                         " (:goal (in rubber-duck-1 white-bin))")


def test_a_name_that_is_a_type_word_keeps_the_type_a_type(envs: dict[str, SimEnv]) -> None:
    env = envs["kitchen"]
    env.reset(seed=2)
    book = NameBook(env)
    problem = "(:objects container - item basin - container) (:init (on-table container))"
    book.introduce([Mention("container", "the spice bottle", "item"),
                    Mention("basin", "the bowl", "container")])
    assert book.pddl_in_ids(problem) == ("(:objects spice-bottle-1 - item bowl-1 - container) "
                                         "(:init (on-table spice-bottle-1))")


def test_the_described_oracle_never_speaks_a_simulator_id(envs: dict[str, SimEnv]) -> None:
    env = envs["crossword"]
    env.reset(seed=4)
    oracle = SimOracle(env, names="described")
    try:
        answer = json.loads(oracle.complete(ModelQuery(
            "parser", "parser", "", fields={"domain": "", "instruction": ""})).text)
    finally:
        oracle.close()
    names = [o["name"] for o in answer["objects_identified"]]
    ids = set(env.task.pddl_objects())
    assert names and not ids & set(names)
    assert not any(i in answer["problem_pddl"].split() for i in ids if i.startswith("block"))
    book = NameBook(env)
    bound = book.introduce([Mention(o["name"], o["description"], o["type"])
                            for o in answer["objects_identified"]]).bound
    assert sorted(bound.values()) == sorted(ids)


def test_a_tools_name_is_no_objects_name(envs: dict[str, SimEnv]) -> None:
    """ALRM's ``open_drawer`` tool once bound to the kitchen's drawer (``open`` + ``drawer``),
    and the oracle then called the drawer ``open_drawer``."""
    env = envs["kitchen"]
    env.reset(seed=2)
    book = NameBook(env)
    call = ToolCall("call_1", "open_drawer", {"name": "top-drawer"})
    answer = {"tool_calls": [call.to_dict()], "tool_mode": "native", "text": ""}
    reply = ModelReply(answer, "", Usage(), "a-model", tool_calls=(call,))
    book.observe(CallRecord(ModelQuery("task_executor", "tap", ""), reply, None, ("",),
                            Usage(), "a-model"))
    messages = [{"role": "assistant", "tool_calls": [
        {"id": "call_1", "function": {"name": "open_drawer", "arguments": "{}"}}]}]
    assert book.to_ids(messages, learn=False) == messages
    assert book.summary() == {"bound": {}, "unbound": [], "ambiguous": {}}


def test_a_described_oracle_reuses_the_names_the_agent_already_knows(
        envs: dict[str, SimEnv]) -> None:
    """A model reuses its prompt's names: after a module answered with the simulator's ids
    (ALRM's listing by the plain sim-oracle), a described oracle speaks those ids, not names
    of its own (it used to, and every pick then found NOT_FOUND)."""
    env = envs["sorting"]
    env.reset(seed=5)
    book = new_name_book(env)
    plain, described = SimOracle(env), SimOracle(env, names="described")
    query = ModelQuery("parser", "parser", "", fields={"domain": "", "instruction": ""})
    try:
        fresh = json.loads(described.complete(query).text)
        first = json.loads(plain.complete(query).text)
        book.observe(_record("parser", dict(query.fields), first))
        again = json.loads(described.complete(query).text)
    finally:
        plain.close()
        described.close()
    ids = {o["name"] for o in first["objects_identified"]}
    assert not ids & {o["name"] for o in fresh["objects_identified"]}
    assert {o["name"] for o in again["objects_identified"]} == ids
