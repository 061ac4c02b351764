"""The content blocks a report is made of, rendered as HTML or Markdown by
:mod:`agentic_env.reports.report`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Link:
    """A table cell or text that links somewhere (a path relative to the report)."""

    text: str
    href: str


Cell = str | Link


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Para:
    text: str


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]


@dataclass(frozen=True)
class Figure:
    name: str
    png: bytes
    caption: str


@dataclass(frozen=True)
class Code:
    summary: str
    text: str


Block = Heading | Para | Table | Figure | Code
