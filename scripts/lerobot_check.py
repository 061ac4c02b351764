"""Load a dataset from ``agentic-env collect`` with the real ``lerobot`` library and normalise it.

Usage::

    python scripts/lerobot_check.py DATASET [--venv DIR] [--python EXE] [--lerobot SPEC]

Creates (or reuses) a throwaway virtualenv (default ``/tmp/lerobot-check``), installs
``lerobot[dataset]`` there from PyPI, and runs itself again inside it to:

* open DATASET with ``LeRobotDataset`` (offline, PyAV video decoding);
* fetch the first and the last frame of every episode and check their indices, timestamps,
  task string, image shapes and depth dtype and units;
* collate those frames into one batch with a torch ``DataLoader`` and normalise it with
  ``NormalizerProcessorStep`` in every mode the installed ``NormalizationMode`` offers besides
  ``IDENTITY`` (state, action and visual features alike), checking that the result is finite
  and that ``UnnormalizerProcessorStep`` gives the batch back.

It prints one line per check and exits non-zero on the first failure. Not part of the test
suite: it downloads several GB. The Python version picks the ``lerobot`` release pip resolves
(3.11: 0.4.x; 3.12 or newer: the current release, which understands depth maps). pip installs
the torch build that ``lerobot`` pins: the CPU-only torch wheels that may sit on a machine do
not match those pins, and PyPI has no CPU-only torchvision, which ``lerobot`` imports and which
must match torch's build; the CUDA build from PyPI runs on a CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

INSIDE = "--inside-venv"


def _bootstrap(args: argparse.Namespace) -> int:
    """Make the virtualenv, install lerobot, and run the checks in it."""
    venv = Path(args.venv)
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([args.python, "-m", "venv", str(venv)], check=True)
    probe = subprocess.run([str(python), "-c", "import lerobot.datasets.lerobot_dataset"],
                           capture_output=True)
    if probe.returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", args.lerobot], check=True)
    command = [str(python), str(Path(__file__).resolve()), str(args.dataset.resolve()), INSIDE]
    return subprocess.run(command, env={**os.environ, "HF_HUB_OFFLINE": "1"}).returncode


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(f"FAIL: {message}")


def _policy_features(features: dict[str, Any]) -> Any:
    try:  # lerobot >= 0.5
        from lerobot.utils.feature_utils import dataset_to_policy_features
    except ImportError:
        from lerobot.datasets.utils import dataset_to_policy_features
    return dataset_to_policy_features(features)


def _inspect_frames(dataset: Any) -> list[int]:
    """Check the first and last frame of each episode; return their dataset indices."""
    import torch

    meta = dataset.meta
    depth_keys = [k for k, f in meta.features.items()
                  if (f.get("info") or {}).get("is_depth_map")]
    edges = []
    for e in range(meta.total_episodes):
        episode = meta.episodes[e]
        first, last = episode["dataset_from_index"], episode["dataset_to_index"] - 1
        for index, frame_index in ((first, 0), (last, episode["length"] - 1)):
            item = dataset[index]
            _check(int(item["episode_index"]) == e, f"frame {index}: episode_index")
            _check(int(item["frame_index"]) == frame_index, f"frame {index}: frame_index")
            _check(abs(float(item["timestamp"]) - frame_index / meta.fps) < 1e-4,
                   f"frame {index}: timestamp")
            _check(item["task"] == episode["tasks"][0], f"frame {index}: task string")
            for key in meta.video_keys:
                height, width = meta.features[key]["shape"][:2]
                _check(tuple(item[key].shape) == (3, height, width), f"{key} shape")
                _check(0.0 <= float(item[key].min()) <= float(item[key].max()) <= 1.0,
                       f"{key} not in [0, 1]")
            edges.append(index)
        print(f"episode {e}: frames {first} and {last} (frame_index 0 and "
              f"{episode['length'] - 1}) load, task {episode['tasks'][0]!r}")
    recognised = getattr(meta, "depth_keys", None)  # lerobot >= 0.6
    if recognised is None:
        print(f"this lerobot has no depth maps: {depth_keys} are plain images to it")
    else:
        _check(sorted(recognised) == sorted(depth_keys), f"depth keys {recognised}")
        print(f"lerobot's depth keys (no RGB transforms or ImageNet stats): {recognised}")
    item = dataset[edges[0]]
    for key in depth_keys:
        depth = item[key]
        info = meta.features[key]["info"]
        _check(depth.shape[0] == 1 and depth.ndim == 3, f"{key} shape {tuple(depth.shape)}")
        valid = depth[depth > 0].to(torch.float32)
        print(f"{key}: {depth.dtype} {tuple(depth.shape)}, stored unit "
              f"{info.get('depth_unit')!r}, {float(valid.min()):.0f}..{float(valid.max()):.0f} "
              f"(non-zero pixels of frame {edges[0]})")
        _check(float(valid.max()) > 100.0, f"{key}: expected millimetres")
    return edges


def _normalise(dataset: Any, edges: list[int]) -> None:
    """Normalise a batch of the edge frames in every mode; undo it."""
    import torch
    from lerobot.configs.types import FeatureType, NormalizationMode
    from lerobot.processor import (
        NormalizerProcessorStep,
        TransitionKey,
        UnnormalizerProcessorStep,
        create_transition,
    )

    loader = torch.utils.data.DataLoader(torch.utils.data.Subset(dataset, edges),
                                         batch_size=len(edges))
    batch = next(iter(loader))
    features = _policy_features(dataset.meta.features)
    observation = {k: batch[k].to(torch.float32) for k in features if k.startswith("observation.")}
    action = batch["action"].to(torch.float32)
    stats = dataset.meta.stats
    for key in [*observation, "action"]:
        missing = [s for s in ("min", "max", "mean", "std", "q01", "q10", "q50", "q90", "q99")
                   if s not in stats.get(key, {})]
        _check(not missing, f"stats of {key} lack {missing}")
    print(f"batch of {len(edges)} frames: {len(observation)} observation features + action, "
          "stats with min/max/mean/std/q01/q10/q50/q90/q99 for each")
    modes = [m for m in NormalizationMode if m != NormalizationMode.IDENTITY]
    for mode in modes:
        norm_map = {FeatureType.STATE: mode, FeatureType.ACTION: mode, FeatureType.VISUAL: mode}
        forward = NormalizerProcessorStep(features=features, norm_map=norm_map, stats=stats)
        inverse = UnnormalizerProcessorStep(features=features, norm_map=norm_map, stats=stats)
        transition = create_transition(observation=dict(observation), action=action.clone())
        normalised = forward(transition)
        restored = inverse(normalised)
        observation_key, action_key = TransitionKey.OBSERVATION, TransitionKey.ACTION
        values = {**normalised[observation_key], "action": normalised[action_key]}
        back = {**restored[observation_key], "action": restored[action_key]}
        original = {**observation, "action": action}
        for key, value in values.items():
            _check(bool(torch.isfinite(value).all()), f"{mode.value}: {key} not finite")
            scale = 1.0 + float(original[key].abs().max())
            error = float((back[key] - original[key]).abs().max())
            _check(error <= 1e-3 * scale, f"{mode.value}: {key} does not round-trip ({error})")
        low = min(float(v.min()) for v in values.values())
        high = max(float(v.max()) for v in values.values())
        state = values["observation.state"]
        print(f"{mode.value:>10}: {len(values)} features normalised, all finite, "
              f"range {low:+.2f}..{high:+.2f} (state {float(state.min()):+.2f}.."
              f"{float(state.max()):+.2f}), unnormalised back")


def _run_checks(dataset_root: Path) -> int:
    """The checks, inside the virtualenv."""
    import importlib.metadata

    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    versions = {name: importlib.metadata.version(name) for name in ("lerobot", "torch")}
    print(f"python {sys.version.split()[0]}, lerobot {versions['lerobot']}, "
          f"torch {versions['torch']}")
    dataset = LeRobotDataset(repo_id=f"local/{dataset_root.name}", root=dataset_root,
                             video_backend="pyav")
    info = json.loads((dataset_root / "meta/info.json").read_text())
    print(f"LeRobotDataset: {dataset.meta.total_episodes} episodes, {len(dataset)} frames, "
          f"{dataset.fps} fps, codebase {info['codebase_version']}, cameras "
          f"{list(dataset.meta.camera_keys)}")
    edges = _inspect_frames(dataset)
    _normalise(dataset, edges)
    print("OK")
    return 0


def main() -> int:
    """Parse the arguments; bootstrap outside the virtualenv, check inside it."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", type=Path, help="dataset folder (agentic-env collect --out)")
    parser.add_argument("--venv", default="/tmp/lerobot-check",
                        help="throwaway virtualenv (created, or reused if lerobot is in it)")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter for the virtualenv (default: this one)")
    parser.add_argument("--lerobot", default="lerobot[dataset]",
                        help="pip requirement for lerobot (default lerobot[dataset]; the extra "
                             "exists from 0.5 on and holds what LeRobotDataset needs)")
    parser.add_argument(INSIDE, action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside_venv:
        return _run_checks(args.dataset.resolve())
    return _bootstrap(args)


if __name__ == "__main__":
    raise SystemExit(main())
