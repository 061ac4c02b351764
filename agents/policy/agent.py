"""The policy agent: a LeRobot policy drives the env one control period at a time.

Per control period (20 Hz by default) the agent hands the policy the observation as the
exporter names it (:mod:`agentic_env.agents.policy.observation`) with the instruction as
``task``, runs LeRobot's preprocessor, ``select_action`` (which queues an action chunk and
pops one action per call, as the policy was trained) and postprocessor, and holds the
resulting ``joint_position`` action (six joint targets, rad; gripper width, m) for one
period. The episode ends when the env reports the trial over, or on the step budget
(option ``max_steps``, control periods) or the wall-clock budget (``max_wall_s``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from agentic_env.agents.base import AgentReport, AgentSetup, ControlIO, TaskContext
from agentic_env.agents.policy.checkpoint import LoadedPolicy, load_policy
from agentic_env.agents.policy.observation import policy_batch
from agentic_env.errors import AgenticEnvError


class PolicyAgent:
    """Runs a LeRobot policy checkpoint closed-loop; failures end up in the report.

    Options (their defaults are registered with the agent in :mod:`agentic_env.agents.base`):
    ``checkpoint`` (folder; ``{task}`` is replaced by the task's name: by default
    ``runs/policies/{task}``, where ``agentic-env train-policy`` writes), ``device`` (torch
    device) and ``max_steps`` (control periods).
    """

    def __init__(self, setup: AgentSetup) -> None:
        self.setup = setup
        self._loaded: dict[Path, LoadedPolicy] = {}

    def _policy(self, checkpoint: Path) -> LoadedPolicy:
        if checkpoint not in self._loaded:
            self._loaded[checkpoint] = load_policy(checkpoint, str(self.setup.options["device"]))
        return self._loaded[checkpoint]

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
        try:
            loaded = self._policy(checkpoint)
        except AgenticEnvError as error:
            report.failure, report.failure_detail = "policy", str(error)
            return report
        event("policy", checkpoint=str(loaded.folder), type=loaded.policy_type,
              inputs=sorted(loaded.input_features))
        torch.manual_seed(self.setup.seed)
        loaded.policy.reset()
        loaded.preprocessor.reset()
        loaded.postprocessor.reset()
        obs = robot_io.observe()
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
                action = self._act(loaded, obs, instruction)
            except AgenticEnvError as error:
                report.failure, report.failure_detail = "policy", str(error)
                break
            obs, ended = robot_io.control(action)
            report.actions += 1
        event("stop", control_periods=report.actions, ended=ended)
        return report

    @staticmethod
    def _act(loaded: LoadedPolicy, obs: dict[str, np.ndarray], instruction: str) -> np.ndarray:
        """The next action (7,) float64 of the policy for ``obs``."""
        import torch

        batch = loaded.preprocessor(policy_batch(obs, loaded.input_features, instruction))
        with torch.inference_mode():
            action = loaded.policy.select_action(batch)
        action = loaded.postprocessor(action)
        return np.asarray(action.detach().to("cpu").numpy(), np.float64).reshape(
            loaded.action_shape)


def make_policy_agent(setup: AgentSetup) -> PolicyAgent:
    """The agent factory (``--agent policy``)."""
    return PolicyAgent(setup)
