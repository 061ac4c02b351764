"""Train a small ACT policy on a collected dataset with LeRobot's classes, on the CPU.

A small configuration for a 2-core CPU: ResNet-18 from scratch (no ImageNet weights: they
would be downloaded), a narrow transformer, short action chunks, and the images at the
resolution the dataset was collected at (collect at a reduced resolution). Training stops at
a number of steps or a wall-clock limit, whichever comes first, and saves a LeRobot
``pretrained_model`` folder (config, weights, pre/post-processors with the dataset's
statistics) that :func:`agentic_env.agents.policy.checkpoint.load_policy` loads, with the
dataset's demonstration seeds (:data:`agentic_env.contract.seeds.SEEDS_FILE`), so that an
evaluation on one of them is refused.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_env.agents.policy.checkpoint import require_lerobot
from agentic_env.contract.seeds import read_seeds, write_seeds


@dataclass(frozen=True)
class TrainConfig:
    """A small ACT and its training budget.

    Attributes:
        steps: optimiser steps at most.
        max_s: wall-clock limit of training, seconds (checked after each step).
        batch_size: frames per step.
        chunk_size: actions predicted per chunk (and executed before the next query), i.e.
            ``chunk_size / fps`` seconds of motion at 20 Hz.
        dim_model / dim_feedforward / n_encoder_layers / n_heads: transformer size.
        lr: AdamW learning rate (backbone included: it trains from scratch).
        cameras: the cameras the policy sees (``shoulder``, ``wrist``).
        seed: torch seed (initial weights, batch order).
        device: torch device.
    """

    steps: int = 2000
    max_s: float = 1800.0
    batch_size: int = 8
    chunk_size: int = 20
    dim_model: int = 128
    dim_feedforward: int = 512
    n_encoder_layers: int = 2
    n_heads: int = 4
    lr: float = 1e-4
    cameras: tuple[str, ...] = ("shoulder", "wrist")
    seed: int = 0
    device: str = "cpu"


def train_act(dataset: Path, out: Path, config: TrainConfig,
              log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Train ACT on the LeRobot dataset in ``dataset`` and save it to ``out/pretrained_model``.

    Returns:
        ``steps``, ``seconds`` (training loop only), ``steps_per_s``, ``loss`` (last step),
        ``checkpoint`` (the folder written) and ``demonstration_seeds`` (the dataset's, also
        recorded in the checkpoint; ``None`` for a dataset that records none).
    """
    require_lerobot()
    import torch
    from lerobot.datasets.lerobot_dataset import LeRobotDataset, LeRobotDatasetMetadata
    from lerobot.policies.act.configuration_act import ACTConfig
    from lerobot.policies.factory import make_policy, make_pre_post_processors
    from lerobot.utils.feature_utils import dataset_to_policy_features

    from agentic_env.contract.features import video_key

    seeds = read_seeds(dataset / "meta")  # a malformed record fails before training
    torch.manual_seed(config.seed)
    repo_id = f"local/{dataset.name}"
    meta = LeRobotDatasetMetadata(repo_id, root=dataset)
    features = dataset_to_policy_features(meta.features)
    inputs = {name: features[name]
              for name in ("observation.state", *map(video_key, config.cameras))}
    policy_config = ACTConfig(
        input_features=inputs, output_features={"action": features["action"]},
        chunk_size=config.chunk_size, n_action_steps=config.chunk_size,
        vision_backbone="resnet18", pretrained_backbone_weights=None,
        dim_model=config.dim_model, dim_feedforward=config.dim_feedforward,
        n_encoder_layers=config.n_encoder_layers, n_heads=config.n_heads,
        optimizer_lr=config.lr, optimizer_lr_backbone=config.lr, device=config.device)
    policy = make_policy(policy_config, ds_meta=meta)
    preprocessor, postprocessor = make_pre_post_processors(policy_config,
                                                           dataset_stats=meta.stats)
    data = LeRobotDataset(repo_id, root=dataset, video_backend="pyav", delta_timestamps={
        "action": [i / meta.fps for i in range(config.chunk_size)]})
    loader = torch.utils.data.DataLoader(
        data, batch_size=config.batch_size, shuffle=True, drop_last=len(data) > config.batch_size,
        generator=torch.Generator().manual_seed(config.seed))
    optimizer = torch.optim.AdamW(policy.get_optim_params(), lr=config.lr,
                                  weight_decay=policy_config.optimizer_weight_decay)
    policy.train()
    step, loss_value, start = 0, float("nan"), time.perf_counter()
    while step < config.steps and time.perf_counter() - start < config.max_s:
        for batch in loader:
            loss, _ = policy.forward(preprocessor(batch))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 10.0)
            optimizer.step()
            step, loss_value = step + 1, float(loss.detach())
            if log is not None and (step % 50 == 0 or step == 1):
                elapsed = time.perf_counter() - start
                log(f"step {step}: loss {loss_value:.4f}, {step / elapsed:.3f} steps/s")
            if step >= config.steps or time.perf_counter() - start >= config.max_s:
                break
    seconds = time.perf_counter() - start
    folder = out / "pretrained_model"
    policy.save_pretrained(folder)
    preprocessor.save_pretrained(folder)
    postprocessor.save_pretrained(folder)
    if seeds is not None:
        write_seeds(folder, seeds, source=str(dataset))
    return {"steps": step, "seconds": seconds, "steps_per_s": step / seconds if seconds else 0.0,
            "loss": loss_value, "checkpoint": str(folder),
            "demonstration_seeds": None if seeds is None else list(seeds)}
