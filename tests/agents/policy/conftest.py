"""The tiny policy the policy tests load (trained once per process), and no hub: every
policy test runs with the Hugging Face Hub offline and an empty cache, so anything fetched
by name fails at once instead of reaching for the network."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.tiny_policy import trained_tiny_policy


@pytest.fixture(scope="session")
def tiny_policy() -> tuple[Path, Path]:
    """(dataset folder, checkpoint folder) of a policy trained for two steps."""
    pytest.importorskip("lerobot")
    return trained_tiny_policy()


@pytest.fixture(autouse=True)
def offline_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """HF_HUB_OFFLINE=1 (read by huggingface_hub at import, hence the constant too) and a
    hub cache in the test's own folder."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    try:
        import huggingface_hub.constants as hub
    except ImportError:
        return
    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
