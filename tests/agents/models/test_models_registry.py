"""Model specs, module maps and the per-module router."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_env.agents.models import (
    MODULES,
    Completion,
    LiteLLMBackend,
    MissingAPIKeyError,
    ModelHandle,
    ModelQuery,
    ModelRouter,
    ModelSpec,
    RecordingBackend,
    ReplayBackend,
    Usage,
    build_backend,
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
        self.queries: list[ModelQuery] = []

    def complete(self, query: ModelQuery) -> Completion:
        self.queries.append(query)
        return Completion(text="{}", usage=Usage())


def test_sim_oracle_specs() -> None:
    plain = parse_model_spec("sim-oracle")
    assert plain.kind == "sim-oracle" and dict(plain.error_rates) == {} and plain.seed == 0
    noisy = parse_model_spec("sim-oracle?checker=0.1&detector=0.15&seed=3")
    assert noisy.kind == "sim-oracle"
    assert dict(noisy.error_rates) == {"checker": 0.1, "detector": 0.15}
    assert noisy.seed == 3
    assert parse_model_spec("sim-oracle?goal=1").error_rates["goal"] == 1.0


def test_emulated_specs() -> None:
    plain = parse_model_spec("emulated:gemini-3-flash")
    assert (plain.kind, plain.model, plain.seed) == ("emulated", "gemini-3-flash", 0)
    seeded = parse_model_spec("emulated:qwen3-vl-plus?seed=3")
    assert (seeded.kind, seeded.model, seeded.seed) == ("emulated", "qwen3-vl-plus", 3)
    assert parse_module_map("detector=emulated:qwen3-vl-plus") == {
        "detector": "emulated:qwen3-vl-plus"}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("emulated:", "name a profile"),
        ("emulated:gemini-3-flash?checker=0.1", "unknown option 'checker'.*'seed' and 'ablate'"),
        ("emulated:gemini-3-flash?seed=x", "seed must be an integer"),
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
    built: list[FakeOracle] = []

    def factory(spec: ModelSpec) -> FakeOracle:
        built.append(FakeOracle(spec))
        return built[-1]

    router = build_backends(
        "sim-oracle?checker=0.1",
        {"goal": "sim-oracle?checker=0.1", "detector": "sim-oracle?detector=0.5&seed=2"},
        factories={"sim-oracle": factory},
    )
    assert router.backend_for("goal") is router.backend_for("parser")
    assert len(built) == 2 and isinstance(router.backend_for("detector"), ModelHandle)
    assert dict(built[1].spec.error_rates) == {"detector": 0.5} and built[1].spec.seed == 2
    assert router.names()["detector"] == "sim-oracle?detector=0.5&seed=2"
    assert set(router.names()) == set(MODULES)
    query = ModelQuery("detector", "detector", "")
    assert router.backend_for("detector").complete(query).text == "{}"
    assert built[1].queries == [query] and built[0].queries == []
    with pytest.raises(InvalidConfigError, match="unknown module 'vision'"):
        router.backend_for("vision")
    with pytest.raises(InvalidConfigError, match="unknown module 'vision'"):
        ModelRouter(built[0], {"vision": built[0]})


def test_the_router_holds_handles_that_lead_nowhere_but_to_an_answer() -> None:
    oracle = FakeOracle(parse_model_spec("sim-oracle"))
    handle = ModelRouter(oracle).backend_for("parser")
    assert type(handle).__slots__ == ("__weakref__", "_key", "model", "name")
    assert handle.name == handle.model == "sim-oracle" and not hasattr(handle, "__dict__")
    assert isinstance(handle._key, int) and ModelRouter(handle).backend_for("goal") is handle


def test_sim_oracle_without_factory_names_the_fix() -> None:
    with pytest.raises(InvalidConfigError, match=r"needs the simulator: the harness builds "
                                                 r"the sim-oracle"):
        build_backends("sim-oracle")


def test_litellm_backends_check_the_api_key_at_build_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(MissingAPIKeyError, match="ANTHROPIC_API_KEY"):
        build_backends("sim-oracle", {"parser": "anthropic/claude-x"},
                       factories={"sim-oracle": FakeOracle})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    (tmp_path / "replayed").mkdir()
    parser = build_backend(parse_model_spec("anthropic/claude-x?timeout=5"))
    assert isinstance(parser, LiteLLMBackend) and parser.timeout_s == 5.0
    checker = build_backend(parse_model_spec(f"record:{tmp_path / 'cassettes'}:anthropic/claude-x"))
    assert isinstance(checker, RecordingBackend) and checker.name == "anthropic/claude-x"
    assert isinstance(build_backend(parse_model_spec(f"replay:{tmp_path / 'replayed'}")),
                      ReplayBackend)
