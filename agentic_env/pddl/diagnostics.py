"""Error messages a model can act on, from unified-planning's PDDL parser errors: the line
and column quoted, unknown names with the declared objects and predicates listed, and hints
for atoms with the wrong arity or argument types."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from unified_planning.model import Problem


#: The location unified-planning puts into its SyntaxError messages.
_UP_LOCATION = re.compile(r"line:\s*(\d+),\s*col:?\s*(\d+)", re.IGNORECASE)


#: The name in unified-planning's "Found invalid expression: NAME." message.
_UP_INVALID_NAME = re.compile(r"Found invalid expression: ([^\s.]+)")


#: The atom in unified-planning's "The expression 'pred(a, b)' is not well-formed" message.
_UP_BAD_ATOM = re.compile(r"expression '([^'(]+)\(([^')]*)\)' is not well-formed")


def _declared_objects(problem: str) -> dict[str, str]:
    """Object name -> type from a problem's ``(:objects ...)`` section, read leniently (for
    error messages about a problem that did not parse)."""
    match = re.search(r"\(\s*:objects\b([^()]*)\)", problem, re.IGNORECASE)
    if match is None:
        return {}
    declared: dict[str, str] = {}
    pending: list[str] = []
    tokens = match.group(1).lower().split()
    index = 0
    while index < len(tokens):
        if tokens[index] == "-" and index + 1 < len(tokens):
            declared.update(dict.fromkeys(pending, tokens[index + 1]))
            pending = []
            index += 2
        else:
            pending.append(tokens[index])
            index += 1
    declared.update(dict.fromkeys(pending, "object"))
    return declared


def _signature(fluent: Any) -> str:
    params = " ".join(f"?{p.name} - {p.type}" for p in fluent.signature)
    return f"({fluent.name}{' ' + params if params else ''})"


def _quote_line(text: str, line: int, col: int | None) -> str:
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    source = lines[line - 1].replace("\t", " ")
    caret = "" if col is None else "\n    " + " " * max(col - 1, 0) + "^"
    return f"\n    {source}{caret}"


def describe_error(exc: Exception, part: str, text: str, domain: Problem | None) -> str:
    """A precise message for a parse failure of ``part`` ("domain" or "problem")."""
    import pyparsing

    if isinstance(exc, pyparsing.ParseBaseException):
        if exc.loc >= len(text.rstrip()):
            return (
                f"{part} PDDL syntax error at the end of the text (line {exc.lineno}): "
                f"{exc.msg} (a parenthesis left unclosed?)"
            )
        return (
            f"{part} PDDL syntax error at line {exc.lineno}, column {exc.col}: {exc.msg}"
            + _quote_line(text, exc.lineno, exc.col)
        )
    if isinstance(exc, KeyError):
        name = exc.args[0] if exc.args else "?"
        if domain is None:
            return f"{part} PDDL uses the undeclared name {name!r} (a type or requirement)"
        types = ", ".join(sorted(t.name for t in domain.user_types)) or "(none)"
        return (
            f"{part} PDDL uses the undeclared type {name!r}; the domain's types are: {types} "
            "(use one of these, or declare the new type in the domain's :types)"
        )
    message = str(exc).strip() or type(exc).__name__
    where = quote = ""
    location = _UP_LOCATION.search(message)
    if location is not None:
        line, col = int(location.group(1)), int(location.group(2))
        where = f" at line {line}, column {col}"
        quote = _quote_line(text, line, col)
        message = message[: location.start()]
        message = re.sub(r"\s*(Error )?[Ff]rom\s*$", "", message)
    # unified-planning wraps some errors as "UPTypeError('...')": keep the inner text
    message = re.sub(r"^UP\w*\((['\"])(.*)\1\)", r"\2", message.strip(), flags=re.DOTALL)
    message = message.split(" Different elements of a problem")[0]
    message = " ".join(message.split()).rstrip(" .:,")
    invalid = _UP_INVALID_NAME.search(message)
    bad_atom = _UP_BAD_ATOM.search(message)
    if invalid is not None and part == "problem" and domain is not None:
        objects = ", ".join(_declared_objects(text)) or "(none)"
        predicates = ", ".join(_signature(f) for f in domain.fluents)
        message = (
            f"{invalid.group(1)!r} is neither a declared object nor a predicate of the domain. "
            f"Declared objects: {objects}. Predicates: {predicates}"
        )
    elif invalid is not None and part == "domain":
        message = (
            f"{invalid.group(1)!r} is not a parameter of the enclosing action, a constant or a "
            "declared predicate"
        )
    elif bad_atom is not None and domain is not None:
        message += _bad_atom_hint(bad_atom.group(1), bad_atom.group(2), text, domain, part)
    return f"{part} PDDL error{where}: {message}{quote}"


def _bad_atom_hint(name: str, arg_text: str, text: str, domain: Problem, part: str) -> str:
    """Explain a type error such as ``on-table(white-bin)`` from the predicate's signature."""
    if not domain.has_fluent(name):
        return ""
    fluent = domain.fluent(name)
    args = [a.strip() for a in arg_text.split(",") if a.strip()]
    hint = f"; the predicate is declared as {_signature(fluent)}"
    if part == "problem":
        objects = _declared_objects(text)
        typed = [f"{a} is of type {objects[a]}" for a in args if a in objects]
        if typed:
            hint += f", but {', '.join(typed)}"
    return hint
