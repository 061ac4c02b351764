"""ask(): parsing, schema validation, bounded re-asks, budgets and call records."""

from __future__ import annotations

import threading

import pytest

from agentic_env.agents.models import (
    Budget,
    BudgetExceededError,
    CallRecord,
    Completion,
    MalformedResponseError,
    ModelError,
    ModelQuery,
    Usage,
    ask,
    extract_json,
    total_usage,
    validate,
)
from agentic_env.errors import AgenticEnvError, InvalidConfigError

CHECK_SCHEMA = {
    "type": "object",
    "required": ["result", "reasoning"],
    "properties": {
        "result": {"type": "string", "enum": ["YES", "NO"]},
        "reasoning": {"type": "string"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "boxes": {
            "type": "array",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "array", "items": {"type": "integer"}},
        },
        "note": {"type": ["string", "null"]},
    },
}


class ScriptedBackend:
    """Answers with the given texts in order; records what it was asked."""

    def __init__(self, texts: list[str], usage: Usage | None = None) -> None:
        self.name = "scripted"
        self.texts = list(texts)
        self.usage = usage or Usage(
            input_tokens=100, output_tokens=20, latency_s=0.5, cost_usd=0.01
        )
        self.queries: list[ModelQuery] = []

    def complete(self, query: ModelQuery) -> Completion:
        self.queries.append(query)
        return Completion(text=self.texts.pop(0), usage=self.usage)


class BrokenBackend:
    name = "broken"

    def complete(self, query: ModelQuery) -> Completion:
        raise ConnectionResetError("socket closed")


def query() -> ModelQuery:
    return ModelQuery(
        module="checker", template="check.txt", prompt="Is the block on the plate?",
        schema=CHECK_SCHEMA,
    )


# --- schema ----------------------------------------------------------------------------------


def test_validate_accepts_a_conforming_answer() -> None:
    answer = {"result": "YES", "reasoning": "it is", "confidence": 1, "boxes": [[1, 2, 3, 4]],
              "note": None}
    assert validate(answer, CHECK_SCHEMA) == []


def test_validate_names_path_and_expectation_of_each_problem() -> None:
    answer = {"result": "MAYBE", "confidence": 1.5, "boxes": [[1, 2.5], [3]], "note": 3}
    problems = validate(answer, CHECK_SCHEMA)
    assert "$: missing required property 'reasoning'" in problems
    assert '$.result: expected one of "YES", "NO", got "MAYBE"' in problems
    assert "$.confidence: expected at most 1, got 1.5" in problems
    assert "$.boxes[0][1]: expected integer, got number" in problems
    assert "$.note: expected string or null, got integer" in problems
    assert len(problems) == 5


def test_validate_counts_items_and_tells_booleans_from_numbers() -> None:
    assert validate({"result": "NO", "reasoning": "", "boxes": []}, CHECK_SCHEMA) == [
        "$.boxes: expected at least 1 items, got 0"
    ]
    assert validate([[1], [2], [3]], CHECK_SCHEMA["properties"]["boxes"]) == [
        "$: expected at most 2 items, got 3"
    ]
    assert validate(True, {"type": "number"}) == ["$: expected number, got boolean"]
    assert validate(2.0, {"type": "integer"}) == []


def test_validate_rejects_an_unknown_type_name() -> None:
    with pytest.raises(InvalidConfigError, match="use one of object, array"):
        validate(1, {"type": "float"})


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '  \n{"a": 1}\n',
        'Here you go:\n```json\n{"a": 1}\n```\nDone.',
        '```\n{"a": 1}\n```',
        'The answer is {"a": 1} as requested.',
        'Not {this} but {"a": 1}',
        '<think>Maybe {"a": 2}? No.</think>\n{"a": 1}',
        '<THINKING>\n{"draft": true}\n</THINKING> ```json\n{"a": 1}\n```',
    ],
)
def test_extract_json_finds_the_object(text: str) -> None:
    assert extract_json(text) == {"a": 1}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("[1, 2]", "JSON array, not an object"),
        ("I cannot see any block.", "Expecting value"),
        ('{"a": 1', "no JSON object found"),
    ],
)
def test_extract_json_refuses_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(MalformedResponseError, match=reason):
        extract_json(text)


# --- ask -------------------------------------------------------------------------------------


def test_ask_returns_the_parsed_answer_and_records_the_call() -> None:
    backend = ScriptedBackend(['```json\n{"result": "YES", "reasoning": "on the plate"}\n```'])
    records: list[CallRecord] = []
    reply = ask(backend, query(), on_call=records.append)
    assert reply.parsed == {"result": "YES", "reasoning": "on the plate"}
    assert reply.attempts == 1 and reply.errors == () and reply.model == "scripted"
    assert reply.usage == backend.usage
    assert len(records) == 1
    assert records[0].reply == reply and records[0].error is None
    assert records[0].raw_texts == (reply.raw_text,)


