"""Setting dressings (lab, ...) loaded from the TOML files in ``scenes/``."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from agentic_env.errors import InvalidConfigError


def available_settings() -> list[str]:
    """Names of the settings that have a TOML file in ``scenes/``."""
    folder = resources.files("agentic_env.scenes")
    return sorted(p.name.removesuffix(".toml") for p in folder.iterdir()
                  if p.name.endswith(".toml"))


@dataclass(frozen=True)
class SettingDressing:
    """Appearance of a setting: floor, sky, table, lights (see ``scenes/lab.toml``)."""

    name: str
    floor: dict[str, Any]
    sky: dict[str, Any]
    table: dict[str, Any]
    headlight: dict[str, Any]
    key_light: dict[str, Any]


def load_setting(name: str) -> SettingDressing:
    """Load ``scenes/<name>.toml``.

    Raises:
        InvalidConfigError: if no such setting exists (the message lists the valid ones).
    """
    valid = available_settings()
    if name not in valid:
        raise InvalidConfigError(f"unknown setting {name!r}; valid: {', '.join(valid)}")
    text = resources.files("agentic_env.scenes").joinpath(f"{name}.toml").read_text()
    data = tomllib.loads(text)
    return SettingDressing(name=name, **data)
