"""Text that is safe to store, log or echo, whatever a model, a program or a client sent.

One boundary for every text that leaves an episode (the results database, a trace, a report,
the sandbox's log, a tool's error reply):

* :func:`safe_text`: valid Unicode (lone surrogates become U+FFFD, so UTF-8 encoding never
  fails), optionally control characters escaped, and at most ``limit`` characters;
* :func:`safe_data`: the same for every string (and key) of JSON-like data;
* :func:`bounded`: a small copy of JSON-like data, for logs that must not grow with what was
  sent (long strings, long lists, deep nesting and huge numbers cut);
* :func:`excerpt`: a short ``repr``-like excerpt of any value, for error messages;
* :func:`readable` (with :func:`readable_number` and :func:`blank`): an event's or a
  summary's value as people read it, on the live display of ``agentic-env run`` and on the
  trace page.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Mapping
from typing import Any

import numpy as np

#: Default cap of one stored text (a failure text, a model's answer), characters.
STORED_TEXT_CHARS = 50_000
#: Default length of an excerpt quoted in an error message, characters.
EXCERPT_CHARS = 80

_SURROGATES = re.compile("[\ud800-\udfff]")
#: C0 and C1 control characters except tab and newline, and DEL.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def safe_text(text: object, limit: int | None = STORED_TEXT_CHARS,
              controls: bool = False) -> str:
    """``text`` (``str()`` of it when not a string) made safe to store.

    Args:
        text: anything; a string is used as it is.
        limit: most characters kept (``None``: no cap); a cut text ends with a note of how
            many characters were left out.
        controls: also escape control characters other than tab and newline (ANSI
            escapes, NUL, carriage return...) as ``\\xNN``, for logs shown on a terminal.
    """
    value = text if isinstance(text, str) else _str(text)
    value = _SURROGATES.sub("\ufffd", value)
    if controls:
        value = _CONTROLS.sub(_escape, value)
    if limit is not None and len(value) > limit:
        return value[:limit] + f"... [{len(value) - limit} more characters]"
    return value


def safe_data(value: Any, limit: int | None = STORED_TEXT_CHARS) -> Any:
    """JSON-like ``value`` with every string and key passed through :func:`safe_text`
    (other leaves unchanged; tuples become lists)."""
    if isinstance(value, str):
        return safe_text(value, limit)
    if isinstance(value, Mapping):
        return {safe_text(key, limit) if isinstance(key, str) else key: safe_data(item, limit)
                for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [safe_data(item, limit) for item in value]
    return value


def bounded(value: Any, text_chars: int = 200, items: int = 16, depth: int = 4) -> Any:
    """A copy of JSON-like ``value`` whose size does not grow with ``value``'s: strings cut
    to ``text_chars``, lists and mappings to ``items`` entries (plus a note of the rest),
    nesting below ``depth`` and anything not plain data replaced by an :func:`excerpt`."""
    if value is None or isinstance(value, bool | float):
        return value
    if isinstance(value, int):
        return value if abs(value) < 10**15 else excerpt(value, text_chars)
    if isinstance(value, str):
        return safe_text(value, text_chars)
    if depth <= 0 or not isinstance(value, Mapping | list | tuple):
        return excerpt(value, text_chars)
    if isinstance(value, Mapping):
        kept = {safe_text(key, text_chars): bounded(item, text_chars, items, depth - 1)
                for key, item in list(value.items())[:items]}
        if len(value) > items:
            kept["..."] = f"{len(value) - items} more entries"
        return kept
    listed: list[Any] = [bounded(item, text_chars, items, depth - 1) for item in value[:items]]
    if len(value) > items:
        listed.append(f"... {len(value) - items} more items")
    return listed


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str:
    """A ``repr``-like excerpt of ``value`` of at most ``limit`` characters, safe to show
    (control characters escaped): strings, containers and nesting are cut before they are
    turned into text, and an integer too long to print is described by its digit count."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 3 * limit:
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    shorter = reprlib.Repr()
    shorter.maxlevel, shorter.maxstring, shorter.maxother = 3, limit, limit
    shorter.maxlist = shorter.maxtuple = shorter.maxdict = shorter.maxset = 8
    try:
        text = shorter.repr(value)
    except (ValueError, RecursionError) as error:  # ints over the digit limit, deep nesting
        text = f"<unprintable {type(value).__name__}: {type(error).__name__}>"
    text = safe_text(text, None, controls=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def readable_number(value: float) -> str:
    """A number for people: rounded to three decimals (metres to the millimetre, seconds to
    the millisecond), without trailing zeros; in exponent form from a million on."""
    rounded = round(float(value), 3)
    return f"{rounded:g}" if abs(rounded) < 1e6 else f"{rounded:.3e}"


def readable(value: Any) -> str:
    """Any event or summary value as plain text for people, never a Python repr: ``yes`` /
    ``no``, numbers by :func:`readable_number` (a float32's noise digits gone), ``(a, b, c)``
    for a list of numbers (a position), other items joined by commas, ``–`` for ``None``."""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, float | np.floating):
        return readable_number(value)
    if isinstance(value, int | np.integer):
        return str(int(value))
    if value is None:
        return "–"
    if isinstance(value, Mapping):
        return ", ".join(f"{key}: {readable(item)}" for key, item in value.items())
    if isinstance(value, list | tuple | np.ndarray):
        items = list(value)
        if items and all(isinstance(item, int | float | np.number)
                         and not isinstance(item, bool) for item in items):
            return "(" + ", ".join(readable(item) for item in items) + ")"
        return ", ".join(readable(item) for item in items) or "none"
    return _str(value)


def blank(value: Any) -> bool:
    """Whether a field's value says nothing and is left out where values are shown: ``None``,
    an empty text, list, tuple or mapping, or an empty array."""
    if isinstance(value, np.ndarray):
        return value.size == 0
    return value is None or (isinstance(value, str | list | tuple | Mapping) and not value)


def _str(value: object) -> str:
    try:
        return str(value)
    except (ValueError, RecursionError) as error:
        return f"<unprintable {type(value).__name__}: {type(error).__name__}>"
