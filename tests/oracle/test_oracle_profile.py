"""Model profiles: packaged data with provenance, and a loader that explains bad files."""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest

from agentic_env.agents.models.base import MODULES
from agentic_env.errors import InvalidConfigError
from agentic_env.oracle.emulated import error_rates
from agentic_env.oracle.profile import (
    KINDS,
    MEASURED_MODULES,
    load_profile,
    parse_profile,
    profile_names,
)

_FOLDER = resources.files("agentic_env.oracle") / "profiles"
#: AgenticLab Table II models: (row, parser SR %, detector pointing SR %, goal time s).
_TABLE_II = {"gemini-3-pro": ("Gemini 3 Pro", 92.3, 66.7, 8.4),
             "gemini-3-flash": ("Gemini 3 Flash", 92.3, 88.1, 15.6),
             "gemini-robotics": ("Gemini Robotics", 75.0, 57.1, 13.5),
             "qwen3-vl-plus": ("Qwen3-VL-Plus", 30.8, 88.1, 12.1),
             "qwen-vl-max": ("Qwen-VL-Max", 17.3, 81.0, 11.2),
             "gpt-5.2": ("GPT-5.2", 46.2, 16.6, 9.1),
             "gpt-4o": ("GPT-4o", 48.1, 14.3, 5.1),
             "claude-4.5-opus": ("Claude-4.5-Opus", 78.9, 9.6, 6.6),
             "claude-4.5-sonnet": ("Claude-4.5-Sonnet", 40.4, 61.9, 10.0),
             "qwen2.5-vl-7b": ("Qwen2.5-VL-7B", 0.0, 73.8, 9.2),
             "molmo-7b": ("Molmo-7B", 0.0, 76.2, 18.1)}


#: ALRM Table III rows: profile -> (AVG success %, latency s per task, calls per task assumed).
_TABLE_III = {"claude-4.1-opus-cap": (92.6, 33.44, 7), "claude-4.1-opus-tap": (93.5, 82.60, 13),
              "gpt-5-cap": (90.7, 145.59, 7), "gpt-5-tap": (85.2, 113.88, 13),
              "qwen3-8b-cap": (64.8, 343.33, 7), "qwen3-8b-tap": (53.7, 392.08, 13),
              "mistral-7b-cap": (8.3, 18.96, 7), "mistral-7b-tap": (0.0, 10.81, 13)}


def _raw(name: str) -> dict:
    return tomllib.loads((_FOLDER / f"{name}.toml").read_text(encoding="utf-8"))


def test_every_table_ii_model_has_a_profile() -> None:
    assert set(profile_names()) == set(_TABLE_II) | set(_TABLE_III) | {"langsam"}


@pytest.mark.parametrize("name", sorted(_TABLE_III))
def test_alrm_profiles_are_per_call_quantities_of_table_iii_said_to_agree_by_construction(
        name: str) -> None:
    """Per task success S over n calls: a call succeeds with S ** (1/n) and takes the
    task's latency / n; only text roles are emulated; the profile says an ALRM run of it
    agrees with Table III by construction."""
    success, latency, calls = _TABLE_III[name]
    profile = load_profile(name)
    parser = profile.modules["parser"]
    assert list(profile.modules) == ["parser"]
    assert set(profile.roles) == {"task_planner", "task_executor", "planner", "chatbot"}
    assert parser.success.value == pytest.approx((success / 100) ** (1 / calls), abs=1e-4)
    assert parser.seconds.value == pytest.approx(latency / calls, abs=1e-3)
    assert not parser.success.source and "Table III" in parser.success.assumption
    assert any("agrees by construction" in a for a in profile.assumptions)
    assert profile.built_from == ("ALRM Table III",)
    assert all(not load_profile(other).built_from for other in _TABLE_II)
    assert error_rates(profile)["task_executor"] == pytest.approx(1 - parser.success.value)


def test_the_langsam_profile_only_detects_on_stated_assumptions() -> None:
    profile = load_profile("langsam")
    assert list(profile.modules) == ["detector"]
    assert set(profile.roles) == {"detector", "descriptor", "localizer"}
    assert set(profile.kinds) == {"detector"}
    detector = profile.modules["detector"]
    assert detector.success.value == 0.74 and not detector.success.source
    assert "arXiv 2303.05499, Table 5" in detector.success.assumption
    assert detector.success.assumption in profile.assumptions
    assert (detector.input_tokens.value, detector.output_tokens.value) == (0, 0)
    assert error_rates(profile) == pytest.approx(
        {"detector": 0.26, "descriptor": 0.26, "localizer": 0.26})


