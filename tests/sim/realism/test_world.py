"""The realism switch end to end in the env: the ideal world is today's, the realistic one
is drawn per trial seed (deterministic), applies each effect on its own when asked, and keeps
the truth from the agents' observation (extrinsics as calibrated, the world rendered from
the truth)."""

from __future__ import annotations

import numpy as np
import pytest

from agentic_env.cli.run import build_parser as run_parser
from agentic_env.contract.actions import pick, top_down_pose
from agentic_env.envs.sim_env import SimEnv
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.episode import EpisodeSpec
from agentic_env.harness.sweep import parse_sweep
from agentic_env.sim.realism import check_realism, section, world_params
from agentic_env.sim.realism.world import WORLD_EFFECTS


def _pick_first(env: SimEnv, seed: int) -> tuple[dict, np.ndarray]:
    """Reset to ``seed``, pick the trial's first object top-down; the info and the joint
    state after the pick."""
    _obs, info = env.reset(seed=seed)
    name = info["trial"]["objects"][0]["name"]
    env.step(pick(top_down_pose(env.scene_state.body_position(name).copy()), 0.04))
    return info, env.data.qpos.copy()


def test_the_ideal_world_is_the_simulator_with_the_switch_bypassed(make_sim_env) -> None:
    """The ideal world runs exactly what the realistic world's machinery runs with every
    effect off (per-episode draws made, nothing applied): reference computed in this
    process, so the comparison is bit-exact on any CPU. Contact alone moves the state."""
    ideal = make_sim_env(task="stacking", realism="ideal")
    info, state = _pick_first(ideal, 3)
    assert "world" not in info and info["trial"]["realism"] == "ideal"
    _info, bypassed = _pick_first(make_sim_env(task="stacking", realism="realistic",
                                               world_effects=()), 3)
    np.testing.assert_array_equal(state, bypassed)
    _info, with_contact = _pick_first(make_sim_env(task="stacking", realism="realistic",
                                                   world_effects=("contact",)), 3)
    assert not np.array_equal(state, with_contact)
    obs = ideal.observe()
    for camera in ("shoulder", "wrist"):
        np.testing.assert_allclose(obs[f"{camera}_extrinsics"], ideal.true_extrinsics(camera),
                                   atol=1e-6)  # the observation holds float32


def test_realistic_world_is_deterministic_per_seed_and_differs_between_seeds(
        make_sim_env) -> None:
    first, second = (make_sim_env(task="sorting", realism="realistic") for _ in range(2))
    obs_a, info_a = first.reset(seed=11)
    obs_b, info_b = second.reset(seed=11)
    assert info_a["world"] == info_b["world"] and info_a["trial"]["realism"] == "realistic"
    for key in ("shoulder_rgb", "shoulder_depth", "wrist_depth", "shoulder_extrinsics"):
        np.testing.assert_array_equal(obs_a[key], obs_b[key])
    _obs, info_c = second.reset(seed=12)
    assert info_c["world"] != info_a["world"]


def test_agents_get_the_calibration_as_solved_and_the_world_renders_from_the_truth(
        make_sim_env) -> None:
    ideal = make_sim_env(task="sorting", realism="ideal")
    calibrated = make_sim_env(task="sorting", realism="realistic",
                              world_effects=("calibration",))
    obs_ideal, _ = ideal.reset(seed=5)
    obs, info = calibrated.reset(seed=5)
    # the images are the ideal world's: only the belief about the cameras moved
    np.testing.assert_array_equal(obs["shoulder_depth"], obs_ideal["shoulder_depth"])
    np.testing.assert_allclose(calibrated.true_extrinsics("shoulder"),
                               obs_ideal["shoulder_extrinsics"], atol=1e-6)
    for camera in ("shoulder", "wrist"):
        offset = np.linalg.norm(obs[f"{camera}_extrinsics"][:3, 3]
                                - calibrated.true_extrinsics(camera)[:3, 3])
        assert offset > 0.0
        assert info["world"]["calibration_error"][camera]["translation_mm"] > 0.0


