"""The one entry point for model calls: ask, parse, validate, re-ask on malformed output."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable
from typing import Any

from agentic_env.agents.models.base import (
    Backend,
    CallRecord,
    Completion,
    MalformedResponseError,
    ModelError,
    ModelQuery,
    ModelReply,
    Usage,
)
from agentic_env.agents.models.budget import Budget, total_usage
from agentic_env.agents.models.schema import extract_json, validate
from agentic_env.errors import InvalidConfigError

logger = logging.getLogger(__name__)

#: Most schema problems quoted back to the model in one correction note.
MAX_PROBLEMS_QUOTED = 6
#: Why an answer cut off at the model's output limit is rejected (it may be incomplete).
TRUNCATED = ("the answer was cut off at the model's output limit (finish_reason 'length'); "
             "answer again, shorter: keep any reasoning to a sentence")


def correction_note(query: ModelQuery, problems: list[str]) -> str:
    """Text appended to the original prompt when re-asking after a rejected answer."""
    listed = "\n".join(f"- {problem}" for problem in problems[:MAX_PROBLEMS_QUOTED])
    if len(problems) > MAX_PROBLEMS_QUOTED:
        listed += f"\n- ... and {len(problems) - MAX_PROBLEMS_QUOTED} more"
    if query.tools and not query.schema:
        return f"YOUR PREVIOUS ANSWER WAS REJECTED:\n{listed}\nAnswer by calling one of the tools."
    note = (
        "\n\nYOUR PREVIOUS ANSWER WAS REJECTED:\n"
        f"{listed}\n"
        "Answer again with exactly one JSON object and nothing else"
    )
    if query.schema:
        note += f", matching this JSON schema: {json.dumps(query.schema, sort_keys=True)}"
    return note + "."


def tool_summary(completion: Completion) -> dict[str, Any]:
    """What a tool-query answer did, as traces store it: its tool calls, how they were
    obtained (``native`` or ``json-prompt``) and its text."""
    return {"tool_calls": [call.to_dict() for call in completion.tool_calls],
            "tool_mode": completion.tool_mode, "text": completion.text}


def _problems(text: str, query: ModelQuery) -> tuple[dict | None, list[str]]:
    """The parsed answer and the reasons to reject it (empty when accepted)."""
    if query.tools and not query.schema:  # a text answer in a tool conversation
        try:
            return extract_json(text), []
        except MalformedResponseError:
            return {}, []
    try:
        parsed = extract_json(text)
    except MalformedResponseError as exc:
        return None, [str(exc)]
    return parsed, validate(parsed, query.schema)


def ask(
    backend: Backend,
    query: ModelQuery,
    *,
    retries: int = 2,
    budget: Budget | None = None,
    on_call: Callable[[CallRecord], None] | None = None,
) -> ModelReply:
    """Ask ``backend`` and return an answer that parses and satisfies ``query.schema``.

    With ``query.tools`` the answer may instead be tool calls (``reply.tool_calls``; their
    arguments are checked by the tool registry, not here); a text answer to a tool query
    without a schema is accepted as it is. ``tool_choice="required"`` re-asks text answers.
    A malformed answer (no JSON object, one that breaks the schema, or one cut off at the
    model's output limit) is re-asked with the original prompt plus a note listing the
    problems, at most ``retries`` more times. The
    backend does its own bounded retries on transport errors and rate limits.

    Args:
        backend: who answers.
        query: what to ask.
        retries: re-asks after malformed answers (0 = one attempt only).
        budget: charged after every attempt, rejected ones included; checked before each.
        on_call: called exactly once with the call's :class:`CallRecord`, on success and on
            failure alike, before this function returns or raises; its usage includes what a
            failed backend exchange spent (:attr:`ModelError.usage`, e.g. the seconds an
            emulated or a litellm call spent before it timed out), which the budget is not
            charged (no answer came).

    Raises:
        MalformedResponseError: every attempt was malformed.
        BudgetExceededError: the budget was spent before or by an attempt.
        ModelError: the backend failed (a non-``ModelError`` exception from the backend is
            wrapped in one, with the original as its cause).
    """
    if retries < 0:
        raise InvalidConfigError(f"retries must be >= 0, got {retries}")
    texts: list[str] = []
    usages: list[Usage] = []
    errors: list[str] = []

    def finish(reply: ModelReply | None, error: ModelError | None) -> None:
        if on_call is not None:
            on_call(
                CallRecord(
                    query=query,
                    reply=reply,
                    error=None if error is None else f"{type(error).__name__}: {error}",
                    raw_texts=tuple(texts),
                    usage=total_usage(usages),
                    model=backend.name,
                )
            )

    current = query
    try:
        for attempt in range(1, retries + 2):
            if budget is not None:
                budget.check()
            try:
                completion = backend.complete(current)
            except ModelError as exc:
                if exc.usage is not None:  # the failed exchange's time counts as model time
                    usages.append(exc.usage)
                raise
            except Exception as exc:
                raise ModelError(
                    f"{backend.name} failed on a {query.module} query: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            texts.append(completion.text)
            usages.append(completion.usage)
            if budget is not None:
                budget.charge(completion.usage)
            if completion.truncated:
                parsed, problems = None, [TRUNCATED]
            elif completion.tool_calls:
                parsed, problems = tool_summary(completion), []
            elif query.tools and query.tool_choice == "required":
                parsed, problems = None, ["the answer must be a tool call, not text"]
            else:
                parsed, problems = _problems(completion.text, query)
                if parsed is not None and query.tools and not query.schema:
                    parsed = {**tool_summary(completion), **parsed}
            if parsed is not None and not problems:
                reply = ModelReply(
                    parsed=parsed,
                    raw_text=completion.text,
                    usage=total_usage(usages),
                    model=backend.name,
                    attempts=attempt,
                    errors=tuple(errors),
                    tool_calls=completion.tool_calls,
                    tool_mode=completion.tool_mode,
                )
                finish(reply, None)
                return reply
            errors.append("; ".join(problems))
            logger.info(
                "%s answer %d/%d from %s rejected: %s",
                query.module, attempt, retries + 1, backend.name, errors[-1],
            )
            note = correction_note(query, problems)
            if query.tools:  # the note goes at the end of the conversation
                retry_turn = {"role": "user", "content": note.strip()}
                current = dataclasses.replace(query, messages=(*query.messages, retry_turn))
            else:
                current = dataclasses.replace(query, prompt=query.prompt + note)
        raise MalformedResponseError(
            f"{backend.name} gave no well-formed {query.module} answer in {retries + 1} "
            f"attempts; last problems: {errors[-1]}"
        )
    except ModelError as exc:
        finish(None, exc)
        raise
