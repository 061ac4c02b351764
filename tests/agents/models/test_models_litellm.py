"""The litellm backend, offline: litellm's mock_response, and a local OpenAI-compatible server.

Only the network boundary is replaced: ``mock_response`` short-cuts litellm's HTTP call, and
the local server (``chat_server``, :mod:`support.chat_server`) answers the real HTTP requests
litellm's OpenAI client sends.
"""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from PIL import Image

from agentic_env.agents.models import (
    CallRecord,
    LiteLLMBackend,
    MissingAPIKeyError,
    ModelError,
    ModelImage,
    ModelQuery,
    ModelTimeoutError,
    ask,
)
from agentic_env.agents.models.litellm_backend import import_litellm, vision_messages
from agentic_env.errors import InvalidConfigError

litellm = import_litellm()  # the agents extra is part of the test install

# litellm's own pydantic models warn about TypedDict qualifiers on first use.
pytestmark = pytest.mark.filterwarnings("ignore:Item .*ReadOnly:UserWarning")

SCHEMA = {
    "type": "object",
    "required": ["result"],
    "properties": {"result": {"type": "string", "enum": ["EXECUTE", "REJECT"]}},
}


def query(images: int = 2) -> ModelQuery:
    rng = np.random.default_rng(0)
    return ModelQuery(
        module="grasp",
        template="grasp_evaluation.txt",
        prompt="Judge the grasp. Answer in JSON.",
        images=tuple(
            ModelImage(f"view{i}", rng.integers(0, 256, (6, 8, 3), dtype=np.uint8))
            for i in range(images)
        ),
        schema=SCHEMA,
    )


class Sleeps(list[float]):
    """Records backoff sleeps instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


# --- tests ---------------------------------------------------------------------------------


def test_vision_messages_carry_the_prompt_then_each_image_as_png() -> None:
    q = query(images=2)
    (message,) = vision_messages(q)
    assert message["role"] == "user"
    text, *images = message["content"]
    assert text == {"type": "text", "text": q.prompt}
    assert len(images) == 2
    for part, image in zip(images, q.images, strict=True):
        assert part["type"] == "image_url"
        url = part["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
        decoded = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
        assert decoded.format == "PNG"
        np.testing.assert_array_equal(np.asarray(decoded), image.pixels)


def test_images_must_be_rgb_uint8() -> None:
    bad = ModelQuery(module="detector", template="t", prompt="p",
                     images=(ModelImage("depth", np.zeros((4, 4), np.float32)),))
    with pytest.raises(InvalidConfigError, match="'depth' must be .H, W, 3. uint8 RGB"):
        vision_messages(bad)


def test_the_server_receives_vision_content_and_a_json_request(chat_server: Any) -> None:
    server = chat_server([("ok", 'Here:\n```json\n{"result": "EXECUTE"}\n```')])
    reply = ask(server.backend(), query(images=1))
    assert reply.parsed == {"result": "EXECUTE"}
    (request,) = server.requests
    assert request["model"] == "local-vlm" and request["temperature"] == 0.0
    assert request["response_format"] == {"type": "json_object"}
    content = request["messages"][0]["content"]
    assert [part["type"] for part in content] == ["text", "image_url"]
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (321, 12)
    assert reply.usage.cost_usd is None  # a local model has no price in litellm's table
    assert reply.usage.latency_s > 0


def test_rate_limit_is_retried_with_backoff_then_succeeds(chat_server: Any) -> None:
    server = chat_server([("429", "slow down"), ("429", "slow down"),
                          ("ok", '{"result": "REJECT"}')])
    sleeps = Sleeps()
    completion = server.backend(sleep=sleeps, backoff_s=0.5).complete(query())
    assert json.loads(completion.text) == {"result": "REJECT"}
    assert len(server.requests) == 3
    assert sleeps == [0.5, 1.0]


def test_a_slow_server_times_out_after_bounded_retries(chat_server: Any) -> None:
    server = chat_server([("sleep", 2.0), ("sleep", 2.0), ("ok", '{"result": "EXECUTE"}')])
    sleeps = Sleeps()
    backend = server.backend(timeout_s=0.3, max_retries=1, sleep=sleeps)
    with pytest.raises(ModelTimeoutError, match=r"within 0.3 s in 2 attempts.*\?timeout="):
        backend.complete(query())
    assert len(server.requests) == 2 and sleeps == [1.0]


def test_a_call_that_timed_out_books_the_seconds_it_waited(chat_server: Any) -> None:
    """Both attempts ran to the 0.3 s time-out: the failure carries those seconds (no tokens,
    an unknown price) and ``ask`` books them in the call's record, so in the episode's model
    time, as an answered call's wait is."""
    server = chat_server([("sleep", 2.0), ("sleep", 2.0)])
    backend = server.backend(timeout_s=0.3, max_retries=1, sleep=Sleeps())
    records: list[CallRecord] = []
    with pytest.raises(ModelTimeoutError) as failed:
        ask(backend, query(), on_call=records.append)
    spent = failed.value.usage
    assert spent is not None and 2 * 0.3 <= spent.latency_s < 2 * 2.0
    assert (spent.input_tokens, spent.output_tokens, spent.cost_usd) == (0, 0, None)
    (record,) = records
    assert record.reply is None and record.usage == spent


