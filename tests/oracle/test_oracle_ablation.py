"""``emulated:PROFILE?ablate=...``: an emulated model with its mechanisms switched off keeps
its Table II rates and loses only their dependence on what each call is sent."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentic_env.agents.models.registry import parse_model_spec
from agentic_env.errors import InvalidConfigError
from agentic_env.oracle.ablation import MECHANISMS, ablated, check_mechanisms
from agentic_env.oracle.difficulty import Sighting
from agentic_env.oracle.emulated import box_models, cause_models, difficulty_models
from agentic_env.oracle.image_quality import quality_model
from agentic_env.oracle.profile import load_profile


def test_the_spec_names_the_mechanisms_and_refuses_nonsense() -> None:
    spec = parse_model_spec("emulated:gpt-4o?seed=3&ablate=checker,boxes")
    assert (spec.model, spec.seed, spec.ablate) == ("gpt-4o", 3, ("checker", "boxes"))
    assert parse_model_spec("emulated:gpt-4o").ablate == ()
    with pytest.raises(InvalidConfigError, match="ablate names mechanisms"):
        parse_model_spec("emulated:gpt-4o?ablate=")
    with pytest.raises(InvalidConfigError, match="'seed' and 'ablate'"):
        parse_model_spec("emulated:gpt-4o?causes=off")
    with pytest.raises(InvalidConfigError, match="valid: parser, checker"):
        check_mechanisms(["checker", "lighting"])
    assert check_mechanisms(["all"]) == MECHANISMS


def test_an_ablated_mechanism_errs_at_its_constant_rate_and_the_others_are_kept() -> None:
    profile = load_profile("gemini-3-flash")
    assert {"checker", "grasp"} <= set(cause_models(profile)) and box_models(profile)
    off = ablated(profile, ["checker", "boxes"])
    assert "checker" not in cause_models(off) and "grasp" in cause_models(off)
    assert not box_models(off)
    assert off.modules == profile.modules  # the Table II rates are untouched
    assert ablated(profile, []) is profile


def test_ablated_difficulty_points_as_well_at_a_speck_as_at_a_full_view() -> None:
    rate = 1.0 - load_profile("gpt-4o").modules["detector"].success.value
    speck = Sighting(40, 3, replace(quality_model().reference, contrast=0.05))
    clear = Sighting(5000, 0, quality_model().reference)
    live = next(iter(difficulty_models(load_profile("gpt-4o")).values()))
    assert live.rate(rate, speck) > live.rate(rate, clear)
    flat = next(iter(difficulty_models(ablated(load_profile("gpt-4o"), ["all"])).values()))
    assert flat.rate(rate, speck) == pytest.approx(rate)
    assert flat.rate(rate, clear) == pytest.approx(rate)


def test_ablated_quality_ignores_the_frame_and_keeps_the_odds() -> None:
    profile = load_profile("gemini-3-flash")
    rate = 1.0 - profile.modules["detector"].success.value
    poor = Sighting(5000, 0, replace(quality_model().reference, noise=0.2))
    clean = Sighting(5000, 0, None)
    live = difficulty_models(profile)["detector"]
    off = difficulty_models(ablated(profile, ["quality"]))["detector"]
    assert live.rate(rate, poor) > live.rate(rate, clean)
    assert off.rate(rate, poor) == pytest.approx(live.rate(rate, clean))
    assert off.per_halving == live.per_halving  # the odds are a separate mechanism
