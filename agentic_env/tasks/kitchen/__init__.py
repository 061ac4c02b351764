"""``AgenticEnv/Kitchen-v0``: long-horizon kitchen chores with a drawer, a pot and a bowl.

:class:`~agentic_env.tasks.kitchen.task.KitchenTask` (its docstring gives the description,
randomizations and success conditions); :mod:`~agentic_env.tasks.kitchen.props` the names
and items (the pot and the bowl are :class:`~agentic_env.sim.props.ContainerSpec`). The
instructions are data (``scenes/tasks/kitchen.toml``); the scripted expert is
:mod:`agentic_env.experts.kitchen`.
"""

from agentic_env.sim.props import ContainerSpec, add_container
from agentic_env.tasks.kitchen.props import (
    BOWL,
    CABINET,
    CHICKEN,
    DRAWER,
    POT,
    SNACK,
    SPICE,
    SPONGE,
    TOMATO,
    VARIANTS,
    KitchenItem,
    kitchen_items,
)
from agentic_env.tasks.kitchen.task import KitchenConfig, KitchenTask

__all__ = [
    "BOWL",
    "CABINET",
    "CHICKEN",
    "DRAWER",
    "POT",
    "SNACK",
    "SPICE",
    "SPONGE",
    "TOMATO",
    "VARIANTS",
    "ContainerSpec",
    "KitchenConfig",
    "KitchenItem",
    "KitchenTask",
    "add_container",
    "kitchen_items",
]
