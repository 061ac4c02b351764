"""Record one scripted-expert episode at the control rate.

The expert (privileged: ground-truth poses, Fast Downward plan) acts through primitives; the
env runs every primitive as a sequence of control periods (default 20 Hz) and hands back the
joint and gripper targets of each period in ``info["rollout"]``. A control listener observes
the cameras and the robot after every period, so a frame is recorded per control period:

* frame ``i`` holds the observation *before* control period ``i + 1`` and the action applied
  during it (LeRobot's convention: ``action[i]`` is what the robot does after seeing
  ``observation[i]``);
* frame 0 is the observation returned by ``reset``; the last frame is the final observation,
  whose action holds the last targets (the arm stays where it is).

RGB frames stream straight into the MP4 writers and depth into 16-bit PNGs, so an episode
never sits in memory as raw images (unless ``keep_frames`` asks for it, for verification);
only the small thumbnails that LeRobot's image statistics are computed from are kept.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from agentic_env.contract.features import (
    CAMERAS,
    DEPTH_UNITS_PER_METRE,
    depth_millimetres,
    extrinsics_key,
    frame_features,
)
from agentic_env.datasets.stats import sample_indices, thumbnail, to_json, visual_stats
from agentic_env.datasets.video import VideoConfig, VideoWriter
from agentic_env.errors import AgenticEnvError, InvalidConfigError
from agentic_env.robot.constants import GRIPPER_WIDTH_RANGE

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv



class RecordingError(AgenticEnvError, RuntimeError):
    """The env's rollout and the recorded observations disagree (a bug, not a user error)."""


@dataclass(frozen=True)
class EpisodeRequest:
    """What to record.

    Attributes:
        seed: trial seed (the layout, goal and instruction follow from it).
        instruction_category: paraphrase category to ask for; ``None`` or a category the
            trial does not offer falls back to the env's uniform choice.
        disturbances: disturbance dicts (see :class:`agentic_env.sim.disturbances.DisturbanceSpec`).
    """

    seed: int
    instruction_category: str | None = None
    disturbances: tuple[dict[str, Any], ...] = ()


@dataclass
class RecordedEpisode:
    """One recorded episode: per-frame arrays and per-episode metadata.

    Attributes:
        state: (T, 7) float32, six joint positions (rad) and the gripper width (m).
        tcp_pose: (T, 7) float32, TCP in the base frame: x, y, z (m), quaternion w, x, y, z.
        action: (T, 7) float32, the joint targets (rad) and gripper width target (m) sent in
            the control period after the frame (``joint_position`` mode actions).
        ee_delta: (T, 7) float32, the same motion as normalised ``ee_delta`` actions (may
            exceed [-1, 1] where the expert moves faster than the ``ee_delta`` scale).
        extrinsics: camera -> (T, 16) float32, row-major 4x4 camera-to-base pose per frame.
        depth_png: camera -> T 16-bit PNGs of depth in millimetres (0 = no return); empty
            unless depth was recorded.
        image_stats: camera -> LeRobot's per-episode statistics of the RGB frames (values in
            [0, 1], each stat a (3, 1, 1) nested list; see :mod:`agentic_env.datasets.stats`).
        depth_stats: camera -> the same of the depth frames in millimetres ((1, 1, 1) lists);
            empty unless depth was recorded.
        rgb: camera -> T raw RGB frames, only with ``keep_frames``.
        depth: camera -> T raw depth images (metres), only with ``keep_frames`` and depth.
        metadata: trial spec, instruction, success, progress, progress score, primitives,
            applied disturbances, sim and wall time.
    """

    state: np.ndarray
    tcp_pose: np.ndarray
    action: np.ndarray
    ee_delta: np.ndarray
    extrinsics: dict[str, np.ndarray]
    depth_png: dict[str, list[bytes]]
    image_stats: dict[str, dict[str, Any]]
    depth_stats: dict[str, dict[str, Any]]
    metadata: dict[str, Any]
    rgb: dict[str, list[np.ndarray]] = field(default_factory=dict)
    depth: dict[str, list[np.ndarray]] = field(default_factory=dict)

    @property
    def length(self) -> int:
        """Number of frames."""
        return int(self.state.shape[0])

    @property
    def success(self) -> bool:
        """Whether the expert reached the goal."""
        return bool(self.metadata["success"])