@pytest.mark.usefixtures("openai_key")
def test_a_refused_request_books_its_wait_and_costs_nothing() -> None:
    error = litellm.BadRequestError("image too large", model="gpt-4o", llm_provider="openai")
    backend = LiteLLMBackend("gpt-4o", sleep=Sleeps(), completion_kwargs={"mock_response": error})
    with pytest.raises(ModelError) as failed:
        backend.complete(query())
    spent = failed.value.usage
    assert spent is not None and spent.latency_s >= 0.0 and spent.cost_usd == 0.0


def test_a_refused_schema_falls_back_to_plain_json(chat_server: Any) -> None:
    server = chat_server([
        ("400", "response_format json_schema is not supported"),
        ("ok", '{"result": "EXECUTE"}'),
        ("ok", '{"result": "REJECT"}'),
    ])
    backend = server.backend("openai/gpt-4o")  # litellm lists response schemas for gpt-4o
    assert ask(backend, query()).parsed == {"result": "EXECUTE"}
    assert ask(backend, query()).parsed == {"result": "REJECT"}
    formats = [request["response_format"]["type"] for request in server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]
    assert server.requests[0]["response_format"]["json_schema"]["schema"] == SCHEMA


@pytest.mark.usefixtures("openai_key")
def test_timeouts_are_retried_then_reported() -> None:
    sleeps = Sleeps()
    timeout = litellm.Timeout("mock timeout", model="gpt-4o", llm_provider="openai")
    backend = LiteLLMBackend(
        "gpt-4o", max_retries=3, sleep=sleeps, completion_kwargs={"mock_response": timeout}
    )
    with pytest.raises(ModelTimeoutError, match="did not answer within 60.0 s in 4 attempts"):
        backend.complete(query())
    assert sleeps == [1.0, 2.0, 4.0]


@pytest.mark.usefixtures("openai_key")
@pytest.mark.parametrize(
    "error",
    [
        litellm.RateLimitError("mock rate limit", llm_provider="openai", model="gpt-4o"),
        litellm.APIConnectionError("mock reset", llm_provider="openai", model="gpt-4o"),
        ConnectionError("socket closed"),  # litellm reports it as an internal server error
    ],
)
def test_transient_errors_exhaust_bounded_retries(error: Exception) -> None:
    sleeps = Sleeps()
    backend = LiteLLMBackend(
        "gpt-4o", max_retries=2, sleep=sleeps, completion_kwargs={"mock_response": error}
    )
    with pytest.raises(ModelError, match="failed 3 attempts.*raise max_retries") as failed:
        backend.complete(query())
    assert sleeps == [1.0, 2.0]
    # its wait is booked; a rate-limited request was not served (not billed), a broken one
    # may have been
    spent = failed.value.usage
    assert spent is not None and spent.latency_s >= 0.0
    assert spent.cost_usd == (0.0 if isinstance(error, litellm.RateLimitError) else None)


@pytest.mark.usefixtures("openai_key")
def test_a_refused_request_is_not_retried() -> None:
    sleeps = Sleeps()
    error = litellm.BadRequestError("image too large", model="gpt-4o", llm_provider="openai")
    backend = LiteLLMBackend("gpt-4o", sleep=sleeps, completion_kwargs={"mock_response": error})
    with pytest.raises(ModelError, match="refused the request: BadRequestError.*image too large"):
        backend.complete(query())
    assert sleeps == []


def test_a_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    backend = LiteLLMBackend("gemini/gemini-3-flash", completion_kwargs={"mock_response": "{}"})
    with pytest.raises(MissingAPIKeyError, match="GEMINI_API_KEY") as info:
        backend.complete(query())
    assert "export GEMINI_API_KEY=" in str(info.value)
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    assert LiteLLMBackend("gemini/gemini-3-flash").check_environment() is None


def test_an_unknown_provider_is_a_config_error() -> None:
    with pytest.raises(InvalidConfigError, match="does not know the provider.*'ollama/llama3.2'"):
        LiteLLMBackend("my-model").check_environment()


@pytest.mark.usefixtures("openai_key")
def test_usage_and_cost_of_a_priced_model() -> None:
    backend = LiteLLMBackend(
        "gpt-4o", completion_kwargs={"mock_response": '{"result": "EXECUTE"}'}
    )
    completion = backend.complete(query())
    usage = completion.usage
    assert completion.text == '{"result": "EXECUTE"}'
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    info = litellm.get_model_info("gpt-4o")
    expected = (usage.input_tokens * info["input_cost_per_token"]
                + usage.output_tokens * info["output_cost_per_token"])
    assert usage.cost_usd == pytest.approx(expected)
    assert usage.latency_s >= 0


def test_response_format_follows_provider_support(monkeypatch: pytest.MonkeyPatch) -> None:
    schema_format = LiteLLMBackend("gpt-4o")._response_format(query())
    assert schema_format == {
        "type": "json_schema", "json_schema": {"name": "grasp_answer", "schema": SCHEMA},
    }
    assert LiteLLMBackend("ollama/llama3.2")._response_format(query()) == {"type": "json_object"}
    assert LiteLLMBackend("gpt-4o", json_mode=False)._response_format(query()) is None


def test_importing_the_package_does_not_import_litellm() -> None:
    code = (
        "import sys, agentic_env, agentic_env.agents.models as m; "
        "m.LiteLLMBackend('gpt-4o'); "
        "sys.exit(1 if 'litellm' in sys.modules else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"timeout_s": 0}, "timeout_s"), ({"max_retries": -1}, "max_retries"),
     ({"backoff_s": -1}, "backoff_s")],
)
def test_options_are_checked(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidConfigError, match=message):
        LiteLLMBackend("gpt-4o", **kwargs)
