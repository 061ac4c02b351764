"""Text made safe to store, log or echo: valid Unicode, escaped controls, bounded sizes."""

from __future__ import annotations

import json

from agentic_env.text import STORED_TEXT_CHARS, bounded, excerpt, safe_data, safe_text


def test_safe_text_replaces_lone_surrogates_escapes_controls_and_caps() -> None:
    assert safe_text("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert safe_text("😀 ok\n\t") == "😀 ok\n\t"
    assert safe_text("\x1b[31mred\r\x00", controls=True) == "\\x1b[31mred\\x0d\\x00"
    capped = safe_text("x" * (STORED_TEXT_CHARS + 5))
    assert capped.startswith("x" * STORED_TEXT_CHARS) and capped.endswith("[5 more characters]")
    assert safe_text(12) == "12"
    capped.encode("utf-8")


def test_safe_data_reaches_every_string_and_key() -> None:
    data = safe_data({"k\ud800": ["v\udc00", ("w",), 3, None]}, limit=10)
    assert data == {"k\ufffd": ["v\ufffd", ["w"], 3, None]}
    json.dumps(data, ensure_ascii=False).encode("utf-8")


def test_bounded_keeps_a_small_copy_whatever_the_size() -> None:
    nested: list = []
    for _ in range(5000):
        nested = [nested]
    huge = {"name": "x" * 10**6, "values": list(range(10**5)), "big": 10**400, "deep": nested,
            "object": object()}
    kept = bounded(huge)
    assert len(json.dumps(kept)) < 2_000
    assert kept["values"][-1] == "... 99984 more items"
    assert kept["big"] == "an integer of about 400 digits"
    assert bounded({"pose": [0.4, -0.1, 0.02], "name": "lemon", "n": 3, "ok": True}) == {
        "pose": [0.4, -0.1, 0.02], "name": "lemon", "n": 3, "ok": True}


def test_excerpt_is_short_for_any_value() -> None:
    nested: list = []
    for _ in range(5000):
        nested = [nested]
    for value in ("x" * 10**7, 10**10_000, -(10**309), nested, [["a" * 10**5] * 100] * 100,
                  {"k" * 10**5: 1}, "\x1b[2J", b"\xff" * 10**5):
        text = excerpt(value)
        assert len(text) <= 80 and "\x1b" not in text
        text.encode("utf-8")
    assert excerpt(10**400) == "an integer of about 400 digits"
    assert excerpt("lemon") == "'lemon'"