def encode_depth_png(depth: np.ndarray) -> bytes:
    """Depth (H, W) float32 metres -> 16-bit greyscale PNG of millimetres (0 = no return)."""
    buffer = io.BytesIO()
    Image.fromarray(depth_millimetres(depth)).save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def decode_depth_png(data: bytes) -> np.ndarray:
    """Inverse of :func:`encode_depth_png`: (H, W) float32 metres."""
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image, dtype=np.uint16).astype(np.float32) / DEPTH_UNITS_PER_METRE


class _FrameSink:
    """Receives observations (one per control period) and streams them to disk.

    Keeps a statistics thumbnail (:func:`~agentic_env.datasets.stats.thumbnail`) of every
    frame, since which frames enter the statistics depends on the episode's final length:
    at 640 x 360, 43 kB (RGB) and 29 kB (depth) per frame and camera.
    """

    def __init__(self, videos: dict[str, Path], fps: float, video: VideoConfig,
                 sizes: dict[str, tuple[int, int]], depth: bool, keep_frames: bool) -> None:
        self.writers = {cam: VideoWriter(videos[cam], *sizes[cam], fps, video) for cam in CAMERAS}
        self.depth = depth
        self.keep_frames = keep_frames
        self.state: list[np.ndarray] = []
        self.tcp: list[np.ndarray] = []
        self.extrinsics: dict[str, list[np.ndarray]] = {cam: [] for cam in CAMERAS}
        self.depth_png: dict[str, list[bytes]] = {cam: [] for cam in CAMERAS}
        self.rgb: dict[str, list[np.ndarray]] = {cam: [] for cam in CAMERAS}
        self.raw_depth: dict[str, list[np.ndarray]] = {cam: [] for cam in CAMERAS}
        self._rgb_thumbnails: dict[str, list[np.ndarray]] = {cam: [] for cam in CAMERAS}
        self._depth_thumbnails: dict[str, list[np.ndarray]] = {cam: [] for cam in CAMERAS}

    def push(self, obs: dict[str, np.ndarray]) -> None:
        frame = frame_features(obs)
        self.state.append(frame["observation.state"])
        self.tcp.append(frame["observation.tcp_pose"])
        for cam in CAMERAS:
            rgb = obs[f"{cam}_rgb"]
            self.writers[cam].append(rgb)
            self.extrinsics[cam].append(frame[extrinsics_key(cam)])
            self._rgb_thumbnails[cam].append(thumbnail(rgb).copy())
            if self.depth:
                depth = obs[f"{cam}_depth"]
                self.depth_png[cam].append(encode_depth_png(depth))
                self._depth_thumbnails[cam].append(
                    thumbnail(depth_millimetres(depth)[..., None]).copy())
            if self.keep_frames:
                self.rgb[cam].append(rgb.copy())
                if self.depth:
                    self.raw_depth[cam].append(obs[f"{cam}_depth"].copy())

    def close(self) -> None:
        for writer in self.writers.values():
            writer.close()

    def visual_stats(self, depth: bool) -> dict[str, dict[str, Any]]:
        """camera -> per-episode statistics of RGB in [0, 1] (``depth``: of depth, mm)."""
        thumbnails, scale = ((self._depth_thumbnails, 1.0) if depth
                             else (self._rgb_thumbnails, 255.0))
        picked = sample_indices(len(self.state))
        return {cam: to_json(visual_stats([frames[i] for i in picked], scale), "float32")
                for cam, frames in thumbnails.items()}


def _reset(env: SimEnv, request: EpisodeRequest) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    options: dict[str, Any] = {"disturbances": list(request.disturbances)}
    if request.instruction_category is not None:
        try:
            return env.reset(seed=request.seed,
                             options={**options,
                                      "instruction_category": request.instruction_category})
        except InvalidConfigError:  # this trial offers no such paraphrase: sample another
            pass
    return env.reset(seed=request.seed, options=options)


