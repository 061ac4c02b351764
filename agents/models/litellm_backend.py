"""Any model litellm knows (cloud providers, local OpenAI-compatible or Ollama servers).

litellm is imported on first use only (``pip install -e '.[agents]'``), with
``LITELLM_LOCAL_MODEL_COST_MAP=True`` so that prices come from its bundled table and importing
it never touches the network.
"""

from __future__ import annotations

import base64
import io
import logging
import os
import time
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

import numpy as np
from PIL import Image

from agentic_env.agents.models.base import (
    Completion,
    MissingAPIKeyError,
    ModelError,
    ModelImage,
    ModelQuery,
    ModelTimeoutError,
    Usage,
)
from agentic_env.agents.models.tool_prompt import (
    parse_native_tool_calls,
    parse_prompt_tool_calls,
    prompt_tool_messages,
)
from agentic_env.errors import InvalidConfigError

logger = logging.getLogger(__name__)

#: Upper bound of one backoff sleep, seconds.
MAX_BACKOFF_S = 60.0
#: ``tool_calling`` options: native where litellm says the model supports function calling,
#: else the JSON format in the prompt; always native; always the prompt format; native only
#: (a model without function calling fails clearly).
TOOL_CALLING: tuple[str, ...] = ("auto", "native", "prompt", "native-only")


def import_litellm() -> ModuleType:
    """The litellm module, imported on first use."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError as exc:
        raise ModelError(
            "the litellm backend needs the 'agents' extra: pip install -e '.[agents]'"
        ) from exc
    litellm.suppress_debug_info = True
    return litellm


def png_data_url(image: ModelImage) -> str:
    """``data:image/png;base64,...`` URL of an (H, W, 3) uint8 RGB image."""
    pixels = np.asarray(image.pixels)
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] != 3:
        raise InvalidConfigError(
            f"image {image.name!r} must be (H, W, 3) uint8 RGB, got {pixels.dtype} {pixels.shape}"
        )
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def vision_messages(query: ModelQuery) -> list[dict[str, Any]]:
    """OpenAI-style chat messages: one user turn with the prompt, then each image as PNG,
    then the conversation's later turns (``query.messages``)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": query.prompt}]
    content.extend(
        {"type": "image_url", "image_url": {"url": png_data_url(image)}} for image in query.images
    )
    return [{"role": "user", "content": content}, *(dict(m) for m in query.messages)]


def answer_text(message: Any, tool_mode: str) -> str:
    """The text of a provider's answer message (``None``: no message): its content; without
    content, its refusal (OpenAI's ``refusal`` field, which litellm keeps among the
    provider-specific fields), or for a query sent without tools its
    one tool call's arguments (providers that return structured output as a forced tool
    call); else ``""``."""
    if message is None:
        return ""
    content = getattr(message, "content", None)
    if content:
        return str(content)
    extra = getattr(message, "provider_specific_fields", None) or {}
    refusal = getattr(message, "refusal", None) or extra.get("refusal")
    if refusal:
        return str(refusal)
    calls = getattr(message, "tool_calls", None) or []
    if tool_mode == "none" and len(calls) == 1:
        arguments = getattr(getattr(calls[0], "function", None), "arguments", None)
        return arguments if isinstance(arguments, str) else ""
    return ""


