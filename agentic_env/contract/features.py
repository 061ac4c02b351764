"""The per-frame features of the LeRobot datasets ``agentic-env collect`` writes, and of what
a LeRobot policy reads back on the benchmark: one naming for the exporter and the policy
agent alike (see :mod:`agentic_env.datasets.lerobot_format` for the dataset layout).
"""

from __future__ import annotations

import numpy as np

#: Camera names in the order of the observation contract.
CAMERAS: tuple[str, ...] = ("shoulder", "wrist")
#: Stored depth unit per metre (depth is stored in millimetres).
DEPTH_UNITS_PER_METRE = 1000.0


def video_key(camera: str) -> str:
    """Feature name of a camera's RGB video."""
    return f"observation.images.{camera}"


def depth_key(camera: str) -> str:
    """Feature name of a camera's depth images."""
    return f"observation.depth.{camera}"


def extrinsics_key(camera: str) -> str:
    """Feature name of a camera's per-frame pose (row-major 4x4, camera -> base)."""
    return f"observation.extrinsics.{camera}"


def depth_millimetres(depth: np.ndarray) -> np.ndarray:
    """Depth (H, W) float32 metres -> uint16 millimetres, rounded (0 = no return)."""
    return np.clip(np.rint(depth * DEPTH_UNITS_PER_METRE), 0, 65535).astype(np.uint16)


def frame_features(obs: dict[str, np.ndarray], depth: bool = False) -> dict[str, np.ndarray]:
    """One observation (see :mod:`agentic_env.contract.spaces`) as the exporter's per-frame
    observation features, in the dtypes and shapes of the dataset's ``meta/info.json``.

    Returns:
        ``observation.state`` (7,) float32 (six joints, rad; gripper width, m),
        ``observation.tcp_pose`` (7,) float32 (x, y, z m; quaternion w, x, y, z),
        ``observation.extrinsics.<cam>`` (16,) float32, ``observation.images.<cam>``
        (H, W, 3) uint8 and, with ``depth``, ``observation.depth.<cam>`` (H, W, 1) uint16
        millimetres (0 = no return).
    """
    features = {
        "observation.state": np.concatenate([obs["joint_positions"],
                                             obs["gripper_width"]]).astype(np.float32),
        "observation.tcp_pose": np.asarray(obs["tcp_pose"], np.float32).copy(),
    }
    for cam in CAMERAS:
        features[video_key(cam)] = obs[f"{cam}_rgb"]
        features[extrinsics_key(cam)] = np.asarray(obs[f"{cam}_extrinsics"],
                                                   np.float32).reshape(16).copy()
        if depth:
            features[depth_key(cam)] = depth_millimetres(obs[f"{cam}_depth"])[..., None]
    return features
