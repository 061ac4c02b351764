"""``scripts/train_pi05_lora.sh`` on a machine without a GPU: it checks what it is given
(local copies, the dataset's count and seeds), then says that it trains nothing and exits 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_env.contract.seeds import DEMONSTRATION_SEED_START, write_seeds

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "train_pi05_lora.sh"
NO_GPU = "no CUDA GPU here (or no torch): pi0.5 LoRA fine-tuning needs one; nothing trained."


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


pytestmark = pytest.mark.skipif(_has_gpu(), reason="on a GPU the script trains for hours")


def _script(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PI05_")}
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=120, env={**clean, "PYTHON": sys.executable, **env})


def _dataset(root: Path, episodes: int, seeds: list[int]) -> Path:
    """The ``meta/`` of a collected dataset, as far as the script's checks read it."""
    (root / "meta").mkdir(parents=True)
    (root / "meta/info.json").write_text(json.dumps({"total_episodes": episodes, "features": {
        "observation.images.shoulder": {"shape": [360, 640, 3]}}}))
    write_seeds(root / "meta", seeds, source=root.name)
    return root


def test_the_script_parses() -> None:
    assert subprocess.run(["bash", "-n", str(SCRIPT)]).returncode == 0


def test_without_a_gpu_it_says_so_and_exits_cleanly(tmp_path: Path) -> None:
    result = _script("stacking", str(tmp_path / "dataset"), str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert NO_GPU in result.stdout
    assert "agentic-env train-policy --task stacking" in result.stdout
    assert not (tmp_path / "out").exists() and not (tmp_path / "dataset").exists()


def test_given_inputs_are_checked_first(tmp_path: Path) -> None:
    base = tmp_path / "pi05_base"
    base.mkdir()
    result = _script("sorting", PI05_BASE=str(base))
    assert result.returncode == 2
    assert f"has no config.json: download lerobot/pi05_base there with huggingface-cli " \
           f"download lerobot/pi05_base --local-dir {base}" in result.stderr
    result = _script("sorting", PI05_TOKENIZER=str(tmp_path))
    assert result.returncode == 2 and "PI05_TOKENIZER needs PI05_BASE" in result.stderr
    for name in ("config.json", "model.safetensors", "policy_preprocessor.json"):
        (base / name).write_text("{}")
    result = _script("sorting", PI05_BASE=str(base), PI05_TOKENIZER=str(tmp_path))
    assert result.returncode == 2 and "needs tokenizer_config.json" in result.stderr
    (tmp_path / "tokenizer_config.json").write_text("{}")
    result = _script("sorting", str(tmp_path / "dataset"), PI05_BASE=str(base),
                     PI05_TOKENIZER=str(tmp_path))
    assert result.returncode == 0 and NO_GPU in result.stdout
    result = _script("pushing")
    assert result.returncode == 2 and "sorting or stacking" in result.stderr


def test_the_dataset_must_hold_the_papers_count_and_spare_the_evaluation_seeds(
        tmp_path: Path) -> None:
    small = _dataset(tmp_path / "small", 10, [DEMONSTRATION_SEED_START])
    result = _script("stacking", str(small))
    assert result.returncode == 2
    assert "holds 10 episodes; the paper's count is 30" in result.stderr
    old = _dataset(tmp_path / "old", 30, list(range(1000, 1030)))  # seeds from before
    result = _script("stacking", str(old), EVAL_SEED="990", EVAL_EPISODES="20")
    assert result.returncode == 2
    assert "evaluation seed(s) 1000, 1001, 1002, 1003, 1004 and 5 more are layouts the " \
           "dataset" in result.stderr
    assert "evaluate on 0-999999 and collect demonstrations from 1000000-1999999" in \
           result.stderr
    result = _script("stacking", str(old), EVAL_SEED=str(DEMONSTRATION_SEED_START))
    assert result.returncode == 2 and "outside the evaluation range" in result.stderr
    result = _script("stacking", str(old))  # seeds 0-19: unseen
    assert result.returncode == 0 and NO_GPU in result.stdout
