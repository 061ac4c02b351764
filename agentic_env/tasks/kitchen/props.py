"""Kitchen props: PDDL and body names and the five free items (the pot and the bowl are
:class:`~agentic_env.sim.props.ContainerSpec` round containers, see the kitchen config).

Sizes are metres, in the body frame of each prop; colours are RGBA.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agentic_env.sim.props import ObjectSpec, Part

#: PDDL name of the cabinet's drawer.
DRAWER = "top-drawer"
#: Name of the cabinet (prefix of its bodies, joint, geoms and sites).
CABINET = "cabinet"
POT = "pot-1"
BOWL = "bowl-1"
SPICE = "spice-bottle-1"
SNACK = "blue-snack-pack-1"
CHICKEN = "chicken-leg-1"
TOMATO = "tomato-1"
SPONGE = "sponge-1"
VARIANTS: tuple[str, ...] = ("A", "B", "C")
_MEAT = (0.58, 0.33, 0.14, 1.0)
_BONE = (0.93, 0.90, 0.82, 1.0)


@dataclass(frozen=True)
class KitchenItem:
    """A free item of the kitchen and how the expert handles it.

    Attributes:
        spec: the free body.
        footprint: radius of a circle around :attr:`centre` holding the item at any yaw, m.
        centre: the item's centre in the body frame (x, y, z), metres.
        grasp: the grasp point in the body frame (x, y, z), metres; the fingers close along
            the body y axis (any horizontal axis for an upright cylinder).
        grasp_width: width across the pads at the grasp, metres.
        rest_height: height of the body origin above the support when resting, metres.
        round: an upright cylinder or sphere (any grasp yaw works).
    """

    spec: ObjectSpec
    footprint: float
    centre: tuple[float, float, float]
    grasp: tuple[float, float, float]
    grasp_width: float
    rest_height: float
    round: bool = False

    @property
    def name(self) -> str:
        """Body and PDDL name."""
        return self.spec.name


def _lying(angle: float = np.pi / 2) -> tuple[float, float, float, float]:
    """Quaternion turning a part's z axis onto the body x axis."""
    return (float(np.cos(angle / 2)), 0.0, float(np.sin(angle / 2)), 0.0)


def kitchen_items() -> dict[str, KitchenItem]:
    """The five free items of the kitchen, by name."""
    items = [
        KitchenItem(
            ObjectSpec(SPICE, "cylinder", (0.02, 0.03), (0.86, 0.52, 0.18, 1.0), mass=0.07,
                       attributes={"kind": "spice bottle"},
                       parts=(Part("cylinder", (0.017, 0.006), (0.0, 0.0, 0.036),
                                   rgba=(0.75, 0.10, 0.10, 1.0), mass=0.01),)),
            footprint=0.021, centre=(0.0, 0.0, 0.0), grasp=(0.0, 0.0, 0.0), grasp_width=0.04,
            rest_height=0.03, round=True),
        KitchenItem(
            ObjectSpec(SNACK, "box", (0.055, 0.0275, 0.015), (0.10, 0.32, 0.85, 1.0),
                       mass=0.05, attributes={"kind": "snack pack", "colour": "blue"},
                       parts=(Part("box", (0.032, 0.016, 0.001), (0.0, 0.0, 0.0155),
                                   rgba=(0.97, 0.83, 0.15, 1.0), mass=0.001),)),
            footprint=0.062, centre=(0.0, 0.0, 0.0), grasp=(0.0, 0.0, 0.0), grasp_width=0.055,
            rest_height=0.015),
        # a drumstick lying with body z up: meat bulb (sphere, the body origin) and meat
        # (capsule along +x), then a thin bone (capsule) and its knob (sphere); every part
        # touches the plane 24 mm below the origin, so it rests on all four
        KitchenItem(
            ObjectSpec(CHICKEN, "sphere", (0.024,), _MEAT, mass=0.03,
                       attributes={"kind": "chicken leg"},
                       parts=(Part("capsule", (0.022, 0.025), (0.03, 0.0, -0.002), _lying(),
                                   mass=0.04),
                              Part("capsule", (0.007, 0.018), (0.075, 0.0, -0.017), _lying(),
                                   rgba=_BONE, mass=0.005),
                              Part("sphere", (0.011,), (0.1, 0.0, -0.013), rgba=_BONE,
                                   mass=0.005))),
            footprint=0.07, centre=(0.043, 0.0, 0.0), grasp=(0.03, 0.0, -0.002),
            grasp_width=0.044, rest_height=0.024),
        KitchenItem(
            ObjectSpec(TOMATO, "ellipsoid", (0.03, 0.03, 0.027), (0.86, 0.16, 0.10, 1.0),
                       mass=0.08, attributes={"kind": "tomato"},
                       parts=(Part("cylinder", (0.005, 0.004), (0.0, 0.0, 0.029),
                                   rgba=(0.20, 0.55, 0.15, 1.0), mass=0.001),)),
            footprint=0.031, centre=(0.0, 0.0, 0.0), grasp=(0.0, 0.0, 0.0), grasp_width=0.06,
            rest_height=0.027, round=True),
        KitchenItem(
            ObjectSpec(SPONGE, "box", (0.045, 0.03, 0.012), (0.96, 0.85, 0.22, 1.0),
                       mass=0.02, attributes={"kind": "sponge"},
                       parts=(Part("box", (0.045, 0.03, 0.004), (0.0, 0.0, 0.016),
                                   rgba=(0.18, 0.55, 0.25, 1.0), mass=0.005),)),
            footprint=0.055, centre=(0.0, 0.0, 0.0), grasp=(0.0, 0.0, 0.0), grasp_width=0.06,
            rest_height=0.012),
    ]
    return {item.name: item for item in items}
