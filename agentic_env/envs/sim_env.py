"""The MuJoCo Gymnasium env: scene + task + low-level control loop + primitives + cameras."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import mujoco
import numpy as np

from agentic_env.contract.actions import pose_or_none
from agentic_env.contract.events import parse_events
from agentic_env.contract.lowlevel import low_level_targets
from agentic_env.contract.observation import CameraView, assemble_observation
from agentic_env.contract.spaces import (
    EEDeltaScale,
    action_space,
    check_env_options,
    episode_step_limit,
    observation_space,
)
from agentic_env.contract.trial import TrialSpec
from agentic_env.contract.workcell import ROBOT_PREFIX, SceneConfig
from agentic_env.envs.rollout import PrimitiveRollout, ee_delta_between
from agentic_env.envs.schedule import EpisodeSchedule, resolve_last
from agentic_env.errors import InvalidConfigError, SimulationDivergedError
from agentic_env.geometry.camera import CameraConfig
from agentic_env.pddl.planning import PlanNotFoundError
from agentic_env.primitives.executor import PrimitiveError, PrimitiveExecutor
from agentic_env.primitives.types import (
    FailureReason,
    PrimitiveConfig,
    PrimitiveOutcome,
    parse_primitive_action,
)
from agentic_env.robot.interface import StepStatus
from agentic_env.robot.kinematics import ArmKinematics
from agentic_env.sim.cameras import CameraRenderer, camera_pose_in_world, close_at_exit
from agentic_env.sim.control import SimRobot
from agentic_env.sim.disturbances import DisturbanceRunner, DisturbanceSpec, add_occluder
from agentic_env.sim.dressing import apply_dressing, randomize_dressing
from agentic_env.sim.realism import BENCHMARK_REALISM, check_realism
from agentic_env.sim.scene import SceneBuilder
from agentic_env.sim.state import SceneState, apply_object_poses, capture_object_poses
from agentic_env.tasks import make_task
from agentic_env.tasks.base import SymbolicTask, Task, TaskEvaluation
from agentic_env.tasks.score import ProgressScore
from agentic_env.tasks.symbolic import RECORD_PERIOD, EpisodeScorer
from agentic_env.tasks.variants import Variant
from agentic_env.visualize import resize_nearest

if TYPE_CHECKING:
    from agentic_env.sim.realism.world import RealisticWorld

_RESET_ATTEMPTS = 3
#: Model fields that tasks, dressing and disturbances change; restored at every reset.
_RESETTABLE_MODEL_FIELDS = (
    "body_pos", "body_quat", "cam_pos", "cam_quat", "light_pos", "light_dir", "light_diffuse",
    "light_ambient", "light_specular", "mat_rgba", "geom_rgba",
)
_SETTLE_TIME = 0.3
#: Simulated time a primitive refused by the e-stop takes (the arm holds still), seconds.
ESTOP_REFUSAL_S = 0.5


class SimEnv(gym.Env):
    """Simulated AgenticLab workcell behind the shared observation/action contract.

    Args:
        task: a task name (see :data:`agentic_env.tasks.TASKS`) or a task object.
        setting: ``lab``, ``kitchen`` or ``outdoor`` (overrides ``scene.setting``).
        control_mode: one of ``primitive``, ``ee_delta``, ``joint_position``.
        render_mode: ``None`` or ``"rgb_array"`` (composite of an overview and both cameras).
        scene: workcell layout and camera optics.
        control_hz: rate of the low-level control loop, Hz (physics runs at 1/timestep).
        primitives: primitive tunables.
        ee_delta_scale: scaling of the ``ee_delta`` action.
        max_episode_steps: truncation bound (primitives or control periods).
        record_rollouts: put each primitive's low-level :class:`PrimitiveRollout` in
            ``info["rollout"]``.
        record_observations: also record an observation at every control period of a
            primitive (slow: renders the cameras every period).
        realism: the world (:mod:`agentic_env.sim.realism`): ``realistic`` (camera device
            models, the measured hand-eye calibration error, contact drawn per object and the
            servo's position error, drawn per trial seed; the default,
            :data:`agentic_env.sim.realism.BENCHMARK_REALISM`) or ``ideal`` (exact sensors
            and calibration, nominal contact; bit-identical run to run, for debugging).
        world_effects: with ``realistic``, only these of its effects (``sensors``,
            ``calibration``, ``contact``; default all), e.g. to tell which one a failure
            comes from.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}

    def __init__(
        self,
        task: str | Task = "tabletop",
        setting: str | None = None,
        control_mode: str = "primitive",
        render_mode: str | None = None,
        scene: SceneConfig | None = None,
        control_hz: float = 20.0,
        primitives: PrimitiveConfig | None = None,
        ee_delta_scale: EEDeltaScale | None = None,
        max_episode_steps: int | None = None,
        record_rollouts: bool = False,
        record_observations: bool = False,
        realism: str = BENCHMARK_REALISM,
        world_effects: tuple[str, ...] | None = None,
    ) -> None:
        check_env_options(control_mode, render_mode, control_hz)
        self.realism = check_realism(realism)
        if world_effects is not None and self.realism != "realistic":
            raise InvalidConfigError("world_effects choose among the realistic world's "
                                     "effects: give realism='realistic' too")
        self.task = make_task(task) if isinstance(task, str) else task
        #: The task itself; :attr:`task` sees it through the trial's variant, if any.
        self.base_task = self.task
        self.control_mode = control_mode
        self.render_mode = render_mode
        self.scene_config = scene or SceneConfig()
        if setting is not None:
            self.scene_config = replace(self.scene_config, setting=setting)
        self.primitive_config = primitives or PrimitiveConfig()
        self.ee_delta_scale = ee_delta_scale or EEDeltaScale()
        self.max_episode_steps = episode_step_limit(control_mode, max_episode_steps)
        self.record_rollouts = record_rollouts or record_observations
        self.record_observations = record_observations
        self.metadata = {**self.metadata, "render_fps": int(round(control_hz))}

        builder = SceneBuilder(self.scene_config)
        self.task.build(builder)
        add_occluder(builder.spec)
        self.cameras: tuple[CameraConfig, ...] = (
            self.scene_config.shoulder_camera,
            self.scene_config.wrist_camera,
        )
        #: The realistic world's sensors and episode draws; ``None`` in the ideal world.
        self.world: RealisticWorld | None = None
        resettable = _RESETTABLE_MODEL_FIELDS
        if self.realism == "realistic":
            from agentic_env.sim.realism import world

            self.world = world.RealisticWorld(self.cameras, self.scene_config.setting,
                                              world_effects)
            self.world.prepare(builder.spec)
            resettable += world.WORLD_MODEL_FIELDS
        self.model = builder.compile()
        self._model_defaults = {name: getattr(self.model, name).copy()
                                for name in dict.fromkeys(resettable)}
        self._dressing = builder.dressing
        self.data = mujoco.MjData(self.model)
        self._base_pos = builder.base_pos
        self._home_key = self.model.key(ROBOT_PREFIX + "home").id
        self._control_hz = control_hz
        self.observation_space = observation_space(self.cameras)
        self.action_space = action_space(control_mode, self.primitive_config.workspace)
        self._setup_runtime()
        self._np_random_noise = np.random.default_rng(0)
        self._steps = 0
        self._diverged = False
        self._rollout: PrimitiveRollout | None = None
        self._scorer: EpisodeScorer | None = None
        self._disturbances = DisturbanceRunner([], self.scene_state, np.random.default_rng(0))
        #: The episode's scheduled events and trial variant (privileged).
        self.schedule = EpisodeSchedule(self.task, self.scene_state, [])
        self._primitive_pose: np.ndarray | None = None
        #: The spec of the current trial (set by every reset).
        self.trial: TrialSpec | None = None
        self._tcp_target = np.eye(4)
        self._last_rgb: dict[str, np.ndarray] = {}
        self._last_rgb_time = -1.0
        self._control_listeners: list[Callable[[SimEnv], None]] = []

    # -- runtime objects (rebuilt after unpickling) ------------------------------------------

    def _setup_runtime(self) -> None:
        self._kinematics = ArmKinematics()
        self.robot = SimRobot(self.model, self.data, self._kinematics, 1.0 / self._control_hz,
                              ROBOT_PREFIX)
        if self.world is not None:
            self.robot.servo_error = self.world.episode.servo
        #: Runs primitive actions on :attr:`robot` (``step`` adds observation and scoring).
        self.executor = PrimitiveExecutor(self.robot, self.primitive_config, self._on_step)
        self._renderers: dict[str, CameraRenderer] = {}
        self._overview: mujoco.Renderer | None = None

    def camera_id(self, name: str) -> int:
        """MuJoCo camera id of observation camera ``name`` (``shoulder`` or ``wrist``)."""
        cam = next((c for c in self.cameras if c.name == name), None)
        if cam is None:
            valid = ", ".join(c.name for c in self.cameras)
            raise InvalidConfigError(f"no camera {name!r}; valid: {valid}")
        return self.model.camera(self._mj_camera(cam)).id

    def _mj_camera(self, cam: CameraConfig) -> str:
        return ROBOT_PREFIX + "gripper/" + cam.name if cam.name == "wrist" else cam.name

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for key in ("_kinematics", "robot", "executor", "_renderers", "_overview"):
            state.pop(key, None)
        state["_robot_refs"] = (self.robot.joint_reference(), self.robot.gripper_reference())
        state["_control_listeners"] = []  # callbacks belong to the process that added them
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        q_ref, width_ref = state.pop("_robot_refs")
        self.__dict__.update(state)
        self._setup_runtime()
        self.robot.restore_reference(q_ref, width_ref)

    # -- gymnasium API ----------------------------------------------------------------------

    @property
    def scene_state(self) -> SceneState:
        """Privileged simulator access (harness, scoring and the scripted expert only)."""
        return SceneState(self.model, self.data, self._base_pos)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Sample a new trial (or rebuild a recorded one), let it settle, observe.

        Options:
            ``trial``: a :class:`~agentic_env.contract.trial.TrialSpec` (or its dict) to rebuild
            exactly; its seed replaces ``seed``.
            ``instruction_category``: paraphrase category of the sampled instruction (see
            :mod:`agentic_env.tasks.instructions`); default: uniform over categories.
            ``disturbances``: :class:`~agentic_env.sim.disturbances.DisturbanceSpec` dicts.
            ``events``: scheduled :class:`~agentic_env.contract.events.EventSpec` dicts.
            ``kind``: the trial kind (:data:`agentic_env.tasks.variants.KINDS`, default
            ``"task"``: the task's own instruction), symbolic tasks only.

        Raises:
            SimulationDivergedError: if the layout diverges in all retries.
            InvalidConfigError: on a trial of another task or setting, or an unknown option.
        """
        options = dict(options or {})
        trial = options.pop("trial", None)
        category = options.pop("instruction_category", None)
        disturbances = [DisturbanceSpec.from_dict(d) for d in options.pop("disturbances", ())]
        events = list(parse_events(list(options.pop("events", ()))))
        kind = str(options.pop("kind", "task"))
        if options:
            raise InvalidConfigError(
                f"unknown reset options {sorted(options)}; valid: trial, "
                "instruction_category, disturbances, events, kind"
            )
        self.task = self.base_task
        if trial is not None:
            trial = trial if isinstance(trial, TrialSpec) else TrialSpec.from_dict(trial)
            self._check_trial(trial)
            seed = trial.seed
        elif seed is None:  # continue the env's random stream, but record a concrete seed
            seed = int(self.np_random.integers(2**31))
        super().reset(seed=seed)
        self._np_random_noise = np.random.default_rng(self.np_random.integers(2**63))
        for _attempt in range(_RESET_ATTEMPTS):
            for name, default in self._model_defaults.items():
                getattr(self.model, name)[:] = default
            mujoco.mj_resetDataKeyframe(self.model, self.data, self._home_key)
            if trial is None:
                self.task.reset(self.scene_state, self.np_random, category)
                # the dressing draws from an RNG of its own, so layouts do not depend on it
                dressing_rng = (np.random.default_rng([int(seed), 2])
                                if self.scene_config.randomize else None)
                dressing = randomize_dressing(
                    self.model, self.data, self._dressing, dressing_rng, self._base_pos,
                    keepout=getattr(self.task, "dressing_keepout", ()))
                initial_poses = capture_object_poses(self.scene_state)
            else:
                self.task.apply_trial(self.scene_state, trial)
                apply_object_poses(self.scene_state, trial.objects)
                # after the poses, so that distractor poses are bit-exact
                apply_dressing(self.model, trial.dressing, self.data)
                dressing = trial.dressing
                initial_poses = trial.objects
                disturbances = [DisturbanceSpec.from_dict(d) for d in trial.disturbances]
                events = list(parse_events(list(trial.events)))
            if self.world is not None:
                self.robot.servo_error = self.world.draw(self.model, int(seed)).servo
            mujoco.mj_forward(self.model, self.data)
            self.robot.sync_reference()
            if self._settle():
                break
        else:
            raise SimulationDivergedError(
                f"the initial layout diverged in {_RESET_ATTEMPTS} attempts; check the task's "
                "object sizes and masses"
            )
        if trial is not None:
            variant = Variant.from_dict(trial.variant) if trial.variant else None
            self.schedule = EpisodeSchedule(self.task, self.scene_state, events, variant)
        else:
            self.schedule = EpisodeSchedule.for_kind(kind, self.task, self.scene_state,
                                                     int(seed), events)
        self.task = self.schedule.task
        variant = self.schedule.variant
        instruction = self.task.instruction()
        self.trial = TrialSpec(
            task=self.task.name, setting=self.scene_config.setting, seed=int(seed),
            objects=initial_poses, instruction=instruction.text,
            instruction_category=instruction.category, goal=self.task.goal(),
            task_state=self.task.trial_state(),
            dressing=dressing,
            realism=self.realism,
            disturbances=tuple(d.to_dict() for d in disturbances),
            events=tuple(e.to_dict() for e in self.schedule.runner.specs),
            variant={} if variant is None else variant.to_dict(),
        )
        self._scorer = (EpisodeScorer(self.task, self.scene_state)
                        if isinstance(self.task, SymbolicTask) else None)
        # an RNG of its own: replays draw the same directions whether or not the layout
        # was sampled (sampling consumes the env's RNG)
        reference = None if self._scorer is None else self._scorer.reference
        self._disturbances = DisturbanceRunner(resolve_last(disturbances, reference,
                                                            self.task.name),
                                               self.scene_state,
                                               np.random.default_rng([int(seed), 1]))
        self._steps = 0
        self._diverged = False
        self._tcp_target = self._tcp_pose_matrix()
        self._last_rgb = {}
        if self.world is not None:
            self.world.see_surfaces(self.model, self.data,
                                    [self._camera_renderer(cam) for cam in self.cameras])
        observation = self.observe()
        info = self._info(self.task.evaluate(self.scene_state))
        info["trial"] = self.trial.to_dict()
        if self.world is not None:
            info["world"] = self.world.episode.to_dict()
        return observation, info

    def _check_trial(self, trial: TrialSpec) -> None:
        if trial.task != self.task.name or trial.setting != self.scene_config.setting:
            raise InvalidConfigError(
                f"this env runs task {self.task.name!r} in setting "
                f"{self.scene_config.setting!r}; the trial is {trial.task!r} in "
                f"{trial.setting!r}: make the env with that task and setting"
            )

    def progress_score(self, goal_checker_error: bool = False) -> ProgressScore:
        """AgenticLab task progress score of the episode so far (symbolic tasks only).

        Args:
            goal_checker_error: the agent's goal checker misjudged the final state (p = 1).

        Raises:
            InvalidConfigError: if the task has no PDDL model.
        """
        if self._scorer is None:
            raise InvalidConfigError(f"task {self.task.name!r} has no PDDL model to score")
        return self._scorer.score(goal_checker_error)

    def episode_score(self, goal_checker_error: bool = False) -> ProgressScore | None:
        """The episode's :meth:`progress_score` (``goal_checker_error``: the agent's goal
        checker misjudged the final state), ``None`` with no reference to score against (no
        PDDL model, or no plan from the start state). The one place an episode is scored:
        the final ``info``, the harness and the LeRobot env read it."""
        if self._scorer is None:
            return None
        try:
            return self._scorer.score(goal_checker_error)
        except PlanNotFoundError:
            return None

    def _settle(self) -> bool:
        hold_q, hold_width = self.robot.joint_reference(), self.robot.gripper_reference()
        for _ in range(int(np.ceil(_SETTLE_TIME / self.robot.control_dt))):
            if self.robot.send(hold_q, hold_width).diverged:
                return False
        if self.world is not None:
            return self.world.settle(
                self.model, self.data, self.robot.control_dt,
                lambda: not self.robot.send(hold_q, hold_width).diverged)
        return True

    def step(
        self, action: Any
    ) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Apply one action (a primitive, or one control period of a low-level mode).

        Raises:
            InvalidActionError: malformed actions (wrong keys, shapes, ids, non-finite values
                in low-level modes), before any physics step.
        """
        extra: dict[str, Any] = {}
        if self.control_mode == "primitive":
            self._rollout = PrimitiveRollout() if self.record_rollouts else None
            command = parse_primitive_action(action)
            name, pose = command.name, pose_or_none(command.pose)
            self._primitive_pose = pose
            if self.schedule.runner.primitive_requested():
                outcome = PrimitiveOutcome(name, False, FailureReason.ESTOP.value,
                                           "refused: the e-stop is pressed")
                self._hold_still(ESTOP_REFUSAL_S)
            else:
                self._disturbances.primitive_started(name, pose)
                try:
                    outcome = self.executor.execute(command)
                except PrimitiveError as stopped:  # the e-stop, pressed while holding
                    outcome = PrimitiveOutcome(name, False, stopped.reason.value, str(stopped))
            self.schedule.sync()
            extra["primitive"] = outcome.as_info()
            if self._rollout is not None:
                extra["rollout"] = self._rollout
            self._diverged |= outcome.reason == "sim_diverged"
            self._tcp_target = self._tcp_pose_matrix()
            if self._scorer is not None:
                step = self._scorer.record(self.scene_state)
                extra["symbolic_step"] = None if step is None else str(step)
        else:
            joint_target, width_target = self._low_level_targets(action)
            if self.schedule.runner.primitive_requested():  # refused: hold still
                joint_target, width_target = (self.robot.joint_reference(),
                                              self.robot.gripper_reference())
                self._tcp_target = self._tcp_pose_matrix()
            status = self.robot.send(joint_target, width_target)
            self.schedule.runner.control_step()
            self.schedule.sync()
            self._diverged |= status.diverged
            if self._scorer is not None and self._steps % RECORD_PERIOD == 0:
                self._scorer.record(self.scene_state)  # a low-level agent's pick or place
            for listener in self._control_listeners:
                listener(self)
        if self._diverged:
            mujoco.mj_resetDataKeyframe(self.model, self.data, self._home_key)
            mujoco.mj_forward(self.model, self.data)
            self.robot.sync_reference()
        self._steps += 1
        evaluation = self.task.evaluate(self.scene_state)
        observation = self.observe()
        terminated = evaluation.success or self._diverged
        truncated = self._steps >= self.max_episode_steps and not terminated
        info = self._info(evaluation) | extra
        if (terminated or truncated) and self._scorer is not None and not self._diverged:
            self._scorer.record(self.scene_state)
            score = self.episode_score()
            info["progress_score"] = None if score is None else asdict(score)
        return observation, float(evaluation.success), terminated, truncated, info

    def _low_level_targets(self, action: Any) -> tuple[np.ndarray, float]:
        joint_target, width, self._tcp_target = low_level_targets(
            self.control_mode, action, self._tcp_target, self._kinematics,
            self.robot.joint_reference(), self.robot.control_dt, self.ee_delta_scale)
        return joint_target, width

    def add_control_listener(self, listener: Callable[[SimEnv], None]) -> None:
        """Call ``listener(env)`` after every control period (e.g. to grab video frames)."""
        self._control_listeners.append(listener)

    def wait(self, seconds: float) -> dict[str, Any]:
        """Hold the arm still for ``seconds`` of simulated time (the robot waits, e.g. for the
        operator; not a motion, so the e-stop allows it); events due meanwhile fire.
        Returns the ``info`` of the state after it."""
        self._hold_still(seconds)
        self.schedule.sync()
        return self._info(self.task.evaluate(self.scene_state))

    def _hold_still(self, seconds: float) -> None:
        hold_q, hold_width = self.robot.joint_reference(), self.robot.gripper_reference()
        for _ in range(int(np.ceil(seconds / self.robot.control_dt))):
            self._diverged |= self.robot.send(hold_q, hold_width).diverged
            self.schedule.runner.control_step()
            for listener in self._control_listeners:
                listener(self)

    def _on_step(self, joint_target: np.ndarray, width_target: float, _status: StepStatus) -> None:
        self._disturbances.control_step(self._primitive_pose)
        if self.schedule.runner.control_step():
            raise PrimitiveError(FailureReason.ESTOP, "the e-stop was pressed: the arm stopped")
        for listener in self._control_listeners:
            listener(self)
        rollout = self._rollout
        if rollout is None:
            return
        previous = (self._kinematics.forward(rollout.joint_targets[-1]) if rollout.joint_targets
                    else self._tcp_target)
        current = self._kinematics.forward(joint_target)
        rollout.joint_targets.append(np.asarray(joint_target, dtype=np.float32))
        rollout.gripper_targets.append(float(width_target))
        rollout.ee_delta_actions.append(
            ee_delta_between(previous, current, width_target, self.robot.control_dt,
                             self.ee_delta_scale)
        )
        if self.record_observations:
            rollout.observations.append(self.observe())

    # -- observations -----------------------------------------------------------------------

    def _tcp_pose_matrix(self) -> np.ndarray:
        return self._site_pose(self.robot.idx.tcp_site)

    def _site_pose(self, site: int | str) -> np.ndarray:
        """Pose (4x4) of site ``site`` (id or name) in the base frame."""
        view = self.data.site(site)
        pose = np.eye(4)
        pose[:3, :3] = view.xmat.reshape(3, 3)
        pose[:3, 3] = view.xpos - self._base_pos
        return pose

    def observe(self) -> dict[str, np.ndarray]:
        """Render and assemble the current observation (no physics step).

        ``reset`` and ``step`` return this; call it directly to look again without acting.
        """
        views: dict[str, CameraView] = {}
        world_to_base = np.eye(4)
        world_to_base[:3, 3] = -self._base_pos
        for cam in self.cameras:
            renderer = self._camera_renderer(cam)
            rgb, depth = renderer.render(self.data, self._np_random_noise)
            extrinsics = world_to_base @ camera_pose_in_world(self.data, renderer.camera_id)
            if self.world is not None:
                velocity = self.world.camera_velocity(self.model, self.data, renderer.camera_id)
                flange = self._site_pose(ROBOT_PREFIX + "attachment_site")
                rgb, depth, extrinsics = self.world.observe(
                    cam.name, rgb, depth, extrinsics, flange, velocity, self._np_random_noise)
            self._last_rgb[cam.name] = rgb
            self._last_rgb_time = float(self.data.time)
            views[cam.name] = CameraView(rgb, depth, cam.intrinsics, extrinsics)
        return assemble_observation(views, self.robot.joint_positions(),
                                    self._tcp_pose_matrix(), self.robot.gripper_width())

    def true_extrinsics(self, camera: str) -> np.ndarray:
        """Privileged: the pose (4x4) of ``camera``'s OpenCV frame in the robot base frame as
        it is, where the observation's extrinsics are the calibration as solved (equal in
        the ideal world)."""
        pose = camera_pose_in_world(self.data, self.camera_id(camera))
        pose[:3, 3] -= self._base_pos
        return pose

    def segmentation(self, camera: str) -> np.ndarray:
        """Privileged: the MuJoCo geom id seen at each pixel of ``camera``'s image, (H, W)
        int64, -1 where no geom is (for the sim-oracle and ground-truth labels)."""
        cam = next((c for c in self.cameras if c.name == camera), None)
        if cam is None:
            valid = ", ".join(c.name for c in self.cameras)
            raise InvalidConfigError(f"no camera {camera!r}; valid: {valid}")
        return self._camera_renderer(cam).render_segmentation(self.data)

    def _camera_renderer(self, cam: CameraConfig) -> CameraRenderer:
        renderer = self._renderers.get(cam.name)
        if renderer is None:
            renderer = CameraRenderer(self.model, cam, self._mj_camera(cam))
            self._renderers[cam.name] = renderer
        return renderer

    def _info(self, evaluation: TaskEvaluation) -> dict[str, Any]:
        instruction = self.task.instruction()
        return {
            "disturbances": list(self._disturbances.applied),
            **self.schedule.info(),
            "instruction": instruction.text,
            "instruction_category": instruction.category,
            "success": evaluation.success,
            "goal_satisfied": evaluation.satisfied,
            "goal_total": evaluation.total,
            "progress": evaluation.progress,
            "score_terms": evaluation.terms,
            "sim_diverged": self._diverged,
            "sim_time": float(self.data.time),
        }

    # -- rendering --------------------------------------------------------------------------

    def render(self) -> np.ndarray | None:
        """Composite frame (360, 960, 3): an overview beside the shoulder and wrist images.

        The camera images are the last observation's when the simulation has not moved since;
        otherwise they are rendered again (RGB only).
        """
        if self.render_mode != "rgb_array":
            return None
        if self._last_rgb_time != float(self.data.time):
            for cam in self.cameras:
                self._last_rgb[cam.name] = self._camera_renderer(cam).render(
                    self.data, None, depth=False)[0]
            self._last_rgb_time = float(self.data.time)
        if self._overview is None:
            self._overview = mujoco.Renderer(self.model, height=360, width=640)
            close_at_exit(self._overview)
        self._overview.update_scene(self.data, camera="overview")
        overview = self._overview.render()
        side = [resize_nearest(self._last_rgb.get(cam.name), 320, 180) for cam in self.cameras]
        return np.concatenate([overview, np.concatenate(side, axis=0)], axis=1)

    def close(self) -> None:
        """Release rendering contexts."""
        for renderer in getattr(self, "_renderers", {}).values():
            renderer.close()
        self._renderers = {}
        if getattr(self, "_overview", None) is not None:
            self._overview.close()
            self._overview = None