def test_measures_names_some_measured_modules() -> None:
    data = {"title": "Only eyes", "measures": ["detector"],
            "modules": {"detector": _valid()["modules"]["detector"]}}
    assert list(parse_profile("eyes", data, _defaults()).modules) == ["detector"]
    for bad in ([], ["eyes"], "detector"):
        with pytest.raises(InvalidConfigError, match="'measures' lists the modules"):
            parse_profile("eyes", {**data, "measures": bad}, _defaults())


@pytest.mark.parametrize("name", sorted(_TABLE_II))
def test_a_profile_file_round_trips_with_its_provenance(name: str) -> None:
    profile = load_profile(name)
    raw = _raw(name)
    row, parser, detector, goal_s = _TABLE_II[name]
    assert profile.title == raw["title"] == row
    for module in MEASURED_MODULES:
        for key in ("success", "seconds"):
            number = getattr(profile.modules[module], key)
            assert number.value == raw["modules"][module][key]["value"]
            if number.source:
                assert number.source.startswith(
                    f"paper AgenticLab, table II, row {row}, column "
                    f"{raw['modules'][module][key]['column']}")
            else:
                assert number.assumption in profile.assumptions
        assert profile.modules[module].success.source  # every success rate is read
    assert profile.modules["parser"].success.value == pytest.approx(parser / 100)
    assert profile.modules["detector"].success.value == pytest.approx(detector / 100)
    assert profile.modules["goal"].seconds.value == goal_s
    # every other number is an assumption the profile states; every role is emulated
    assert profile.modules["parser"].input_tokens.assumption in profile.assumptions
    assert profile.min_visible_px.assumption in profile.assumptions
    assert set(profile.roles) == set(MODULES)
    assert {k: set(v) for k, v in profile.kinds.items()} == {
        k: set(v) for k, v in KINDS.items()}


def _valid() -> dict:
    return _raw("gemini-3-flash")


def _defaults() -> dict:
    return _raw("_defaults")


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(speed=1), r"unknown key\(s\) speed; valid: title, modules"),
    (lambda d: d["modules"].update(vision={}), r"unknown key\(s\) vision; valid: parser, "
                                               "checker, detector, grasp, goal"),
    (lambda d: d["modules"]["parser"].update(latency=1), "valid: success, seconds"),
    (lambda d: d["modules"]["parser"]["success"].pop("row"),
     "a source names all of paper, table, row, column"),
    (lambda d: d["modules"]["parser"].update(success={"value": 0.5}),
     "either its source .* or the 'assumption'"),
    (lambda d: d["modules"]["parser"]["success"].update(value=92.3),
     r"value must be a number in \[0.0, 1.0\], got 92.3"),
    (lambda d: d["modules"]["parser"].update(seconds=3.0), "give a table"),
    (lambda d: d.update(roles={"vision": "detector"}), r"unknown key\(s\) vision; valid: "
                                                       "parser, checker"),
    (lambda d: d.update(roles={"localizer": "eyes"}), "emulated by one of parser, checker"),
    (lambda d: d.update(kinds={"checker": {"maybe": {"value": 1, "assumption": "x"}}}),
     r"unknown key\(s\) maybe; valid: false_fail, false_pass"),
    (lambda d: d.update(latency={"jitter": {"value": 1, "assumption": "x"}}),
     r"unknown key\(s\) jitter; valid: spread_cv, timeout_s, retries, backoff_s"),
    (lambda d: d.update(latency={"timeout_s": {"value": 0, "assumption": "x"}}),
     r"latency.timeout_s: value must be a number in"),
])
def test_the_loader_refuses_a_bad_profile_naming_the_valid_keys(change, message) -> None:
    data = _valid()
    change(data)
    with pytest.raises(InvalidConfigError, match=message):
        parse_profile("bad", data, _defaults())


def test_a_profile_needs_every_measured_module_and_a_known_name() -> None:
    data = _valid()
    del data["modules"]["grasp"]
    with pytest.raises(InvalidConfigError, match=r"missing \[modules.grasp\]"):
        parse_profile("bad", data, _defaults())
    with pytest.raises(InvalidConfigError, match="no model profile 'gemini-4'; profiles are "
                                                 "claude-4.1-opus-cap"):
        load_profile("gemini-4")
