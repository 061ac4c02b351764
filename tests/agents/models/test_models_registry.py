"""Model specs, module maps and the per-module router."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_env.agents.models import (
    MODULES,
    Completion,
    LiteLLMBackend,
    MissingAPIKeyError,
    ModelQuery,
    ModelRouter,
    ModelSpec,
    RecordingBackend,
    ReplayBackend,
    Usage,
    build_backends,
    parse_model_spec,
    parse_module_map,
)
from agentic_env.errors import InvalidConfigError


class FakeOracle:
    """Stands in for the sim-oracle (which needs a live env) to see what the factory gets."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        self.name = spec.text

    def complete(self, query: ModelQuery) -> Completion:
        return Completion(text="{}", usage=Usage())


def test_sim_oracle_specs() -> None:
    plain = parse_model_spec("sim-oracle")
    assert plain.kind == "sim-oracle" and dict(plain.error_rates) == {} and plain.seed == 0
    noisy = parse_model_spec("sim-oracle?checker=0.1&detector=0.15&seed=3")
    assert noisy.kind == "sim-oracle"
    assert dict(noisy.error_rates) == {"checker": 0.1, "detector": 0.15}
    assert noisy.seed == 3
    assert parse_model_spec("sim-oracle?goal=1").error_rates["goal"] == 1.0


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("sim-oracle?vision=0.1", "unknown option 'vision'.*parser, checker, detector, grasp"),
        ("sim-oracle?checker=1.5", r"checker must be a number in \[0, 1\], got '1.5'"),
        ("sim-oracle?checker=-0.1", r"in \[0, 1\]"),
        ("sim-oracle?checker=often", r"in \[0, 1\]"),
        ("sim-oracle?seed=x", "seed must be an integer"),
        ("sim-oracle?checker=0.1&checker=0.2", "repeats checker"),
        ("sim-oracle?checker", "key=value pairs"),
        ("sim-oracl", "did you mean 'sim-oracle'"),
        ("sim_oracle?checker=0.1", "did you mean 'sim-oracle'"),
        ("sim-oracle-v2", "not recognised"),
        ("", "empty model spec"),
        ("replay:", "names no folder"),
        ("record:cassettes", "record:DIR:MODEL"),
        ("record::gpt-4o", "record:DIR:MODEL"),
        ("gpt-4o?temperature=warm", "temperature must be float"),
        ("gpt-4o?timeout=-3", "timeout must be >= 0"),
        ("gpt-4o?proxy=x", "unknown option 'proxy'.*api_base, timeout"),
        ("replai:runs/x", "not recognised.*'replay:DIR'"),
        ("gemini flash", "not a model name"),
    ],
)
def test_bad_specs_are_explained(spec: str, message: str) -> None:
    with pytest.raises(InvalidConfigError, match=message):
        parse_model_spec(spec)


def test_litellm_replay_and_record_specs() -> None:
    spec = parse_model_spec("ollama/llama3.2:3b?api_base=http://localhost:11434&timeout=120")
    assert spec.kind == "litellm" and spec.model == "ollama/llama3.2:3b"
    assert dict(spec.options) == {"api_base": "http://localhost:11434", "timeout": 120.0}
    assert parse_model_spec("gemini/gemini-3-flash").model == "gemini/gemini-3-flash"
    replay = parse_model_spec("replay:runs/cassettes")
    assert replay.kind == "replay" and replay.cassette_dir == Path("runs/cassettes")
    record = parse_model_spec("record:runs/c:ollama/qwen2.5vl:7b?max_retries=1")
    assert record.kind == "record" and record.cassette_dir == Path("runs/c")
    assert record.model == "ollama/qwen2.5vl:7b" and dict(record.options) == {"max_retries": 1}


def test_module_map() -> None:
    assert parse_module_map("") == {}
    assert parse_module_map("parser=gemini/x, detector=sim-oracle?detector=0.2") == {
        "parser": "gemini/x",
        "detector": "sim-oracle?detector=0.2",
    }
    with pytest.raises(InvalidConfigError, match="unknown module 'vision'.*parser, checker"):
        parse_module_map("vision=gpt-4o")
    with pytest.raises(InvalidConfigError, match="assigned twice"):
        parse_module_map("goal=gpt-4o,goal=sim-oracle")
    with pytest.raises(InvalidConfigError, match="must be 'module=model'"):
        parse_module_map("gpt-4o")
    with pytest.raises(InvalidConfigError, match=r"in \[0, 1\]"):
        parse_module_map("checker=sim-oracle?checker=2")


def test_router_shares_one_backend_per_spec_and_routes_modules() -> None:
    router = build_backends(
        "sim-oracle?checker=0.1",
        {"goal": "sim-oracle?checker=0.1", "detector": "sim-oracle?detector=0.5&seed=2"},
        oracle_factory=FakeOracle,
    )
    assert router.backend_for("goal") is router.backend_for("parser") is router.default
    detector = router.backend_for("detector")
    assert isinstance(detector, FakeOracle)
    assert dict(detector.spec.error_rates) == {"detector": 0.5} and detector.spec.seed == 2
    assert router.names()["detector"] == "sim-oracle?detector=0.5&seed=2"
    assert set(router.names()) == set(MODULES)
    with pytest.raises(InvalidConfigError, match="unknown module 'vision'"):
        router.backend_for("vision")
    with pytest.raises(InvalidConfigError, match="unknown module 'vision'"):
        ModelRouter(router.default, {"vision": router.default})


def test_sim_oracle_without_factory_names_the_fix() -> None:
    with pytest.raises(InvalidConfigError, match="pass oracle_factory="):
        build_backends("sim-oracle")


def test_litellm_backends_check_the_api_key_at_build_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(MissingAPIKeyError, match="ANTHROPIC_API_KEY"):
        build_backends("sim-oracle", {"parser": "anthropic/claude-x"}, oracle_factory=FakeOracle)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    (tmp_path / "replayed").mkdir()
    router = build_backends(
        "anthropic/claude-x?timeout=5",
        {
            "checker": f"record:{tmp_path / 'cassettes'}:anthropic/claude-x",
            "goal": f"replay:{tmp_path / 'replayed'}",
        },
    )
    parser = router.backend_for("parser")
    assert isinstance(parser, LiteLLMBackend) and parser.timeout_s == 5.0
    checker = router.backend_for("checker")
    assert isinstance(checker, RecordingBackend) and checker.name == "anthropic/claude-x"
    assert isinstance(router.backend_for("goal"), ReplayBackend)
