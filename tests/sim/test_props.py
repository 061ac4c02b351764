"""Round containers: the walls lean out by the flare, the rim's radius and the floor test match
the geometry, and an unflared container is the upright ring it always was."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from agentic_env.errors import InvalidConfigError
from agentic_env.sim.props import BinSpec, ContainerSpec, add_container
from agentic_env.sim.state import geoms_box


def _compiled(container: ContainerSpec) -> tuple[mujoco.MjModel, mujoco.MjData]:
    spec = mujoco.MjSpec()
    add_container(spec, container)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


@pytest.mark.parametrize("flare", [0.0, 0.35])
def test_round_container_walls_reach_the_rim_radius(flare: float) -> None:
    bowl = ContainerSpec("bowl", inner_radius=0.12, wall_height=0.045, flare=flare)
    model, data = _compiled(bowl)
    walls = np.array([g for g in range(model.ngeom) if "_wall" in model.geom(g).name])
    low, high = geoms_box(model, data, walls)
    assert high[2] == pytest.approx(bowl.wall_height, abs=0.004)
    assert high[0] == pytest.approx(bowl.rim_radius, abs=0.004)
    assert bowl.rim_radius == pytest.approx(0.128 + 0.045 * np.tan(flare))
    # the walls' foot stays on the floor's edge, leaning or not
    foot = data.geom_xpos[walls[0]] - data.geom_xmat[walls[0]].reshape(3, 3)[:, 2] * (
        model.geom_size[walls[0], 2])
    assert np.hypot(*foot[:2]) == pytest.approx(0.12 + 0.004, abs=0.001)


def test_floor_tests_follow_the_shape() -> None:
    bowl = ContainerSpec("bowl", inner_radius=0.1, wall_height=0.04)
    square = BinSpec("bin", inner_size=(0.1, 0.1))
    corner = np.array([0.09, 0.09])
    assert square.holds_xy(corner) and not bowl.holds_xy(corner)
    assert bowl.holds_xy(np.array([0.0, 0.099])) and not bowl.holds_xy(np.array([0.0, 0.101]))
    assert bowl.outer_half == (bowl.footprint, bowl.footprint)
    assert square.outer_half == pytest.approx((0.108, 0.108))
    with pytest.raises(InvalidConfigError):
        ContainerSpec("bowl", inner_radius=0.1, wall_height=0.04, flare=1.0)
