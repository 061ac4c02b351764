"""Record real model exchanges to a folder and replay them offline, deterministically.

A cassette folder holds one JSON file per exchange, named by its key: the SHA-256 of the
answering backend's name, the module, the prompt and the images' pixels (shape, dtype and
bytes). Replaying the same run asks the same queries, so every answer comes back
byte-for-byte without a network or an API key; a query that was never recorded is an error
that names its key and the closest recorded prompt.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from agentic_env.agents.models.base import (
    Backend,
    Completion,
    ModelError,
    ModelQuery,
    ToolCall,
    Usage,
)

#: Format version written into every cassette.
CASSETTE_VERSION = 1
_PREVIEW_CHARS = 160


def _update_text(digest: Any, text: str) -> None:
    data = text.encode("utf-8")
    digest.update(len(data).to_bytes(8, "little"))
    digest.update(data)


def exchange_key(model: str, query: ModelQuery) -> str:
    """Hex SHA-256 identifying a query to a given backend.

    Covers the backend name, ``query.module``, ``query.prompt`` and each image's shape,
    dtype and pixel bytes (image names, template name, schema and fields are not part of it);
    for a tool query also the tools, the tool choice and the conversation so far, so every
    turn of a tool conversation has its own cassette.
    """
    digest = hashlib.sha256()
    for text in (model, query.module, query.prompt):
        _update_text(digest, text)
    if query.tools:
        conversation = {"tools": list(query.tools), "tool_choice": query.tool_choice,
                        "messages": list(query.messages)}
        _update_text(digest, json.dumps(conversation, sort_keys=True, default=str))
    for image in query.images:
        pixels = np.ascontiguousarray(image.pixels)
        _update_text(digest, f"{pixels.dtype.str}{pixels.shape}")
        digest.update(pixels.tobytes())
    return digest.hexdigest()


def _write_atomic(path: Path, payload: Mapping[str, Any]) -> None:
    """Write JSON so that readers never see a partial file (temp file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, indent=1, sort_keys=True)
            handle.write("\n")
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


class RecordingBackend:
    """Passes queries to ``inner`` and records each answer into ``cassette_dir``.

    Args:
        inner: the backend that really answers (typically litellm).
        cassette_dir: folder of cassette files; created when missing. Re-recording a query
            replaces its cassette.
    """

    def __init__(self, inner: Backend, cassette_dir: str | Path) -> None:
        self.inner = inner
        self.cassette_dir = Path(cassette_dir)
        self.name = inner.name
        self.model: str = getattr(inner, "model", inner.name)

    def complete(self, query: ModelQuery) -> Completion:
        """Answer with ``inner`` and write the exchange's cassette before returning."""
        completion = self.inner.complete(query)
        key = exchange_key(self.name, query)
        _write_atomic(
            self.cassette_dir / f"{key}.json",
            {
                "version": CASSETTE_VERSION,
                "key": key,
                "model": self.name,
                "module": query.module,
                "template": query.template,
                "prompt": query.prompt,
                "images": [
                    {
                        "name": image.name,
                        "shape": list(image.pixels.shape),
                        "sha256": hashlib.sha256(
                            np.ascontiguousarray(image.pixels).tobytes()
                        ).hexdigest(),
                    }
                    for image in query.images
                ],
                "text": completion.text,
                "usage": asdict(completion.usage),
                "tool_calls": [call.to_dict() for call in completion.tool_calls],
                "tool_mode": completion.tool_mode,
                "truncated": completion.truncated,
                "messages": list(query.messages),
            },
        )
        return completion


class ReplayBackend:
    """Answers queries from a cassette folder written by :class:`RecordingBackend`.

    A query matches a cassette recorded by any backend (a folder may hold several models'
    exchanges, e.g. from a per-module composition); the replayed usage is the recorded one.

    Args:
        cassette_dir: the folder of cassettes.

    Raises:
        ModelError: the folder does not exist or a cassette cannot be read.
    """

    def __init__(self, cassette_dir: str | Path) -> None:
        self.cassette_dir = Path(cassette_dir)
        self.name = f"replay:{cassette_dir}"
        if not self.cassette_dir.is_dir():
            raise ModelError(
                f"no cassette folder {str(self.cassette_dir)!r}; record one first with "
                f"--model record:{cassette_dir}:MODEL"
            )
        self._cassettes: dict[str, dict[str, Any]] = {}
        for path in sorted(self.cassette_dir.glob("*.json")):
            try:
                cassette = json.loads(path.read_text(encoding="utf-8"))
                self._cassettes[cassette["key"]] = cassette
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise ModelError(f"unreadable cassette {path}: {exc}") from exc
        self._models = sorted({cassette["model"] for cassette in self._cassettes.values()})
        #: The recorded model whose output conventions the answers follow (the folder's one
        #: model; the folder's name when it holds several or none).
        self.model = self._models[0] if len(self._models) == 1 else self.name

    def complete(self, query: ModelQuery) -> Completion:
        """The recorded answer to ``query``.

        Raises:
            ModelError: nothing was recorded for this query, or several models answered
                it; the message names the key and the closest recorded prompt.
        """
        hits = [
            self._cassettes[key]
            for key in (exchange_key(model, query) for model in self._models)
            if key in self._cassettes
        ]
        if len(hits) > 1:
            models = ", ".join(hit["model"] for hit in hits)
            raise ModelError(
                f"{self.name}: the {query.module} query was recorded from several models "
                f"({models}); keep one model's cassettes per folder"
            )
        if not hits:
            raise ModelError(self._missing_message(query))
        hit = hits[0]
        calls = tuple(ToolCall(c["id"], c["name"], c["arguments"])
                      for c in hit.get("tool_calls", ()))
        return Completion(text=hit["text"], usage=Usage(**hit["usage"]), tool_calls=calls,
                          tool_mode=hit.get("tool_mode", "none"),
                          truncated=bool(hit.get("truncated", False)))

    def _missing_message(self, query: ModelQuery) -> str:
        keys = [exchange_key(model, query) for model in self._models] or [
            exchange_key("<no models recorded>", query)
        ]
        message = (
            f"{self.name}: no recording of this {query.module} query (template "
            f"{query.template!r}, {len(query.images)} images, key {keys[0]}) among "
            f"{len(self._cassettes)} cassettes"
        )
        recorded_all = list(self._cassettes.values())
        same_module = [c for c in recorded_all if c["module"] == query.module]
        same_template = [c for c in same_module if c["template"] == query.template]
        candidates = same_template or same_module or recorded_all
        if not candidates:
            return message + "; the folder is empty. Record the run with --model record:DIR:MODEL"
        closest = max(
            candidates,
            key=lambda c: difflib.SequenceMatcher(None, c["prompt"], query.prompt).ratio(),
        )
        recorded = closest["prompt"]
        first_diff = next(
            (i for i, (a, b) in enumerate(zip(recorded, query.prompt, strict=False)) if a != b),
            min(len(recorded), len(query.prompt)),
        )
        if recorded == query.prompt:
            where = "the prompt is identical, so the images differ"
        else:
            where = (
                f"prompts first differ at character {first_diff}: recorded "
                f"{recorded[first_diff:first_diff + 60]!r} vs asked "
                f"{query.prompt[first_diff:first_diff + 60]!r}"
            )
        preview = " ".join(recorded.split())[:_PREVIEW_CHARS]
        return (
            f"{message}. Closest recorded {closest['module']} prompt (key "
            f"{closest['key']}, model {closest['model']}): {preview!r}; {where}. "
            "Re-record the run if the prompts or scene changed"
        )
