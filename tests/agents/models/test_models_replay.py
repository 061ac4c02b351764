"""Recording model exchanges to cassettes and replaying them offline."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agentic_env.agents.models import (
    CallRecord,
    Completion,
    ModelError,
    ModelImage,
    ModelQuery,
    RecordingBackend,
    ReplayBackend,
    Usage,
    ask,
    exchange_key,
)

SCHEMA = {"type": "object", "required": ["result"], "properties": {"result": {"type": "string"}}}


class ScriptedBackend:
    """Answers each query with the next scripted text and a distinct usage."""

    def __init__(self, name: str, texts: list[str]) -> None:
        self.name = name
        self.texts = list(texts)
        self.calls = 0

    def complete(self, query: ModelQuery) -> Completion:
        self.calls += 1
        usage = Usage(input_tokens=100 * self.calls, output_tokens=self.calls, latency_s=0.25,
                      cost_usd=None if self.calls % 2 else 0.001 * self.calls)
        return Completion(text=self.texts.pop(0), usage=usage)


def image(seed: int) -> ModelImage:
    pixels = np.random.default_rng(seed).integers(0, 256, (12, 16, 3), dtype=np.uint8)
    return ModelImage("shoulder_rgb", pixels)


def queries() -> list[ModelQuery]:
    return [
        ModelQuery(module="parser", template="task_parser.txt",
                   prompt="Sort the blocks by colour.", images=(image(0),), schema=SCHEMA),
        ModelQuery(module="checker", template="action_checker.txt",
                   prompt="Is the red block in the gripper?", images=(image(1), image(2)),
                   schema=SCHEMA),
        ModelQuery(module="goal", template="goal_checker.txt", prompt="Is the task done?",
                   schema=SCHEMA),
    ]


def record(tmp_path: Path) -> list[CallRecord]:
    inner = ScriptedBackend("gemini/gemini-3-flash", [
        '{"result": "parsed"}', "not json", '{"result": "YES"}', '{"result": "NO"}',
    ])
    recorder = RecordingBackend(inner, tmp_path / "cassettes")
    records: list[CallRecord] = []
    for q in queries():
        ask(recorder, q, on_call=records.append)
    return records


def test_replay_gives_identical_replies_offline(tmp_path: Path) -> None:
    recorded = record(tmp_path)
    assert len(list((tmp_path / "cassettes").glob("*.json"))) == 4  # incl. the re-asked answer
    assert not list((tmp_path / "cassettes").glob(".*"))  # no temp files left behind
    replay = ReplayBackend(tmp_path / "cassettes")
    replayed: list[CallRecord] = []
    for q in queries():
        ask(replay, q, on_call=replayed.append)
    for original, again in zip(recorded, replayed, strict=True):
        assert again.reply is not None and original.reply is not None
        assert again.reply.parsed == original.reply.parsed
        assert again.raw_texts == original.raw_texts
        assert again.usage == original.usage
        assert again.reply.attempts == original.reply.attempts
    assert replayed[1].reply.attempts == 2  # the malformed first answer is replayed too
    # the replayed answers follow the recorded model's conventions (e.g. its coordinates)
    assert replay.model == "gemini/gemini-3-flash"


def test_a_cut_off_answer_is_replayed_cut_off(tmp_path: Path) -> None:
    cut = Completion('{"result": "pa', Usage(), truncated=True)

    class CutOff:
        name = "gemini/gemini-3-flash"

        def complete(self, _query: ModelQuery) -> Completion:
            return cut

    RecordingBackend(CutOff(), tmp_path).complete(queries()[0])
    assert ReplayBackend(tmp_path).complete(queries()[0]) == cut


def test_cassettes_store_text_usage_and_a_query_summary(tmp_path: Path) -> None:
    record(tmp_path)
    q = queries()[1]
    key = exchange_key("gemini/gemini-3-flash", q)
    cassette = json.loads((tmp_path / "cassettes" / f"{key}.json").read_text())
    assert cassette["key"] == key and cassette["model"] == "gemini/gemini-3-flash"
    assert cassette["module"] == "checker" and cassette["template"] == "action_checker.txt"
    assert cassette["prompt"] == q.prompt and cassette["text"] == "not json"
    assert [entry["shape"] for entry in cassette["images"]] == [[12, 16, 3], [12, 16, 3]]
    assert cassette["usage"] == {"input_tokens": 200, "output_tokens": 2, "latency_s": 0.25,
                                 "cost_usd": 0.002}


def test_the_key_covers_model_module_prompt_and_pixels() -> None:
    q = queries()[1]
    key = exchange_key("m", q)
    assert key == exchange_key("m", queries()[1])
    changed_pixels = q.images[1].pixels.copy()
    changed_pixels[0, 0, 0] ^= 1
    variants = [
        exchange_key("other", q),
        exchange_key("m", ModelQuery(module="goal", template=q.template, prompt=q.prompt,
                                     images=q.images)),
        exchange_key("m", ModelQuery(module=q.module, template=q.template, prompt=q.prompt + " ",
                                     images=q.images)),
        exchange_key("m", ModelQuery(module=q.module, template=q.template, prompt=q.prompt,
                                     images=(q.images[0], ModelImage("x", changed_pixels)))),
        exchange_key("m", ModelQuery(module=q.module, template=q.template, prompt=q.prompt,
                                     images=(q.images[0], ModelImage(
                                         "x", q.images[1].pixels.reshape(16, 12, 3))))),
    ]
    assert len({key, *variants}) == len(variants) + 1


def test_a_missing_query_names_its_key_and_the_closest_prompt(tmp_path: Path) -> None:
    record(tmp_path)
    replay = ReplayBackend(tmp_path / "cassettes")
    asked = ModelQuery(module="checker", template="action_checker.txt",
                       prompt="Is the blue block in the gripper?", images=(image(1), image(2)))
    key = exchange_key("gemini/gemini-3-flash", asked)
    with pytest.raises(ModelError) as info:
        replay.complete(asked)
    message = str(info.value)
    assert f"key {key})" in message
    assert "'Is the red block in the gripper?'" in message
    assert "first differ at character 7: recorded 'red block" in message
    moved = ModelQuery(module="goal", template="goal_checker.txt", prompt="Is the task done?",
                       images=(image(5),))
    with pytest.raises(ModelError, match="the prompt is identical, so the images differ"):
        replay.complete(moved)


def test_replay_needs_an_existing_folder(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="no cassette folder .*record:"):
        ReplayBackend(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="the folder is empty"):
        ReplayBackend(tmp_path / "empty").complete(queries()[0])
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "x.json").write_text("{")
    with pytest.raises(ModelError, match="unreadable cassette"):
        ReplayBackend(tmp_path / "broken")


def test_one_folder_can_hold_several_models(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    parser_q, checker_q, _ = queries()
    ask(RecordingBackend(ScriptedBackend("model-a", ['{"result": "a"}']), folder), parser_q)
    ask(RecordingBackend(ScriptedBackend("model-b", ['{"result": "b"}']), folder), checker_q)
    replay = ReplayBackend(folder)
    assert replay.model == f"replay:{folder}"  # several models: none to follow
    assert ask(replay, parser_q).parsed == {"result": "a"}
    assert ask(replay, checker_q).parsed == {"result": "b"}
    ask(RecordingBackend(ScriptedBackend("model-b", ['{"result": "c"}']), folder), parser_q)
    with pytest.raises(ModelError, match="recorded from several models .model-a, model-b"):
        ReplayBackend(folder).complete(parser_q)
