"""Function calling in the model layer, offline: litellm against a local OpenAI-compatible
server (the network boundary), the JSON-in-prompt fallback, cassettes of tool conversations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.chat_server import tool_call as call

from agentic_env.agents.models import CallRecord, LiteLLMBackend, ModelError, ModelQuery, ask
from agentic_env.agents.models.base import ToolCall
from agentic_env.agents.models.conversation import NUDGE, run_tool_conversation
from agentic_env.agents.models.litellm_backend import import_litellm
from agentic_env.agents.models.replay import RecordingBackend, ReplayBackend
from agentic_env.agents.skills.result import SkillResult, ok
from agentic_env.agents.tools import ToolRegistry

litellm = import_litellm()
pytestmark = pytest.mark.filterwarnings("ignore:Item .*ReadOnly:UserWarning")


class Counter:
    """A tiny tool set: ``add`` to a running total, ``finish``."""

    def __init__(self) -> None:
        self.total = 0.0
        self.finished = False

        def add(amount: float) -> SkillResult:
            """Add to the running total.

            Args:
                amount: how much to add, in [-10, 10].
            """
            self.total += amount
            return ok(f"total is {self.total:g}", total=self.total)

        def finish() -> SkillResult:
            """End the task."""
            self.finished = True
            return ok("finished")

        self.tools = ToolRegistry([add, finish])

    def execute(self, call: ToolCall) -> tuple[str, dict[str, Any]]:
        result = self.tools.call(call.name, dict(call.arguments))
        return result.render(), result.to_dict()


def tool_query(counter: Counter) -> ModelQuery:
    return ModelQuery(module="tools", template="test", prompt="Make the total 5, then finish.",
                      tools=tuple(counter.tools.definitions()))


@pytest.fixture
def chat(chat_server: Any) -> Any:
    """Local chat servers whose n-th answer reports 100 + n prompt tokens and 7 completion
    tokens."""
    return lambda steps: chat_server(steps, usage=lambda count: (100 + count, 7))


def backend(url: str, tool_calling: str = "native") -> LiteLLMBackend:
    return LiteLLMBackend("openai/local-model", api_base=url, max_retries=0,
                          tool_calling=tool_calling, completion_kwargs={"api_key": "x"})


SCRIPT = [
    ("ok", {"content": None, "tool_calls": [call("add", {"amount": 2}, "c1"),
                                            call("add", {"amount": 99}, "c2")]}),
    ("ok", {"content": "Adding the rest.", "tool_calls": [call("add", {"amount": 3}, "c3")]}),
    ("ok", {"content": "The total is 5."}),
    ("ok", {"content": None, "tool_calls": [call("finish", {}, "c4")]}),
]


def test_native_tool_conversation_with_per_turn_accounting(chat):
    server = chat(SCRIPT)
    counter = Counter()
    records: list[CallRecord] = []
    result = run_tool_conversation(backend(server.url), tool_query(counter), counter.execute,
                                   finished=lambda: counter.finished, on_call=records.append)
    assert result.stop == "finished" and counter.total == 5
    assert [len(t.calls) for t in result.turns] == [2, 1, 0, 1]
    assert "BAD_ARGS" in result.turns[0].results[1]["text"]  # amount=99 is out of range
    assert "[-10, 10]" in result.turns[0].results[1]["text"]
    first = server.requests[0]
    assert first["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in first["tools"]] == ["add", "finish"]
    assert "response_format" not in first
    second = server.requests[1]["messages"]
    assert second[1]["role"] == "assistant" and second[1]["tool_calls"][0]["id"] == "c1"
    assert [m["tool_call_id"] for m in second[2:]] == ["c1", "c2"]
    assert server.requests[3]["messages"][-1] == {"role": "user", "content": NUDGE}
    assert [r.usage.input_tokens for r in records] == [101, 102, 103, 104]
    assert result.usage.input_tokens == 410 and result.usage.output_tokens == 28
    assert all(t.tool_mode == "native" for t in result.turns)
    assert all(r.reply is not None and r.reply.tool_mode == "native" for r in records)


def test_a_provider_error_mid_conversation_ends_it_without_raising(chat):
    server = chat([SCRIPT[0], ("500", "the provider fell over")])
    counter = Counter()
    records: list[CallRecord] = []
    result = run_tool_conversation(backend(server.url), tool_query(counter), counter.execute,
                                   finished=lambda: counter.finished, on_call=records.append)
    assert result.stop == "model_error" and "fell over" in (result.error or "")
    assert len(result.turns) == 1 and counter.total == 2  # the first turn's call did run
    assert records[-1].reply is None and "fell over" in (records[-1].error or "")
    assert len(result.messages) == 3  # assistant + two tool results kept for a resume


def test_json_prompt_fallback_for_models_without_function_calling(chat):
    server = chat([("ok", {"content": '{"tool_calls": [{"name": "add", "arguments": '
                                      '{"amount": 5}}]}'}),
                   ("ok", {"content": '```json\n{"tool_calls": [{"name": "finish"}]}\n```'})])
    counter = Counter()
    model = backend(server.url, tool_calling="auto")
    assert model.tool_mode(tool_query(counter)) == "json-prompt"
    result = run_tool_conversation(model, tool_query(counter), counter.execute,
                                   finished=lambda: counter.finished)
    assert result.stop == "finished" and counter.total == 5
    assert [t.tool_mode for t in result.turns] == ["json-prompt", "json-prompt"]
    first = server.requests[0]
    assert "tools" not in first and '"tool_calls"' in first["messages"][0]["content"][0]["text"]
    later = server.requests[1]["messages"]
    assert later[1] == {"role": "assistant", "content": json.dumps(
        {"tool_calls": [{"name": "add", "arguments": {"amount": 5}}]})}
    assert later[2]["role"] == "user" and later[2]["content"].startswith("TOOL RESULT (add")


def test_native_only_fails_clearly_without_function_calling(chat):
    server = chat([])
    with pytest.raises(ModelError, match="no native function calling"):
        backend(server.url, tool_calling="native-only").complete(tool_query(Counter()))


def test_auto_uses_native_calls_where_litellm_says_so(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    calls = [{"id": "t1", "type": "function",
              "function": {"name": "add", "arguments": '{"amount": 1.5}'}}]
    model = LiteLLMBackend("gpt-4o", max_retries=0,
                           completion_kwargs={"mock_tool_calls": calls})
    reply = ask(model, tool_query(Counter()))
    assert reply.tool_mode == "native"
    assert reply.parsed == {"tool_calls": [{"id": "t1", "name": "add",
                                            "arguments": {"amount": 1.5}}],
                            "tool_mode": "native", "text": reply.raw_text}
    assert reply.tool_calls == (ToolCall("t1", "add", {"amount": 1.5}),)


def test_malformed_arguments_reach_the_registry_as_a_bad_args_result(chat):
    server = chat([("ok", {"content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "amount=3"}}]}),
        ("ok", {"content": None, "tool_calls": [call("finish", {}, "c2")]})])
    counter = Counter()
    result = run_tool_conversation(backend(server.url), tool_query(counter), counter.execute,
                                   finished=lambda: counter.finished)
    assert result.stop == "finished" and counter.total == 0
    assert "unknown argument(s) _raw" in result.turns[0].results[0]["text"]


def test_required_tool_choice_re_asks_a_text_answer(chat):
    server = chat([("ok", {"content": "I think 5."}),
                   ("ok", {"content": None, "tool_calls": [call("add", {"amount": 5}, "c")]})])
    query = tool_query(Counter())
    reply = ask(backend(server.url), ModelQuery(**{**query.__dict__, "tool_choice": "required"}))
    assert reply.attempts == 2 and reply.tool_calls[0].name == "add"
    assert "must be a tool call" in server.requests[1]["messages"][-1]["content"]


def test_cassettes_record_and_replay_a_tool_conversation(chat, tmp_path: Path):
    server = chat(SCRIPT)
    counter = Counter()
    recorder = RecordingBackend(backend(server.url), tmp_path)
    recorded = run_tool_conversation(recorder, tool_query(counter), counter.execute,
                                     finished=lambda: counter.finished)
    assert len(list(tmp_path.glob("*.json"))) == 4
    cassette = json.loads(next(iter(tmp_path.glob("*.json"))).read_text())
    assert {"tool_calls", "tool_mode", "messages"} <= set(cassette)
    replay_counter = Counter()
    replayed = run_tool_conversation(ReplayBackend(tmp_path), tool_query(replay_counter),
                                     replay_counter.execute,
                                     finished=lambda: replay_counter.finished)
    assert replayed.stop == recorded.stop == "finished" and replay_counter.total == 5
    assert [t.calls for t in replayed.turns] == [t.calls for t in recorded.turns]
    assert replayed.usage.input_tokens == recorded.usage.input_tokens
    assert len(server.requests) == 4  # the replay never reached the server
    diverged = Counter()
    diverged.total = 1  # another tool result -> another conversation -> not recorded
    with_error = run_tool_conversation(ReplayBackend(tmp_path), tool_query(diverged),
                                       lambda c: ("OK: total is 9", {}),
                                       finished=lambda: diverged.finished)
    assert with_error.stop == "model_error" and "no recording" in (with_error.error or "")
