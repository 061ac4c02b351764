"""A simplified reach / pick task on the low-level ``ee_delta`` mode, shaped for SB3.

**Description.** The UR5e starts at home above the tabletop scene (three cubes, a bin).
``reach``: move the TCP to a goal point. ``pick``: grasp the red cube and lift it.

**Observation.** ``state`` (Box, float32): joint positions (6, rad), TCP position (3, m, base
frame), gripper width (1, m), the target position (3, m: the goal for reach; the red cube's
position for pick, read from the simulator — a privileged, sim-only state observation like
ManiSkill's ``state`` mode) and target minus TCP (3, m). ``state_image`` (Dict): ``state``
without the privileged cube position for pick (zeros) plus ``image``, the shoulder camera's
RGB at ``image_size`` (uint8, H x W x 3), which SB3's ``MultiInputPolicy`` reads with a CNN.

**Action.** Box [-1, 1]^3 (reach: TCP velocity along base x, y, z, scaled by
:class:`~agentic_env.contract.spaces.EEDeltaScale`, 0.25 m/s at 1) or [-1, 1]^4 (pick: plus the
absolute gripper command, -1 closed .. +1 open). Orientation stays top-down. Components that
would leave the workspace box are zeroed before they reach the arm.

**Reward (shaped, per control period, in [0, 1] for reach and [0, 3] for pick).**
reach: ``1 - tanh(10 d)`` with ``d`` the TCP-goal distance in metres. pick: the same reach term
to the cube, ``+1`` while both fingers touch it, ``+ min(lift / 0.1 m, 1)`` while held.

**Episode.** Fixed horizon (``episode_steps`` periods, truncation); never terminates early
except on simulator divergence. ``info["is_success"]``: reach within ``success_radius``, or
the cube held at least 5 cm up.

**Randomisations.** The scene layout per seed; the reach goal uniformly within
``goal_center ± goal_range`` (``goal_range = 0``: a fixed goal, the simplest setting).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agentic_env.errors import InvalidConfigError

#: Task variants.
TASKS: tuple[str, ...] = ("reach", "pick")
#: Observation variants.
OBSERVATIONS: tuple[str, ...] = ("state", "state_image")
#: The cube the pick task lifts.
PICK_CUBE = "red_cube"
_STATE_SIZE = 16
_LIFT_FULL = 0.1
_LIFT_SUCCESS = 0.05


@dataclass(frozen=True)
class ReachPickConfig:
    """Settings of :class:`ReachPickEnv`.

    Attributes:
        task: ``reach`` or ``pick``.
        observation: ``state`` or ``state_image``.
        episode_steps: control periods per episode (20 Hz by default).
        goal_center: centre of the reach goals, base frame, metres.
        goal_range: half-extent of the uniform goal box, metres (0 = fixed goal).
        success_radius: reach success distance, metres.
        workspace_low / workspace_high: box the TCP is kept in, base frame, metres.
        image_size: (width, height) of the ``state_image`` camera image, pixels (>= 36).
        control_hz: control rate, Hz.
    """

    task: str = "reach"
    observation: str = "state"
    episode_steps: int = 50
    goal_center: tuple[float, float, float] = (0.5, 0.1, 0.2)
    goal_range: float = 0.0
    success_radius: float = 0.02
    workspace_low: tuple[float, float, float] = (0.25, -0.4, 0.015)
    workspace_high: tuple[float, float, float] = (0.75, 0.4, 0.45)
    image_size: tuple[int, int] = (64, 48)
    control_hz: float = 20.0

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise InvalidConfigError(f"unknown RL task {self.task!r}; valid: {', '.join(TASKS)}")
        if self.observation not in OBSERVATIONS:
            raise InvalidConfigError(
                f"unknown observation {self.observation!r}; valid: {', '.join(OBSERVATIONS)}"
            )
        if self.episode_steps < 1 or self.goal_range < 0 or self.success_radius <= 0:
            raise InvalidConfigError(
                "episode_steps must be >= 1, goal_range >= 0 and success_radius > 0"
            )
        if min(self.image_size) < 36:
            raise InvalidConfigError(
                f"image_size {self.image_size} is below 36 pixels, the smallest SB3's CNN takes"
            )


class ReachPickEnv(gym.Env):
    """The simplified reach / pick task (see the module docstring); wraps a ``SimEnv``.

    The reward and the pick task's cube position come from the simulator (privileged, as a
    harness's score does); the policy sees only the observation described above.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}

    def __init__(self, config: ReachPickConfig | None = None,
                 render_mode: str | None = None) -> None:
        from agentic_env.contract.workcell import SceneConfig
        from agentic_env.envs.sim_env import SimEnv
        from agentic_env.geometry.camera import azure_kinect_color, realsense_d405

        self.config = config or ReachPickConfig()
        self.render_mode = render_mode
        width, height = (self.config.image_size if self.config.observation == "state_image"
                         else (16, 16))  # state only: the smallest (cheapest) render
        scene = SceneConfig(shoulder_camera=azure_kinect_color(width, height),
                            wrist_camera=realsense_d405(16, 16), randomize=False)
        self.sim = SimEnv(task="tabletop", control_mode="ee_delta", scene=scene,
                          render_mode=render_mode, control_hz=self.config.control_hz,
                          max_episode_steps=self.config.episode_steps)
        self.metadata = {**self.metadata, "render_fps": int(round(self.config.control_hz))}
        size = 3 if self.config.task == "reach" else 4
        self.action_space = spaces.Box(-1.0, 1.0, (size,), np.float32)
        state = spaces.Box(-np.inf, np.inf, (_STATE_SIZE,), np.float32)
        if self.config.observation == "state":
            self.observation_space: spaces.Space = state
        else:
            self.observation_space = spaces.Dict({
                "state": state,
                "image": spaces.Box(0, 255, (height, width, 3), np.uint8),
            })
        self._low = np.asarray(self.config.workspace_low)
        self._high = np.asarray(self.config.workspace_high)
        self._goal = np.asarray(self.config.goal_center, dtype=float)
        self._cube_rest_z = 0.0
        self._steps = 0
        self._last_tcp = np.zeros(3)

    # -- privileged quantities (reward, pick target) ----------------------------------------

    def _cube_position(self) -> np.ndarray:
        return self.sim.scene_state.body_position(PICK_CUBE)

    def _holding(self) -> bool:
        from agentic_env.sim.state import holding

        return holding(self.sim.scene_state, PICK_CUBE)

    # -- observation and reward ---------------------------------------------------------------

    def _target(self) -> np.ndarray:
        return self._goal if self.config.task == "reach" else self._cube_position()

    def _observation(self, obs: dict[str, np.ndarray]) -> Any:
        tcp = obs["tcp_pose"][:3].astype(float)
        target = self._target()
        hide = self.config.task == "pick" and self.config.observation == "state_image"
        shown = np.zeros(3) if hide else target
        state = np.concatenate([obs["joint_positions"], tcp, obs["gripper_width"], shown,
                                shown - tcp if not hide else np.zeros(3)]).astype(np.float32)
        if self.config.observation == "state":
            return state
        return {"state": state, "image": obs["shoulder_rgb"]}

    def _reward(self, tcp: np.ndarray) -> tuple[float, dict[str, float], bool]:
        distance = float(np.linalg.norm(self._target() - tcp))
        terms = {"reach": 1.0 - float(np.tanh(10.0 * distance)), "distance": distance}
        if self.config.task == "reach":
            return terms["reach"], terms, distance < self.config.success_radius
        held = self._holding()
        lift = max(0.0, float(self._cube_position()[2]) - self._cube_rest_z)
        terms["grasp"] = float(held)
        terms["lift"] = min(lift / _LIFT_FULL, 1.0) if held else 0.0
        reward = terms["reach"] + terms["grasp"] + terms["lift"]
        return reward, terms, held and lift >= _LIFT_SUCCESS

    # -- gymnasium API ------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """New layout (and goal); ``options`` are not used."""
        super().reset(seed=seed)
        obs, _ = self.sim.reset(seed=int(self.np_random.integers(2**31)))
        offset = self.np_random.uniform(-1.0, 1.0, 3) * self.config.goal_range
        self._goal = np.asarray(self.config.goal_center, dtype=float) + offset
        self._cube_rest_z = float(self._cube_position()[2])
        self._steps = 0
        self._last_tcp = obs["tcp_pose"][:3].astype(float)
        _, terms, success = self._reward(self._last_tcp)
        return self._observation(obs), {"is_success": success, **terms}

    def step(self, action: np.ndarray) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """One control period: move the TCP (and the gripper for pick)."""
        action = np.clip(np.asarray(action, dtype=float), -1.0, 1.0)
        delta = np.zeros(7)
        delta[:3] = self._keep_in_workspace(action[:3])
        delta[6] = action[3] if self.config.task == "pick" else 1.0
        obs, _, _, _, info = self.sim.step(delta)
        self._last_tcp = obs["tcp_pose"][:3].astype(float)
        self._steps += 1
        reward, terms, success = self._reward(self._last_tcp)
        truncated = self._steps >= self.config.episode_steps
        return (self._observation(obs), reward, bool(info["sim_diverged"]), truncated,
                {"is_success": success, **terms})

    def _keep_in_workspace(self, velocity: np.ndarray) -> np.ndarray:
        tcp = self._last_tcp
        step = velocity * self.sim.ee_delta_scale.linear_speed / self.config.control_hz
        next_tcp = tcp + step
        blocked = ((next_tcp < self._low) & (velocity < 0)) | ((next_tcp > self._high)
                                                              & (velocity > 0))
        return np.where(blocked, 0.0, velocity)

    def render(self) -> np.ndarray | None:
        """The sim env's composite frame (``render_mode="rgb_array"``)."""
        return self.sim.render()

    def close(self) -> None:
        """Release rendering contexts."""
        self.sim.close()
