"""Prompt templates and one-call model modules, the same for every agent: a template
``prompts/<name>.md`` beside an agent's modules with ``$placeholders`` filled in
(:class:`string.Template`), sent with its images and answer schema, the validated JSON back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from string import Template
from typing import Any

import numpy as np

from agentic_env.agents.models.base import ModelImage, ModelQuery
from agentic_env.agents.models.context import ModuleContext


def render_prompt(package: str, name: str, **values: Any) -> str:
    """The template ``prompts/<name>.md`` of ``package`` with ``values`` filled in.

    Args:
        package: the importable package the ``prompts`` folder lives in, e.g.
            ``"agentic_env.agents.mallvi"``.
        name: the template's file name without ``.md``.

    Raises:
        KeyError: a placeholder of the template has no value.
    """
    text = resources.files(package).joinpath(f"prompts/{name}.md").read_text()
    return Template(text).substitute({key: str(value) for key, value in values.items()})


def camera_image(obs: Mapping[str, np.ndarray], camera: str, name: str = "") -> ModelImage:
    """``camera``'s RGB image of ``obs`` for a query (``name``: default ``<camera>_rgb``)."""
    return ModelImage(name or f"{camera}_rgb", np.asarray(obs[f"{camera}_rgb"]))


def ask_json(ctx: ModuleContext, package: str, module: str, images: Sequence[ModelImage],
             schema: Mapping[str, Any], fields: Mapping[str, Any], *, template: str = "",
             **values: Any) -> dict[str, Any]:
    """Ask ``module`` one question: the prompt ``template`` (default: the module's name) of
    ``package`` rendered from ``values``, with ``images``; the answer validated against
    ``schema``. ``fields`` repeat the structured values the prompt was rendered from (only
    the privileged sim-oracle reads them).

    Raises:
        ModuleFailedError: the call failed after its bounded re-asks.
        BudgetExceededError: the run's budget is spent.
    """
    name = template or module
    prompt = render_prompt(package, name, **values)
    reply = ctx.ask(ModelQuery(module, name, prompt, tuple(images), dict(schema),
                               dict(fields)))
    return dict(reply.parsed)
