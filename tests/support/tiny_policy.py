"""Tiny LeRobot policies for the policy tests (need lerobot).

:func:`trained_tiny_policy` trains a small ACT once per process on one collected
demonstration. The other helpers build every policy family the benchmark loads (ACT,
Diffusion, π0.5, SmolVLA) from LeRobot's own configs and classes, with tiny dimensions, the
env's features and no downloaded weights, and save them as LeRobot checkpoints (a LoRA
adapter the way ``lerobot-train --peft.*`` saves one):

- π0.5's Gemma sizes are fixed by variant name (``gemma_300m``, ``gemma_2b``), so
  :func:`use_tiny_pi05_backbone` swaps LeRobot's variant table and PaliGemma config for tiny
  ones, as LeRobot's own tests do; its tokenizer (PaliGemma's, fetched by name) is a small
  local one.
- SmolVLA reads its VLM backbone's config and processor with
  ``AutoConfig/AutoProcessor.from_pretrained(vlm_model_name)``: :func:`write_tiny_smolvlm`
  writes a tiny SmolVLM config, tokenizer and processor into a folder, whose path is the
  ``vlm_model_name``.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentic_env.agents.policy.inputs import env_features
from agentic_env.contract.seeds import DEMONSTRATION_SEED_START
from agentic_env.datasets.collect import CollectConfig, collect

#: One stacking demonstration at 64 x 36 (the policy's cameras; the harness renders 640 x
#: 360, which the agent resamples when asked to).
CONFIG = CollectConfig(task="stacking", width=64, height=36)
#: Its trial seed: the first demonstration seed.
SEED = DEMONSTRATION_SEED_START
#: Policy families LeRobot 0.6.1 ships that the tests build.
FAMILIES: tuple[str, ...] = ("act", "diffusion", "pi05", "smolvla")
#: Side of the square images π0.5 and SmolVLA resize to (pixels; 2 x 2 patches of 14).
TINY_IMAGE = 28
#: Special tokens a SmolVLM tokenizer carries.
SMOLVLM_TOKENS = {"fake_image_token": "<fake_token_around_image>", "image_token": "<image>",
                  "global_image_token": "<global-img>",
                  "end_of_utterance_token": "<end_of_utterance>"}


@functools.cache
def trained_tiny_policy() -> tuple[Path, Path]:
    """(dataset folder, checkpoint folder) of a policy trained for two steps."""
    from agentic_env.agents.policy.training import TrainConfig, train_act

    scratch = Path(tempfile.mkdtemp(prefix="agentic-env-policy-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    dataset = scratch / "dataset"
    collect(dataset, CONFIG, 1, seed_start=SEED, progress=False)
    result = train_act(dataset, scratch / "checkpoint",
                       TrainConfig(steps=2, batch_size=2, chunk_size=10))
    return dataset, Path(result["checkpoint"])


def env_policy_features(obs: dict[str, np.ndarray]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(input, output) LeRobot features of a policy fed ``obs``: the state and both cameras
    as the exporter names them, and the 7-D ``joint_position`` action."""
    from lerobot.configs.types import FeatureType, PolicyFeature

    shapes = env_features(obs)
    inputs = {name: PolicyFeature(FeatureType.VISUAL if len(shape) == 3 else FeatureType.STATE,
                                  shape)
              for name, shape in shapes.items()
              if name == "observation.state" or name.startswith("observation.images.")}
    return inputs, {"action": PolicyFeature(FeatureType.ACTION, (7,))}


def dataset_stats(inputs: dict[str, Any]) -> dict[str, dict[str, np.ndarray]]:
    """Normalisation statistics of the kinds every family asks for (mean/std, min/max,
    quantiles), per feature: images around mid-grey, vectors around 0 with unit spread."""
    stats: dict[str, dict[str, np.ndarray]] = {}
    for name, feature in {**inputs, "action": None}.items():
        shape = (7,) if feature is None else tuple(feature.shape)
        if len(shape) == 3:
            shape = (shape[0], 1, 1)
            centre, spread = 0.5, 0.25
        else:
            centre, spread = 0.0, 1.0
        stats[name] = {"mean": np.full(shape, centre), "std": np.full(shape, spread),
                       "min": np.full(shape, centre - 2 * spread),
                       "max": np.full(shape, centre + 2 * spread)}
        for quantile, z in (("q01", -2.0), ("q10", -1.3), ("q50", 0.0), ("q90", 1.3),
                            ("q99", 2.0)):
            stats[name][quantile] = np.full(shape, centre + z * spread)
    return stats