def test_ask_re_asks_with_a_correction_note_naming_the_problems() -> None:
    backend = ScriptedBackend([
        "Sure! The block is on the plate.",
        '{"result": "MAYBE", "reasoning": "unsure"}',
        '{"result": "NO", "reasoning": "it fell"}',
    ])
    records: list[CallRecord] = []
    reply = ask(backend, query(), retries=2, on_call=records.append)
    assert reply.parsed["result"] == "NO"
    assert reply.attempts == 3 and len(reply.errors) == 2
    assert "no JSON object found" in reply.errors[0]
    assert "expected one of" in reply.errors[1]
    prompts = [q.prompt for q in backend.queries]
    assert prompts[0] == query().prompt
    assert prompts[1].startswith(query().prompt) and "no JSON object found" in prompts[1]
    assert '$.result: expected one of "YES", "NO", got "MAYBE"' in prompts[2]
    assert '"enum": ["YES", "NO"]' in prompts[2]
    assert reply.usage.input_tokens == 300 and reply.usage.output_tokens == 60
    assert reply.usage.cost_usd == pytest.approx(0.03)
    assert records[0].raw_texts == tuple(
        ["Sure! The block is on the plate.", '{"result": "MAYBE", "reasoning": "unsure"}',
         '{"result": "NO", "reasoning": "it fell"}']
    )
    assert records[0].query == query()


def test_ask_gives_up_after_the_bounded_retries() -> None:
    backend = ScriptedBackend(["nope"] * 5)
    records: list[CallRecord] = []
    with pytest.raises(MalformedResponseError, match="no well-formed checker answer in 2 attempts"):
        ask(backend, query(), retries=1, on_call=records.append)
    assert len(backend.queries) == 2
    assert len(records) == 1 and records[0].reply is None
    assert records[0].error.startswith("MalformedResponseError: ")
    assert records[0].raw_texts == ("nope", "nope")
    assert records[0].usage.input_tokens == 200


def test_ask_wraps_backend_exceptions_as_model_errors() -> None:
    records: list[CallRecord] = []
    with pytest.raises(ModelError, match="ConnectionResetError: socket closed") as info:
        ask(BrokenBackend(), query(), on_call=records.append)
    assert isinstance(info.value.__cause__, ConnectionResetError)
    assert isinstance(info.value, AgenticEnvError)
    assert len(records) == 1 and records[0].raw_texts == () and records[0].model == "broken"


def test_ask_stops_when_the_budget_is_spent() -> None:
    budget = Budget(max_tokens=250)
    backend = ScriptedBackend(['{"result": "YES", "reasoning": "x"}'] * 4)
    records: list[CallRecord] = []
    ask(backend, query(), budget=budget, on_call=records.append)
    ask(backend, query(), budget=budget, on_call=records.append)
    with pytest.raises(BudgetExceededError, match="360 tokens spent .* max_tokens=250 .110 over"):
        ask(backend, query(), budget=budget, on_call=records.append)
    with pytest.raises(BudgetExceededError):
        ask(backend, query(), budget=budget, on_call=records.append)
    assert len(backend.queries) == 3  # the fourth call is refused before reaching the model
    assert [r.error is None for r in records] == [True, True, False, False]
    assert budget.spent.calls == 3 and budget.spent.tokens == 360


def test_budget_on_money_and_unknown_prices() -> None:
    budget = Budget(max_cost_usd=0.015)
    budget.charge(Usage(input_tokens=10, cost_usd=0.01))
    budget.charge(Usage(input_tokens=10, cost_usd=None))
    assert budget.exceeded() is None
    assert budget.spent.unpriced_calls == 1
    spent = r"money budget exceeded: \$0.0200 .*\$0.0050 over"
    with pytest.raises(BudgetExceededError, match=spent):
        budget.charge(Usage(cost_usd=0.01))
    with pytest.raises(InvalidConfigError, match="max_tokens"):
        Budget(max_tokens=-1)


def test_budget_is_thread_safe() -> None:
    budget = Budget()

    def charge_many() -> None:
        for _ in range(1000):
            budget.charge(Usage(input_tokens=1, output_tokens=1, cost_usd=0.5))

    threads = [threading.Thread(target=charge_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert budget.spent.calls == 4000 and budget.spent.tokens == 8000
    assert budget.spent.cost_usd == 2000.0


def test_total_usage_cost_is_unknown_when_any_price_is() -> None:
    known = Usage(input_tokens=1, output_tokens=2, latency_s=0.25, cost_usd=0.5)
    assert total_usage([known, known]) == Usage(2, 4, 0.5, 1.0)
    assert total_usage([known, Usage()]).cost_usd is None
    assert total_usage([]) == Usage(cost_usd=0.0)


def test_an_answer_cut_off_at_the_output_limit_is_asked_again() -> None:
    class CutOff(ScriptedBackend):
        def complete(self, query: ModelQuery) -> Completion:
            completion = super().complete(query)
            return Completion(completion.text, completion.usage,
                              truncated=len(self.queries) == 1)

    backend = CutOff(['{"result": "YES", "reasoning": "a"}', '{"result": "NO", "reasoning": "b"}'])
    reply = ask(backend, ModelQuery("checker", "t", "Is it done?", schema=CHECK_SCHEMA))
    assert reply.parsed["result"] == "NO" and reply.attempts == 2
    assert "output limit" in reply.errors[0] and "shorter" in backend.queries[1].prompt


def test_ask_rejects_negative_retries() -> None:
    with pytest.raises(InvalidConfigError, match="retries"):
        ask(ScriptedBackend([]), query(), retries=-1)