def test_each_effect_applies_alone(make_sim_env) -> None:
    ideal = make_sim_env(task="stacking", realism="ideal")
    obs_ideal, _ = ideal.reset(seed=2)
    sensed = make_sim_env(task="stacking", realism="realistic", world_effects=("sensors",))
    obs, info = sensed.reset(seed=2)
    assert not np.array_equal(obs["shoulder_depth"], obs_ideal["shoulder_depth"])
    np.testing.assert_array_equal(obs["shoulder_extrinsics"], obs_ideal["shoulder_extrinsics"])
    assert info["world"]["contact"] is None and info["world"]["calibration_error"] == {}
    touched = make_sim_env(task="stacking", realism="realistic", world_effects=("contact",))
    _obs, info = touched.reset(seed=2)
    assert info["world"]["contact"] is not None
    with pytest.raises(InvalidConfigError, match="valid: sensors, calibration, contact"):
        make_sim_env(task="stacking", realism="realistic", world_effects=("weather",))
    with pytest.raises(InvalidConfigError, match="realism='realistic'"):
        make_sim_env(task="stacking", world_effects=("sensors",))


def test_a_realistic_trial_replays_its_world(make_sim_env) -> None:
    env = make_sim_env(task="stacking", realism="realistic")
    obs, info = env.reset(seed=4)
    replayed, again = env.reset(options={"trial": info["trial"]})
    assert again["world"] == info["world"]
    np.testing.assert_array_equal(replayed["shoulder_extrinsics"], obs["shoulder_extrinsics"])


def test_the_switch_names_the_valid_worlds() -> None:
    assert check_realism("realistic") == "realistic"
    with pytest.raises(InvalidConfigError, match="valid: ideal, realistic"):
        check_realism("noisy")
    with pytest.raises(InvalidConfigError, match="valid: ideal, realistic"):
        EpisodeSpec("sorting", realism="noisy")
    with pytest.raises(InvalidConfigError, match="grid.realism"):
        parse_sweep({"grid": {"tasks": ["sorting"], "realism": ["noisy"]}})


def test_benchmarks_default_to_the_realistic_world_and_ideal_keeps_old_keys() -> None:
    ideal = EpisodeSpec("sorting", realism="ideal")
    spec = EpisodeSpec("sorting")
    assert spec.realism == "realistic"  # one default, library and benchmark alike
    assert ideal.key() != spec.key()
    data = ideal.to_dict()
    del data["realism"]  # a spec stored before the switch
    assert EpisodeSpec.from_dict(data).key() == ideal.key()
    assert run_parser().parse_args([]).realism == "realistic"
    sweep = parse_sweep({"grid": {"tasks": ["sorting"], "realism": ["ideal", "realistic"]}})
    assert [s.realism for s in sweep.specs] == ["ideal", "realistic"]
    default = parse_sweep({"grid": {"tasks": ["sorting"]}})
    assert [s.realism for s in default.specs] == ["realistic"]


def test_every_parameter_table_names_its_source() -> None:
    def tables(node: dict, path: str) -> list[tuple[str, dict]]:
        found = [(path, node)] if any(isinstance(v, int | float | list)
                                      for v in node.values()) else []
        for key, value in node.items():
            if isinstance(value, dict):
                found += tables(value, f"{path}.{key}".strip("."))
        return found

    numeric = tables(world_params(), "")
    assert numeric, "world.toml holds no parameters"
    missing = [path for path, table in numeric if not str(table.get("source", "")).strip()]
    assert not missing, f"tables without a source: {missing}"
    assert set(WORLD_EFFECTS) == {"sensors", "calibration", "contact"}
    with pytest.raises(InvalidConfigError, match="top-level sections"):
        section("no-such-table")