def tiny_tokenizer(special: dict[str, str] | None = None) -> Any:
    """A word-level tokenizer over the words π0.5's and SmolVLA's prompts use (``Task``,
    ``State``, ``Action``, punctuation, the numbers 0-255 of π0.5's discretised state),
    with ``special`` tokens as named attributes (``tokenizer.image_token_id``...)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<pad>", "<unk>", "<bos>", "<eos>", *(special or {}).values(), "Task", "State",
             "Action", ":", ",", ";", *map(str, range(256))]
    model = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    model.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=model, pad_token="<pad>", unk_token="<unk>",
                                   bos_token="<bos>", eos_token="<eos>",
                                   extra_special_tokens=dict(special or {}))


def write_tiny_smolvlm(folder: Path) -> Path:
    """A tiny SmolVLM (config, tokenizer, image and video processors) in ``folder``, for
    SmolVLA's ``vlm_model_name``: a 2-layer text model of width 32 and a 1-layer vision
    tower on 28 x 28 images (2 x 2 patches, one image token after the pixel shuffle)."""
    from transformers import SmolVLMConfig, SmolVLMImageProcessor, SmolVLMProcessor
    from transformers.models.smolvlm.video_processing_smolvlm import SmolVLMVideoProcessor

    tokenizer = tiny_tokenizer(SMOLVLM_TOKENS)
    SmolVLMConfig(
        text_config={"model_type": "llama", "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 2,
                     "num_key_value_heads": 1, "head_dim": 16,
                     "vocab_size": len(tokenizer)},
        vision_config={"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
                       "num_attention_heads": 1, "patch_size": 14, "image_size": TINY_IMAGE},
        scale_factor=2, image_token_id=tokenizer.image_token_id).save_pretrained(folder)
    SmolVLMProcessor(image_processor=SmolVLMImageProcessor(), tokenizer=tokenizer,
                     video_processor=SmolVLMVideoProcessor(),
                     image_seq_len=1).save_pretrained(folder)
    return folder


def use_tiny_pi05_backbone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make π0.5 a policy of about 12 M parameters (Gemma width 16, one layer; a one-layer
    SigLIP of width 16) with a local tokenizer in place of PaliGemma's."""
    from lerobot.policies.pi05 import modeling_pi05, processor_pi05
    from lerobot.processor.tokenizer_processor import TokenizerProcessorStep
    from transformers import PaliGemmaConfig

    tiny = modeling_pi05.GemmaConfig(width=16, depth=1, mlp_dim=32, num_heads=1,
                                     num_kv_heads=1, head_dim=16)
    monkeypatch.setattr(modeling_pi05, "get_gemma_config", lambda variant: tiny)
    vision = {"model_type": "siglip_vision_model", "hidden_size": 16, "num_hidden_layers": 1,
              "num_attention_heads": 1, "vision_use_head": False}
    monkeypatch.setattr(modeling_pi05, "CONFIG_MAPPING", {
        "paligemma": lambda: PaliGemmaConfig(vision_config=vision),
        "gemma": modeling_pi05.CONFIG_MAPPING["gemma"]})
    monkeypatch.setattr(processor_pi05, "TokenizerProcessorStep", functools.partial(
        TokenizerProcessorStep, tokenizer=tiny_tokenizer()))


