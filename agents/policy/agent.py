"""The policy agent: a LeRobot policy drives the env one control period at a time.

Per control period (20 Hz by default) the agent hands the policy the observation as the
exporter names it (:mod:`agentic_env.agents.policy.observation`) with the instruction as
``task``, runs LeRobot's preprocessor, ``select_action`` (which queues an action chunk and
pops one action per call, as the policy was trained) and postprocessor, and holds the
resulting ``joint_position`` action (six joint targets, rad; gripper width, m) for one
period. Before the first step the policy's cameras, image sizes, state and action dimensions
are checked against the env's (:mod:`agentic_env.agents.policy.inputs`); a missing package
or model becomes the project's error (:mod:`agentic_env.agents.policy.loading`). Both end
the episode as a ``policy`` failure naming the fix. The episode ends when the env reports
the trial over, or on the step budget (option ``max_steps``, control periods) or the
wall-clock budget (``max_wall_s``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from agentic_env.agents.base import AgentReport, AgentSetup, ControlIO, TaskContext
from agentic_env.agents.policy.checkpoint import LoadedPolicy, load_policy
from agentic_env.agents.policy.inputs import check_inputs
from agentic_env.agents.policy.loading import check_checkpoint_path, load_errors
from agentic_env.agents.policy.observation import policy_batch
from agentic_env.agents.policy.seeds import check_unseen_trial
from agentic_env.errors import AgenticEnvError


class PolicyAgent:
    """Runs a LeRobot policy checkpoint closed-loop; failures end up in the report.

    Options (their defaults are registered with the agent in :mod:`agentic_env.agents.base`):
    ``checkpoint`` (folder; ``{task}`` is replaced by the task's name: by default
    ``runs/policies/{task}``, where ``agentic-env train-policy`` writes), ``device`` (torch
    device), ``max_steps`` (control periods) and ``resize`` (area-resample camera images of
    another size, same aspect ratio, to the policy's; otherwise such a policy is refused).
    """

    def __init__(self, setup: AgentSetup) -> None:
        self.setup = setup
        self._loaded: dict[Path, LoadedPolicy] = {}

    def _policy(self, checkpoint: Path) -> LoadedPolicy:
        if checkpoint not in self._loaded:
            check_checkpoint_path(checkpoint)
            with load_errors(checkpoint):
                self._loaded[checkpoint] = load_policy(checkpoint,
                                                       str(self.setup.options["device"]))
        return self._loaded[checkpoint]

    def check_trial(self, task: str, seed: int) -> None:
        """Refuse, before the episode, a trial seed outside the evaluation range or among the
        checkpoint's demonstrations (:func:`~agentic_env.agents.policy.seeds.check_unseen_trial`;
        the harness calls it when it builds the agent)."""
        check_unseen_trial(str(self.setup.options["checkpoint"]).format(task=task), seed)

    def run(self, robot_io: ControlIO, instruction: str, context: TaskContext) -> AgentReport:
        """Carry out ``instruction`` with the policy (see the module docstring)."""
        import torch

        report = AgentReport()
        start = time.perf_counter()

        def event(kind: str, **details: Any) -> None:
            entry = {"kind": kind, "t": round(time.perf_counter() - start, 3), **details}
            report.events.append(entry)
            if self.setup.on_event is not None:
                self.setup.on_event(entry)

        options = self.setup.options
        checkpoint = Path(str(options["checkpoint"]).format(task=context.task))
        resize = bool(options["resize"])
        obs = robot_io.observe()
        try:
            loaded = self._policy(checkpoint)
            check_inputs(loaded.input_features, loaded.action_shape, obs, resize)
        except AgenticEnvError as error:
            report.failure, report.failure_detail = "policy", str(error)
            event("refused", detail=str(error))
            return report
        event("policy", checkpoint=str(loaded.folder), type=loaded.policy_type,
              inputs=sorted(loaded.input_features), resize=resize)
        torch.manual_seed(self.setup.seed)
        loaded.policy.reset()
        loaded.preprocessor.reset()
        loaded.postprocessor.reset()
        max_steps = int(options["max_steps"])
        ended = False
        while not ended:
            if report.actions >= max_steps:
                report.failure = "limits"
                report.failure_detail = f"the step budget ran out ({max_steps} control periods)"
                break
            if time.perf_counter() - start > self.setup.max_wall_s:
                report.failure = "limits"
                report.failure_detail = f"the wall-clock budget ran out ({self.setup.max_wall_s} s)"
                break
            try:
                action = self._act(loaded, obs, instruction, resize)
            except AgenticEnvError as error:
                report.failure, report.failure_detail = "policy", str(error)
                break
            obs, ended = robot_io.control(action)
            report.actions += 1
        event("stop", control_periods=report.actions, ended=ended)
        return report

    @staticmethod
    def _act(loaded: LoadedPolicy, obs: dict[str, np.ndarray], instruction: str,
             resize: bool) -> np.ndarray:
        """The next action (7,) float64 of the policy for ``obs``."""
        import torch

        batch = loaded.preprocessor(policy_batch(obs, loaded.input_features, instruction,
                                                 resize))
        with torch.inference_mode():
            action = loaded.policy.select_action(batch)
        action = loaded.postprocessor(action)
        return np.asarray(action.detach().to("cpu").numpy(), np.float64).reshape(
            loaded.action_shape)


def make_policy_agent(setup: AgentSetup) -> PolicyAgent:
    """The agent factory (``--agent policy``)."""
    return PolicyAgent(setup)
