"""Prompt templates: ``prompts/<name>.md`` beside an agent's modules, ``$placeholders``
filled in (:class:`string.Template`), loaded the same way by every agent."""

from __future__ import annotations

from importlib import resources
from string import Template
from typing import Any


def render_prompt(package: str, name: str, *, strict: bool = True, **values: Any) -> str:
    """The template ``prompts/<name>.md`` of ``package`` with ``values`` filled in.

    Args:
        package: the importable package the ``prompts`` folder lives in, e.g.
            ``"agentic_env.agents.mallvi"``.
        name: the template's file name without ``.md``.
        strict: a placeholder without a value raises :class:`KeyError`; otherwise it is
            left as it is (templates that show ``$`` in examples).
    """
    text = resources.files(package).joinpath(f"prompts/{name}.md").read_text()
    filled = {key: str(value) for key, value in values.items()}
    template = Template(text)
    return template.substitute(filled) if strict else template.safe_substitute(filled)