def tiny_config(kind: str, obs: dict[str, np.ndarray], scratch: Path) -> Any:
    """LeRobot's config of policy family ``kind`` for ``obs``'s features, tiny, on the CPU,
    with no pretrained weights (SmolVLA's VLM is written under ``scratch``)."""
    from lerobot.policies.factory import make_policy_config

    inputs, outputs = env_policy_features(obs)
    common = {"input_features": inputs, "output_features": outputs, "device": "cpu"}
    if kind == "act":
        return make_policy_config(kind, dim_model=16, n_heads=2, dim_feedforward=32,
                                  n_encoder_layers=1, n_decoder_layers=1, chunk_size=4,
                                  n_action_steps=4, use_vae=False,
                                  pretrained_backbone_weights=None, **common)
    if kind == "diffusion":
        return make_policy_config(kind, down_dims=(16, 32), horizon=8, n_action_steps=4,
                                  n_obs_steps=2, n_groups=4, diffusion_step_embed_dim=16,
                                  spatial_softmax_num_keypoints=8, num_inference_steps=2,
                                  crop_shape=None, use_separate_rgb_encoder_per_camera=False,
                                  pretrained_backbone_weights=None, **common)
    if kind == "pi05":
        return make_policy_config(kind, image_resolution=(TINY_IMAGE, TINY_IMAGE),
                                  chunk_size=4, n_action_steps=4, num_inference_steps=2,
                                  tokenizer_max_length=48, **common)
    if kind == "smolvla":
        return make_policy_config(
            kind, vlm_model_name=str(write_tiny_smolvlm(scratch / "smolvlm")),
            load_vlm_weights=False, resize_imgs_with_padding=(TINY_IMAGE, TINY_IMAGE),
            num_vlm_layers=2, chunk_size=4, n_action_steps=4, num_steps=2,
            tokenizer_max_length=16, **common)
    raise ValueError(f"unknown family {kind!r}; valid: {', '.join(FAMILIES)}")


def build_policy(kind: str, obs: dict[str, np.ndarray], scratch: Path) -> tuple[Any, Any, Any]:
    """(policy in eval mode, preprocessor, postprocessor) of a tiny ``kind`` policy for
    ``obs`` (π0.5 needs :func:`use_tiny_pi05_backbone` first)."""
    import torch
    from lerobot.policies.factory import get_policy_class, make_pre_post_processors

    config = tiny_config(kind, obs, scratch)
    torch.manual_seed(0)
    policy = get_policy_class(kind)(config)
    if kind == "pi05":  # LeRobot 0.6.1 sizes PaliGemma's projector for gemma_2b (2048 wide)
        paligemma = policy.model.paligemma_with_expert.paligemma.model
        paligemma.multi_modal_projector.linear = torch.nn.Linear(16, 16)
    policy.eval()
    preprocessor, postprocessor = make_pre_post_processors(
        config, dataset_stats=dataset_stats(config.input_features))
    return policy, preprocessor, postprocessor


def save_checkpoint(policy: Any, preprocessor: Any, postprocessor: Any, folder: Path) -> Path:
    """Save as ``lerobot-train`` does into ``folder`` (a ``pretrained_model`` folder)."""
    policy.save_pretrained(folder)
    preprocessor.save_pretrained(folder)
    postprocessor.save_pretrained(folder)
    return folder


def save_lora_adapter(obs: dict[str, np.ndarray], scratch: Path) -> tuple[Path, Any]:
    """A tiny ACT saved as the base policy under ``scratch/base``, wrapped with a LoRA
    adapter (rank 4 on its transformer's feed-forward layers) the way ``lerobot-train
    --peft.*`` wraps it, the adapter's weights moved off their zero start, and saved as
    ``lerobot-train`` saves a PEFT checkpoint under ``scratch/adapter``.

    Returns:
        (adapter folder, the wrapped policy in eval mode).
    """
    import torch

    policy, preprocessor, postprocessor = build_policy("act", obs, scratch)
    base = save_checkpoint(policy, preprocessor, postprocessor, scratch / "base")
    policy.config.pretrained_path = base
    wrapped = policy.wrap_with_peft(peft_cli_overrides={"target_modules": ["linear1", "linear2"],
                                                        "r": 4})
    with torch.no_grad():
        for name, parameter in wrapped.named_parameters():
            if "lora_B" in name:
                parameter.normal_(0.0, 0.5)
    adapter = scratch / "adapter"
    wrapped.save_pretrained(adapter)
    policy.config.save_pretrained(adapter)  # PEFT writes the adapter only
    preprocessor.save_pretrained(adapter)
    postprocessor.save_pretrained(adapter)
    wrapped.eval()
    return adapter, wrapped
