"""A minimal tool-calling agent: one model drives a tool set in a bounded conversation.

It shows the tool layer end to end (and lets the tool-calling sim-oracle run tool-driven
episodes offline): the model gets the instruction, the shoulder camera image and the tools,
and acts only through tool calls until it calls ``finish`` or a bound is hit. The episode is
scored from ground truth like every other episode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentic_env.agents.models.base import CallRecord, ModelImage, ModelQuery, ToolCall
from agentic_env.agents.models.budget import Budget, total_usage
from agentic_env.agents.models.conversation import ConversationResult, run_tool_conversation
from agentic_env.agents.models.registry import (
    EMULATED,
    SIM_ORACLE,
    ModelSpec,
    build_backend,
    parse_model_spec,
)
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec, ModuleCall
from agentic_env.harness.tools.backends import open_episode
from agentic_env.harness.tools.episode import SimJudge, ToolEpisode
from agentic_env.oracle.emulated import tool_error_rates, turn_clock
from agentic_env.oracle.profile import load_profile
from agentic_env.oracle.tool_oracle import ToolOracle
from agentic_env.oracle.tool_reference import reference_policy

#: Module name of tool-conversation queries (cassettes, call rows).
TOOLS_MODULE = "tools"
PROMPT = (
    "You control a UR5e robot arm with a two-finger gripper over a table, through tools. "
    "Positions are metres in the robot base frame (x forward, y left, z up from the table "
    "top); angles are radians. The image is the shoulder camera's view.\n"
    "Instruction: {instruction}\n"
    "Carry out the instruction by calling tools, one step at a time, reading each result. "
    "Call finish when it is done or cannot be done."
)


def turn_row(record: CallRecord) -> ModuleCall:
    """The results-database row of one model turn (tokens, latency, cost, tool mode)."""
    reply = record.reply
    return ModuleCall(TOOLS_MODULE, record.model, record.usage.latency_s,
                      record.usage.input_tokens, record.usage.output_tokens,
                      record.usage.cost_usd, reply.attempts if reply else len(record.raw_texts),
                      None if reply is None else reply.tool_mode, record.error)


def tool_query(episode: ToolEpisode) -> ModelQuery:
    """The first turn of the conversation: instruction, shoulder image, tool definitions."""
    image = episode.io.observe()["shoulder_rgb"]
    return ModelQuery(module=TOOLS_MODULE, template="tool_agent",
                      prompt=PROMPT.format(instruction=episode.instruction),
                      images=(ModelImage("shoulder_rgb", image),),
                      tools=tuple(episode.tools.definitions()),
                      fields={"instruction": episode.instruction})


def run_tool_episode(spec: EpisodeSpec, tool_set: str = "primitives", *, max_turns: int = 60,
                     budget: Budget | None = None,
                     on_call: Callable[[CallRecord], None] | None = None,
                     ) -> tuple[EpisodeResult, ConversationResult]:
    """Run ``spec`` with ``spec.model`` driving ``tool_set`` in the simulator, and score it.

    ``spec.model`` is any model spec; ``sim-oracle?wrong_tool=0.1&seed=2`` builds the
    tool-calling sim-oracle over the tool set's reference policy, ``emulated:<profile>`` the
    same with the profile's turn error kinds and virtual seconds per turn, drawn by its
    latency law as every emulated call's (a turn that times out ends the conversation with
    its seconds booked).

    Raises:
        InvalidConfigError: unknown task, tool set or model spec.
        MissingAPIKeyError: a real model's API key is not set.
    """
    episode = open_episode(spec, tool_set)
    try:
        def make_oracle(model: ModelSpec) -> ToolOracle:
            assert isinstance(episode.judge, SimJudge)  # the sim backend's judge
            policy = reference_policy(tool_set, episode.judge.env)
            return ToolOracle(policy, model.error_rates, seed=model.seed * 100_003 + spec.seed)

        def emulate(model: ModelSpec) -> ToolOracle:
            assert isinstance(episode.judge, SimJudge) and model.model is not None
            if model.ablate:
                raise InvalidConfigError(
                    f"model {model.text!r}: ablate= switches off the emulated VLM modules' "
                    "mechanisms; the tool-calling emulation has none (its turns err at the "
                    "profile's constant rates)")
            profile = load_profile(model.model)
            seed = model.seed * 100_003 + spec.seed
            return ToolOracle(reference_policy(tool_set, episode.judge.env),
                              tool_error_rates(profile), seed=seed,
                              name=f"{EMULATED}:{profile.name}",
                              usage=turn_clock(profile, seed))

        backend = build_backend(parse_model_spec(spec.model),
                                factories={SIM_ORACLE: make_oracle, EMULATED: emulate})

        def execute(call: ToolCall) -> tuple[str, dict[str, Any]]:
            result = episode.call(call.name, dict(call.arguments))
            return result.render(), result.to_dict()

        records: list[CallRecord] = []

        def record(call: CallRecord) -> None:
            records.append(call)
            if on_call is not None:
                on_call(call)

        conversation = run_tool_conversation(
            backend, tool_query(episode), execute, finished=lambda: episode.finished,
            max_turns=max_turns, budget=budget, on_call=record)
        usage = total_usage([r.usage for r in records])
        result = episode.score(backend.name, usage.input_tokens, usage.output_tokens,
                               usage.cost_usd, tuple(turn_row(r) for r in records))
        return result, conversation
    finally:
        episode.close()