class ExpertRecorder:
    """Records scripted-expert episodes from one env (installs one control listener on it).

    Args:
        env: a primitive-mode env made with ``record_rollouts=True``; the recorder owns its
            control listener for the env's lifetime.
        video: encoder settings.
        depth: also record depth (16-bit PNG millimetres per frame).

    Raises:
        InvalidConfigError: if ``env`` does not record rollouts or is not in primitive mode.
    """

    def __init__(self, env: SimEnv, video: VideoConfig | None = None, depth: bool = False) -> None:
        if env.control_mode != "primitive" or not env.record_rollouts:
            raise InvalidConfigError(
                "ExpertRecorder needs SimEnv(control_mode='primitive', record_rollouts=True)"
            )
        self.env = env
        self.video = video or VideoConfig()
        self.depth = depth
        self._sink: _FrameSink | None = None
        env.add_control_listener(self._on_control_period)

    def _on_control_period(self, env: SimEnv) -> None:
        if self._sink is not None:
            self._sink.push(env.observe())

    def record(self, request: EpisodeRequest, videos: dict[str, Path],
               keep_frames: bool = False) -> RecordedEpisode:
        """Run the scripted expert on one trial and record every control period.

        Args:
            request: seed, instruction category and disturbances of the trial.
            videos: camera name -> MP4 path to write (``shoulder`` and ``wrist``).
            keep_frames: keep the raw RGB (and depth) frames in memory, for verification.

        Raises:
            RecordingError: if the recorded observations and actions do not line up.
        """
        from agentic_env.experts import expert_actions

        env = self.env
        start = time.perf_counter()
        sizes = {cam.name: (cam.width, cam.height) for cam in env.cameras}
        fps = float(env.metadata["render_fps"])
        sink = _FrameSink(videos, fps, self.video, sizes, self.depth, keep_frames)
        joint_actions: list[np.ndarray] = []
        ee_actions: list[np.ndarray] = []
        primitives: list[dict[str, Any]] = []
        try:
            obs, info = _reset(env, request)
            sink.push(obs)
            self._sink = sink
            for action in expert_actions(env.task, env.scene_state):
                obs, _, terminated, truncated, info = env.step(action)
                rollout = info["rollout"]
                joint_actions += [np.append(q, w).astype(np.float32) for q, w in
                                  zip(rollout.joint_targets, rollout.gripper_targets,
                                      strict=True)]
                ee_actions += [np.asarray(a, np.float32) for a in rollout.ee_delta_actions]
                primitives.append({k: info["primitive"][k] for k in ("name", "ok", "reason")})
                if terminated or truncated:
                    break
        finally:
            self._sink = None
            sink.close()
        if len(joint_actions) != len(sink.state) - 1:
            raise RecordingError(
                f"{len(sink.state) - 1} control periods observed but {len(joint_actions)} "
                "actions recorded"
            )
        first = sink.state[0]
        hold = joint_actions[-1] if joint_actions else first.astype(np.float32)
        hold_ee = np.zeros(7, np.float32)
        hold_ee[6] = hold[6] / GRIPPER_WIDTH_RANGE[1] * 2.0 - 1.0
        metadata = {
            "seed": request.seed,
            "trial": env.trial.to_dict() if env.trial is not None else {},
            "instruction": info["instruction"],
            "instruction_category": info["instruction_category"],
            "success": bool(info["success"]),
            "progress": float(info["progress"]),
            "progress_score": info.get("progress_score"),
            "sim_diverged": bool(info["sim_diverged"]),
            "disturbances_applied": list(info["disturbances"]),
            "primitives": primitives,
            "sim_time": float(info["sim_time"]),
            "wall_time": time.perf_counter() - start,
        }
        return RecordedEpisode(
            state=np.asarray(sink.state, np.float32),
            tcp_pose=np.asarray(sink.tcp, np.float32),
            action=np.asarray([*joint_actions, hold], np.float32),
            ee_delta=np.asarray([*ee_actions, hold_ee], np.float32),
            extrinsics={cam: np.asarray(v, np.float32) for cam, v in sink.extrinsics.items()},
            depth_png=sink.depth_png if self.depth else {},
            image_stats=sink.visual_stats(depth=False),
            depth_stats=sink.visual_stats(depth=True) if self.depth else {},
            metadata=metadata,
            rgb=sink.rgb if keep_frames else {},
            depth=sink.raw_depth if keep_frames and self.depth else {},
        )
