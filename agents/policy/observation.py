"""An observation as a LeRobot policy reads it: the exporter's features, batched as tensors.

Each feature the policy declares is taken from
:func:`agentic_env.contract.features.frame_features` (the names, shapes and dtypes of
``agentic-env collect``) and converted as ``LeRobotDataset`` hands it to training: RGB as
float32 (1, 3, H, W) in [0, 1], depth as float32 (1, 1, H, W) millimetres, vectors as float32
(1, D). LeRobot's preprocessor then normalises them with the checkpoint's dataset statistics.
A camera rendered at another resolution of the same aspect ratio is area-resampled to the
policy's input size only when asked (``resize``; the policy agent's option of that name);
:mod:`agentic_env.agents.policy.inputs` checks the sizes before the first step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from PIL import Image

from agentic_env.contract.features import frame_features
from agentic_env.errors import InvalidConfigError
from agentic_env.visualize import resize_nearest

#: Relative difference of width/height ratios tolerated when resampling a camera image.
ASPECT_TOLERANCE = 0.02
#: Image features π0/π0.5 and SmolVLA declare for cameras they fill themselves (their
#: ``empty_cameras`` option): never read from the env.
EMPTY_CAMERA_PREFIX = "observation.images.empty_camera_"


def resample(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """``image`` (H, W, C) at ``width`` x ``height`` pixels: RGB area-averaged, depth
    (uint16 millimetres) nearest-neighbour (no invented depths at edges).

    Raises:
        InvalidConfigError: the aspect ratios differ (the camera's field of view would not
            match the policy's).
    """
    h, w = image.shape[:2]
    if (h, w) == (height, width):
        return image
    if abs((w / h) / (width / height) - 1.0) > ASPECT_TOLERANCE:
        raise InvalidConfigError(f"camera image {w}x{h} cannot be resampled to the policy's "
                                 f"{width}x{height}: the aspect ratios differ")
    if image.dtype == np.uint16:
        return resize_nearest(image, width, height)
    return np.asarray(Image.fromarray(image).resize((width, height), Image.Resampling.BOX))


def policy_frame(obs: Mapping[str, np.ndarray],
                 input_features: Mapping[str, tuple[str, tuple[int, ...]]],
                 resize: bool = False) -> dict[str, np.ndarray]:
    """The features a policy reads, as numpy arrays in the dataset's layout (images H, W, C;
    vectors as exported).

    Args:
        obs: an observation (:mod:`agentic_env.contract.spaces`).
        input_features: name -> (LeRobot feature type name, shape: C, H, W for images).
        resize: resample images of another size to the policy's (same aspect ratio only).

    Raises:
        InvalidConfigError: the policy reads a feature the exporter does not write, a
            vector of another shape, or (without ``resize``) an image of another size.
    """
    depth = any(name.startswith("observation.depth.") for name in input_features)
    frame = frame_features(dict(obs), depth=depth)
    selected: dict[str, np.ndarray] = {}
    for name, (kind, shape) in input_features.items():
        if name.startswith(EMPTY_CAMERA_PREFIX):
            continue
        if name not in frame:
            raise InvalidConfigError(f"the policy reads {name!r}, which agentic-env collect "
                                     f"does not write; it writes {', '.join(sorted(frame))}")
        value = frame[name]
        if kind == "VISUAL" and value.shape[:2] != tuple(shape[1:]) and not resize:
            raise InvalidConfigError(f"the policy reads {name!r} at {shape[2]}x{shape[1]}; the "
                                     f"env gives {value.shape[1]}x{value.shape[0]} (resample "
                                     "with resize=True)")
        if kind == "VISUAL":
            value = resample(value, shape[2], shape[1])
        elif value.shape != shape:
            raise InvalidConfigError(f"the policy reads {name!r} of shape {shape}; the "
                                     f"exporter writes {value.shape}")
        selected[name] = value
    return selected


def policy_batch(obs: Mapping[str, np.ndarray],
                 input_features: Mapping[str, tuple[str, tuple[int, ...]]],
                 task: str, resize: bool = False) -> dict[str, Any]:
    """A batch of one for LeRobot's preprocessor: :func:`policy_frame` as tensors the way
    ``LeRobotDataset`` yields them (images channel-first float32, RGB in [0, 1], depth in
    millimetres), plus ``task`` (the instruction); ``resize`` as for :func:`policy_frame`."""
    import torch

    batch: dict[str, Any] = {}
    for name, value in policy_frame(obs, input_features, resize).items():
        tensor = torch.from_numpy(np.array(value))  # a writable copy
        if input_features[name][0] == "VISUAL":
            scale = 255.0 if value.dtype == np.uint8 else 1.0
            tensor = tensor.permute(2, 0, 1).float() / scale
        batch[name] = tensor.float().unsqueeze(0)
    batch["task"] = [task]
    return batch