class LiteLLMBackend:
    """Answers queries with a litellm model.

    Args:
        model: litellm model name, e.g. ``gemini/gemini-3-flash``, ``gpt-4o``,
            ``ollama/llama3.2`` or ``openai/<name>`` with ``api_base`` for a local server.
        timeout_s: per-request timeout, seconds (> 0).
        max_retries: retries after a rate limit, timeout, connection or server error (>= 0);
            other errors (bad request, authentication...) fail at once.
        temperature: sampling temperature (providers that reject it get none).
        api_base: URL of a custom or local server; skips the API-key check.
        json_mode: ask for JSON output (the query's schema where litellm says the provider
            supports response schemas, else a plain JSON object).
        backoff_s: first backoff sleep, seconds; doubles after each retry, at most
            :data:`MAX_BACKOFF_S`.
        sleep: how to wait between retries (injectable for tests).
        completion_kwargs: extra keyword arguments for ``litellm.completion`` (e.g.
            ``mock_response`` in tests, ``api_key``).
        tool_calling: how tool queries are sent, one of :data:`TOOL_CALLING`; the mode used
            is reported in each completion's ``tool_mode`` (and so in the trace).

    Raises:
        InvalidConfigError: a numeric option is out of range.
    """

    def __init__(
        self,
        model: str,
        *,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        temperature: float = 0.0,
        api_base: str | None = None,
        json_mode: bool = True,
        backoff_s: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        completion_kwargs: Mapping[str, Any] | None = None,
        tool_calling: str = "auto",
    ) -> None:
        if tool_calling not in TOOL_CALLING:
            raise InvalidConfigError(
                f"tool_calling {tool_calling!r}; valid: {', '.join(TOOL_CALLING)}")
        if timeout_s <= 0:
            raise InvalidConfigError(f"timeout_s must be > 0 seconds, got {timeout_s}")
        if max_retries < 0:
            raise InvalidConfigError(f"max_retries must be >= 0, got {max_retries}")
        if backoff_s < 0:
            raise InvalidConfigError(f"backoff_s must be >= 0 seconds, got {backoff_s}")
        self.name = model
        self.model = model
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.temperature = temperature
        self.api_base = api_base
        self.json_mode = json_mode
        self.backoff_s = backoff_s
        self.sleep = sleep
        self.completion_kwargs = dict(completion_kwargs or {})
        self.tool_calling = tool_calling
        self._environment_checked = False
        self._schema_refused = False

    def check_environment(self) -> None:
        """Fail early when the provider's API key is not set.

        Skipped with ``api_base`` or an ``api_key`` in ``completion_kwargs``. Server-address
        variables (``*_API_BASE``) are not required: litellm has defaults for local servers.

        Raises:
            InvalidConfigError: litellm cannot tell the provider from the model name.
            MissingAPIKeyError: the message names the environment variable(s) to set.
        """
        if self._environment_checked:
            return
        litellm = import_litellm()
        try:
            litellm.get_llm_provider(model=self.model, api_base=self.api_base)
        except litellm.BadRequestError as exc:
            raise InvalidConfigError(
                f"litellm does not know the provider of model {self.model!r}; prefix it with "
                "one, e.g. 'gemini/gemini-3-flash', 'openai/gpt-4o', 'ollama/llama3.2' "
                "(see https://docs.litellm.ai/docs/providers), or use sim-oracle or replay:DIR"
            ) from exc
        if self.api_base is None and "api_key" not in self.completion_kwargs:
            report = litellm.validate_environment(model=self.model)
            missing = [key for key in report["missing_keys"] if not key.endswith("_API_BASE")]
            if missing:
                names = " or ".join(missing)
                raise MissingAPIKeyError(
                    f"model {self.model!r} needs an API key: set the environment variable "
                    f"{names} (e.g. export {missing[-1]}=...), or choose another model "
                    "(--model sim-oracle runs offline)"
                )
        self._environment_checked = True

    def _response_format(self, query: ModelQuery) -> dict[str, Any] | None:
        if not self.json_mode:
            return None
        litellm = import_litellm()
        if (query.schema and not self._schema_refused
                and litellm.supports_response_schema(model=self.model)):
            return {
                "type": "json_schema",
                "json_schema": {"name": f"{query.module}_answer", "schema": dict(query.schema)},
            }
        return {"type": "json_object"}

    def tool_mode(self, query: ModelQuery) -> str:
        """How ``query``'s tools are sent: ``native``, ``json-prompt`` or ``none``.

        Raises:
            ModelError: ``tool_calling="native-only"`` and litellm does not know the model to
                support function calling.
        """
        if not query.tools:
            return "none"
        if self.tool_calling == "native":
            return "native"
        if self.tool_calling == "prompt":
            return "json-prompt"
        try:
            native = bool(import_litellm().supports_function_calling(model=self.model))
        except Exception as exc:  # litellm raises for models missing from its table
            logger.debug("supports_function_calling(%s): %s", self.model, exc)
            native = False
        if native:
            return "native"
        if self.tool_calling == "native-only":
            raise ModelError(
                f"model {self.model!r} has no native function calling (litellm."
                "supports_function_calling is false) and tool_calling='native-only' forbids "
                "the JSON-in-prompt fallback; choose a model with tool calling or allow the "
                "fallback (tool_calling='auto')")
        return "json-prompt"

    def _request(self, query: ModelQuery, tool_mode: str = "none") -> dict[str, Any]:
        """Keyword arguments of ``litellm.completion`` for ``query``."""
        request: dict[str, Any] = {
            "model": self.model,
            "messages": (prompt_tool_messages(vision_messages(query), query.tools)
                         if tool_mode == "json-prompt" else vision_messages(query)),
            "timeout": self.timeout_s,
            "temperature": self.temperature,
            "num_retries": 0,  # retries happen here, with backoff, and are counted
            "max_retries": 0,
            "drop_params": True,  # providers that reject an option get none
        }
        if tool_mode == "native":
            request["tools"] = [dict(tool) for tool in query.tools]
            request["tool_choice"] = query.tool_choice
        response_format = None if query.tools else self._response_format(query)
        if response_format is not None:
            request["response_format"] = response_format
        if self.api_base is not None:
            request["api_base"] = self.api_base
        request.update(self.completion_kwargs)
        return request

    def _send(self, litellm: ModuleType, request: dict[str, Any]) -> Any:
        """``litellm.completion`` with bounded retries and backoff on transient errors."""
        transient = (
            litellm.RateLimitError,
            litellm.Timeout,
            litellm.APIConnectionError,
            litellm.InternalServerError,
            litellm.ServiceUnavailableError,
            litellm.BadGatewayError,
        )
        attempt = 1
        while True:
            try:
                return litellm.completion(**request)
            except transient as exc:
                if attempt > self.max_retries:
                    raise self._give_up(exc, attempt) from exc
                delay = min(self.backoff_s * 2 ** (attempt - 1), MAX_BACKOFF_S)
                logger.warning(
                    "%s: %s on attempt %d/%d; retrying in %.1f s",
                    self.model, type(exc).__name__, attempt, self.max_retries + 1, delay,
                )
                self.sleep(delay)
                attempt += 1

    def complete(self, query: ModelQuery) -> Completion:
        """Ask the model; bounded retries with exponential backoff on transient errors.

        A provider that refuses the JSON schema as a response format is asked once more, and
        from then on, for a plain JSON object (the schema is still checked by ``ask``).

        Raises:
            InvalidConfigError: the model name has no provider litellm knows.
            MissingAPIKeyError: the provider's key is not set.
            ModelTimeoutError: every attempt timed out.
            ModelError: retries ran out on rate limits or transport errors, or the request
                was refused (bad request, authentication, unknown model...). Either error
                carries what the exchange spent as its ``usage`` (:meth:`_spent`), so a
                failed call's wait counts in the episode's model time.
        """
        litellm = import_litellm()
        self.check_environment()
        tool_mode = self.tool_mode(query)
        request = self._request(query, tool_mode)
        started = time.monotonic()
        try:
            try:
                response = self._send(litellm, request)
            except litellm.BadRequestError as exc:
                if request.get("response_format", {}).get("type") != "json_schema":
                    raise
                logger.warning(
                    "%s refused the response schema (%s); asking for plain JSON objects instead",
                    self.model, exc,
                )
                self._schema_refused = True
                request["response_format"] = {"type": "json_object"}
                response = self._send(litellm, request)
        except ModelError as exc:  # retries ran out: time-outs, rate limits, transport
            exc.usage = self._spent(
                started, refused=isinstance(exc.__cause__, litellm.RateLimitError))
            raise
        except litellm.AuthenticationError as exc:
            raise ModelError(
                f"model {self.model!r} refused the API key ({exc}); check the provider's "
                "key environment variable", usage=self._spent(started, refused=True)
            ) from exc
        except Exception as exc:
            raise ModelError(
                f"model {self.model!r} refused the request: {type(exc).__name__}: {exc}",
                usage=self._spent(started, refused=True)
            ) from exc
        latency = time.monotonic() - started
        choice = response.choices[0] if getattr(response, "choices", None) else None
        message = getattr(choice, "message", None)
        text = answer_text(message, tool_mode)
        usage = self._usage(litellm, response, latency)
        if tool_mode == "native":
            calls = parse_native_tool_calls(getattr(message, "tool_calls", None) or [])
        elif tool_mode == "json-prompt":
            calls = parse_prompt_tool_calls(text, len(query.messages))
        else:
            calls = ()
        truncated = getattr(choice, "finish_reason", None) == "length"
        return Completion(text=text, usage=usage, tool_calls=calls, tool_mode=tool_mode,
                          truncated=truncated)

    @staticmethod
    def _spent(started: float, *, refused: bool) -> Usage:
        """What a failed exchange spent: the seconds since ``started`` (``time.monotonic``),
        every attempt and backoff, as an answered call's latency counts them; no tokens. Its
        price is nothing when the provider refused the request (a rate limit included), else
        unknown (``None``: a provider may bill work whose answer never arrived)."""
        return Usage(latency_s=time.monotonic() - started, cost_usd=0.0 if refused else None)

    def _give_up(self, exc: Exception, attempts: int) -> ModelError:
        if isinstance(exc, import_litellm().Timeout):
            return ModelTimeoutError(
                f"model {self.model!r} did not answer within {self.timeout_s} s in {attempts} "
                "attempts; raise the timeout (e.g. ?timeout=120) or check the server"
            )
        return ModelError(
            f"model {self.model!r} failed {attempts} attempts ({type(exc).__name__}: {exc}); "
            "wait and retry, or raise max_retries (e.g. ?max_retries=6)"
        )

    def _usage(self, litellm: ModuleType, response: Any, latency_s: float) -> Usage:
        usage = getattr(response, "usage", None)
        try:
            cost: float | None = float(litellm.completion_cost(completion_response=response))
        except Exception as exc:  # litellm raises assorted errors for models without a price
            logger.debug("no price for %s: %s", self.model, exc)
            cost = None
        return Usage(
            input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            latency_s=latency_s,
            cost_usd=cost,
        )
