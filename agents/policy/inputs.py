"""A policy's inputs and action checked against the env's before the first step.

LeRobot itself compares camera names only: a policy trained on 64 x 36 images would run,
silently, on 128 x 72 ones. Here every feature the policy reads (cameras and their image
size, depth, ``observation.state`` and the other vectors) and the action it emits are
compared with what the env gives, named as the exporter names it
(:func:`agentic_env.contract.features.frame_features`); a mismatch is refused with both sides
named (π0.5's and SmolVLA's ``empty_camera_<i>`` placeholders excepted: the policy fills
them itself). Camera images of another size are resampled only when the user asks for it
(agent option ``resize``), and then only at the same aspect ratio.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from agentic_env.agents.policy.observation import ASPECT_TOLERANCE, EMPTY_CAMERA_PREFIX
from agentic_env.contract.features import frame_features
from agentic_env.contract.spaces import joint_position_action_space
from agentic_env.errors import InvalidConfigError

#: What each vector of the exporter holds, for the messages.
VECTOR_MEANINGS: dict[str, str] = {
    "observation.state": "six joints, rad; gripper width, m",
    "observation.tcp_pose": "x, y, z, m; quaternion w, x, y, z",
    "action": "six joint targets, rad; gripper width target, m",
}


class PolicyInputError(InvalidConfigError):
    """A policy reads features the env does not give, or of other shapes, or emits another
    action than the env's ``joint_position`` action."""


def dims(shape: tuple[int, ...]) -> str:
    """``(3, 36, 64)`` -> ``"3x36x64"``."""
    return "x".join(str(n) for n in shape)


def env_features(obs: Mapping[str, np.ndarray], depth: bool = False
                 ) -> dict[str, tuple[int, ...]]:
    """What the env gives as the exporter names it: feature name -> shape (images channel
    first, C x H x W, as LeRobot declares them; vectors as recorded).

    Args:
        obs: an observation of the env (:mod:`agentic_env.contract.spaces`).
        depth: include the depth images (``observation.depth.<cam>``, 1 x H x W).
    """
    shapes: dict[str, tuple[int, ...]] = {}
    for name, value in frame_features(dict(obs), depth=depth).items():
        shape = tuple(int(n) for n in value.shape)
        shapes[name] = (shape[2], shape[0], shape[1]) if value.ndim == 3 else shape
    return shapes


def _image_problem(name: str, wanted: tuple[int, ...], given: tuple[int, ...],
                   resize: bool) -> str | None:
    """Why the env's image ``given`` (C, H, W) cannot feed the policy's ``wanted``, or
    ``None`` when it can (equal, or resampled at the same aspect ratio with ``resize``)."""
    if wanted == given:
        return None
    head = f"policy expects {name} {dims(wanted)}, the env gives {dims(given)}"
    if wanted[0] != given[0]:
        return f"{head}: other channels, which no resampling changes"
    (_, height, width), (_, env_height, env_width) = wanted, given
    same_aspect = abs((env_width / env_height) / (width / height) - 1.0) <= ASPECT_TOLERANCE
    if not same_aspect:
        return (f"{head}: other aspect ratios, which resampling would distort; train the "
                f"policy on a collection at {env_width}x{env_height} (agentic-env collect "
                f"--resolution {env_width}x{env_height})")
    if resize:
        return None
    return (f"{head}; train the policy on a collection at {env_width}x{env_height} (agentic-env "
            f"collect --resolution {env_width}x{env_height}) or pass --agent-option "
            f"resize=true to area-resample the env's images to {width}x{height}")


def input_problems(input_features: Mapping[str, tuple[str, tuple[int, ...]]],
                   action_shape: tuple[int, ...], obs: Mapping[str, np.ndarray],
                   resize: bool = False) -> list[str]:
    """Every mismatch between a policy and the env, one sentence each naming both sides
    (empty when the policy can run).

    Args:
        input_features: the policy's inputs: name -> (LeRobot feature type name, shape;
            images C, H, W).
        action_shape: the shape of one action the policy emits.
        obs: an observation of the env.
        resize: images of another size at the same aspect ratio are accepted (resampled).
    """
    depth = any(kind == "VISUAL" and name.startswith("observation.depth.")
                for name, (kind, _) in input_features.items())
    given = env_features(obs, depth=depth)
    cameras = sorted(name.rsplit(".", 1)[1] for name in given
                     if name.startswith("observation.images."))
    problems: list[str] = []
    for name, (kind, shape) in input_features.items():
        shape = tuple(shape)
        if name.startswith(EMPTY_CAMERA_PREFIX):
            continue  # the policy fills it itself
        if name not in given:
            if kind == "VISUAL":
                problems.append(f"policy expects camera {name} {dims(shape)}, which the env "
                                f"does not have: its cameras are {', '.join(cameras)}")
            else:
                problems.append(f"policy expects {name} {dims(shape)}, which the env does not "
                                f"give; it gives {', '.join(sorted(given))}")
        elif kind == "VISUAL":
            problem = _image_problem(name, shape, given[name], resize)
            if problem:
                problems.append(problem)
        elif shape != given[name]:
            meaning = VECTOR_MEANINGS.get(name)
            problems.append(f"policy expects {name} ({dims(shape)},), the env gives "
                            f"({dims(given[name])},)" + (f": {meaning}" if meaning else ""))
    env_action = tuple(joint_position_action_space().shape)
    if tuple(action_shape) != env_action:
        problems.append(f"policy emits action ({dims(tuple(action_shape))},), the env's "
                        f"joint_position action is ({dims(env_action)},): "
                        f"{VECTOR_MEANINGS['action']}")
    return problems


def check_inputs(input_features: Mapping[str, tuple[str, tuple[int, ...]]],
                 action_shape: tuple[int, ...], obs: Mapping[str, np.ndarray],
                 resize: bool = False) -> None:
    """Refuse a policy that does not fit the env (see :func:`input_problems`).

    Raises:
        PolicyInputError: naming every mismatch, both sides of each.
    """
    problems = input_problems(input_features, action_shape, obs, resize)
    if problems:
        raise PolicyInputError("the policy does not fit the env: " + "; ".join(problems))
