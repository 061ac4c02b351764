"""Emulated models: a paper's VLM as an offline profile (``emulated:<profile>``).

An :class:`EmulatedModel` is a :class:`~agentic_env.oracle.backend.SimOracle` driven by a
:class:`~agentic_env.oracle.profile.ModelProfile`:

* each role errs at ``1 - success`` of the measured module that emulates it (the profile's
  role map), by the kinds the profile weighs (a checker's ``false_fail`` after a good pick,
  a detector's neighbour or same-category distractor...); the planner roles (MALLVI's
  Decomposer, ALRM's task planner and executor, the planner-executor's planner) by the plan
  kinds (a skipped or reordered step, a wrong object, a premature "done", ALRM's nested-call
  failure: :mod:`agentic_env.oracle.plan_errors`); the router and the critic by their
  verdict kinds; the planner-executor's own planner error kinds (``verbal``...) at the
  parser's rate times the profile's ``planner_turn_share``;
* it names things by their looks (``names="described"``), so the episode's name alignment
  binds its names to the scene's objects as it would a real model's;
* its errors persist: asked again in an unchanged situation it repeats its answer (and its
  mistake) unless a coin of the profile's ``reask_redraw`` redraws it
  (:mod:`agentic_env.oracle.backend`);
* its detector answers see only what the image shows (the profile's visible-pixel
  threshold; never a closed drawer's inside), and the detector's and Localizer's error rate
  depends on how hard the target is to see there, the measured rate kept on average over
  the module benchmark (:func:`difficulty_models`); its scene listings (the detector's list,
  MALLVI's Descriptor) hold only what the image shows;
* its detector's and Localizer's boxes are loose: each edge of the tight box displaced at
  random so that their mean IoU is the profile's Table II Bbox IoU (:func:`box_models`,
  :mod:`agentic_env.oracle.boxes`); the point is the segmentation's;
* the checker's, goal checker's, grasp judge's and parser's errors (and MALLVI's Reflector's
  and Thinker's) follow what each call was sent (:func:`cause_models`: visible pixels, crop
  clutter, goal size), the measured rate kept as the mean over the calibration replica;
* each answer's usage carries the module's tokens per call and its seconds as *virtual*
  time: nothing sleeps, and the episode adds the seconds up as its model time. The seconds
  are drawn about the module's mean seconds per call by the profile's latency law, with its
  time-out and re-queries (:mod:`agentic_env.oracle.latency`); a call whose every attempt
  times out raises :class:`~agentic_env.agents.models.base.ModelTimeoutError`, as the real
  backend does, with the seconds it spent (booked as model time). A tool-calling model's
  turns (:class:`~agentic_env.oracle.tool_oracle.ToolOracle`) take the same law
  (:func:`turn_clock`).

Privileged like the sim-oracle it is built on: only the harness builds it
(:func:`agentic_env.oracle.oracle_factories`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from agentic_env.agents.models.base import (
    PLANNER_ERRORS,
    Completion,
    ModelError,
    ModelQuery,
    Usage,
)
from agentic_env.oracle.backend import SimOracle
from agentic_env.oracle.boxes import BoxModel, right_mean
from agentic_env.oracle.causes import CAUSE_ROLES, CauseModel, build_model
from agentic_env.oracle.difficulty import DifficultyModel, benchmark_situations
from agentic_env.oracle.image_quality import quality_model
from agentic_env.oracle.latency import LatencyModel, VirtualClock
from agentic_env.oracle.profile import PLAN_MEASURE, PLAN_ROLES, ModelProfile, ModuleProfile
from agentic_env.oracle.replica import packaged_replica

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv

#: The roles whose error rate depends on the target's difficulty (they point at one target;
#: MALLVI's Descriptor at its least visible object).
DIFFICULTY_ROLES: tuple[str, ...] = ("detector", "localizer", "descriptor")
#: The roles whose answers box their target (MALLVI's Descriptor lists, it does not box).
BOX_ROLES: tuple[str, ...] = ("detector", "localizer")


def error_rates(profile: ModelProfile) -> dict[str, float]:
    """Each role's (and, for a model that writes plans, each planner error kind's)
    probability of a wrong answer."""
    share = profile.planner_turn_share.value
    rates = {role: (1.0 - profile.module_for(role).success.value)
             * (share if role in profile.turn_roles else 1.0) for role in profile.roles}
    turn = _turn_rate(profile)
    return rates if turn is None else {**rates, **dict.fromkeys(PLANNER_ERRORS, turn)}


def _turn_rate(profile: ModelProfile) -> float | None:
    """One planner turn's error rate: the parser's error rate times ``planner_turn_share``
    (``None``: the model writes no plans)."""
    if PLAN_MEASURE not in profile.modules:
        return None
    return (1.0 - profile.modules[PLAN_MEASURE].success.value) \
        * profile.planner_turn_share.value


def tool_error_rates(profile: ModelProfile) -> dict[str, float]:
    """A tool-calling model's per-turn probability of each tool error kind (:data:`TOOL_ERRORS`
    of the tool episode): a planner turn's rate (the parser's error rate times
    ``planner_turn_share``) split by the weights of ``kinds.tools``; none for a model that
    writes no plans."""
    weights = {kind: n.value for kind, n in profile.kinds.get("tools", {}).items()}
    total, turn = sum(weights.values()), _turn_rate(profile)
    if turn is None or not total:
        return {}
    return {kind: turn * weight / total for kind, weight in weights.items()}


def turn_usage(profile: ModelProfile) -> Usage:
    """One tool-calling turn's mean virtual usage: the parser's mean seconds and tokens per
    call, as ALRM's task executor turns take.

    Raises:
        ModelError: the profile writes no plans (it measures no parser).
    """
    if PLAN_MEASURE not in profile.modules:
        raise ModelError(f"model profile {profile.name!r} does not call tools: it measures "
                         f"{', '.join(profile.modules)}, no {PLAN_MEASURE}")
    return _usage(profile.modules[PLAN_MEASURE])


def turn_clock(profile: ModelProfile, seed: int) -> Callable[[str], Usage]:
    """A tool-calling model's turns on virtual time: module -> one turn's usage, the
    :func:`turn_usage` tokens with seconds drawn about its mean by the profile's latency law
    (spread, time-outs, re-queries), as every call of an :class:`EmulatedModel` with the same
    ``seed``.

    Raises:
        ModelError: the profile writes no plans (it measures no parser).
    """
    clock = VirtualClock(latency_law(profile), np.random.default_rng([seed, 2]),
                         f"emulated:{profile.name}")
    return partial(clock.stamp, turn_usage(profile))


def latency_law(profile: ModelProfile) -> LatencyModel:
    """The profile's latency law (its ``[latency]`` table)."""
    return LatencyModel.of({key: n.value for key, n in profile.latency.items()})


def _usage(module: ModuleProfile) -> Usage:
    return Usage(input_tokens=round(module.input_tokens.value),
                 output_tokens=round(module.output_tokens.value),
                 latency_s=module.seconds.value, cost_usd=None)


def kind_weights(profile: ModelProfile) -> dict[str, dict[str, float]]:
    """Each role's error kinds' weights: a planner role's (:data:`PLAN_ROLES`) the plan
    kinds it can make (those weighed above zero; none: its module's kinds), any other
    role's those of the measured module that emulates it."""
    weights = {role: {kind: n.value for kind, n in profile.kinds[module].items()}
               for role, module in profile.roles.items() if module in profile.kinds}
    plan = profile.kinds.get("plan", {})
    for role, kinds in PLAN_ROLES.items():
        own = {kind: plan[kind].value for kind in kinds if kind in plan and plan[kind].value}
        if role in profile.roles and own:
            weights[role] = own
    return weights


def difficulty_models(profile: ModelProfile) -> dict[str, DifficultyModel]:
    """The difficulty model of each of :data:`DIFFICULTY_ROLES` the profile emulates: its
    ``[difficulty]`` weights over the module benchmark's detector situations."""
    weights = profile.difficulty
    model = DifficultyModel(
        reference_px=weights["reference_px"].value,
        per_halving=weights["per_halving"].value,
        per_lookalike=weights["per_lookalike"].value,
        situations=benchmark_situations(),
        quality=quality_model() if weights["image_quality"].value else None)
    return {role: model for role in DIFFICULTY_ROLES if role in profile.roles}


def box_models(profile: ModelProfile) -> dict[str, BoxModel]:
    """The loose-box model of each of :data:`BOX_ROLES` the profile emulates: a right
    detection's mean IoU :func:`~agentic_env.oracle.boxes.right_mean` of the detector's
    ``box_iou`` and pointing success, with the ``[boxes]`` edge law; none when the detector
    gives no ``box_iou`` or ``[boxes] enabled = 0`` (tight boxes)."""
    detector = profile.modules.get("detector")
    boxes = profile.boxes
    if detector is None or detector.box_iou is None or not boxes \
            or not boxes["enabled"].value:
        return {}
    model = BoxModel(right_mean(detector.box_iou.value, detector.success.value),
                     boxes["grow"].value, boxes["max_shrink"].value)
    return {role: model for role in BOX_ROLES if profile.roles.get(role) == "detector"}


def cause_models(profile: ModelProfile) -> dict[str, CauseModel]:
    """Each role's cause model (:mod:`agentic_env.oracle.causes`): the profile's
    ``[causes.<module>]`` slopes (a module switched off, ``enabled = 0``, has none: its
    roles err by the constant coin), over the packaged calibration replica. One model per
    measured module, shared by the roles it serves
    (:data:`~agentic_env.oracle.causes.CAUSE_ROLES`), so one normaliser per model x
    module."""
    models: dict[str, CauseModel] = {}
    for module, numbers in profile.causes.items():
        if not numbers.get("enabled") or not numbers["enabled"].value:
            continue
        model = build_model(module, {k: n.value for k, n in numbers.items()},
                            profile.min_visible_px.value, packaged_replica())
        models.update({role: model for role in CAUSE_ROLES[module]
                       if profile.roles.get(role) == module})
    return models


class EmulatedModel(SimOracle):
    """A profile's model over one episode's simulator (see the module docstring).

    Args:
        env: the env whose ground truth (and renders) the answers read; kept private.
        profile: the model's profile.
        seed: seed of the error draws and of the names it invents.

    Attributes:
        name: ``emulated:<profile name>``.
        profile: the profile it emulates.
        latency: the profile's latency law (:mod:`agentic_env.oracle.latency`).

    Raises:
        InvalidConfigError: the task has no PDDL model.
    """

    def __init__(self, env: SimEnv, profile: ModelProfile, seed: int = 0) -> None:
        super().__init__(env, error_rates(profile), seed, names="described",
                         kinds=kind_weights(profile),
                         min_visible_px=round(profile.min_visible_px.value),
                         reask_redraw=profile.reask_redraw.value,
                         difficulty=difficulty_models(profile), sees_image_only=True,
                         causes=cause_models(profile), boxes=box_models(profile))
        self.name = f"emulated:{profile.name}"
        self.profile = profile
        self.latency = latency_law(profile)
        # the waits' stream is apart from the error streams
        self._clock = VirtualClock(self.latency, np.random.default_rng([seed, 2]), self.name)

    def complete(self, query: ModelQuery) -> Completion:
        """The sim-oracle's answer with the profile's errors, stamped with the role's tokens
        (:meth:`usage`) and seconds drawn by the latency law about the role's mean.

        Raises:
            ModelTimeoutError: every attempt overran the time-out (no answer is drawn); it
                carries the seconds spent as its ``usage``.
            ModelError: the profile emulates no such role, or no answer is registered.
        """
        usage = self._clock.stamp(self.usage(query.module), query.module)
        return replace(super().complete(query), usage=usage)

    def usage(self, role: str) -> Usage:
        """One call of ``role`` on average: the measured module's mean seconds per call as
        ``latency_s`` (virtual: not waited for), its tokens per call, and an unknown price.

        Raises:
            ModelError: the profile's role map does not name ``role``.
        """
        if role not in self.profile.roles:
            raise ModelError(f"model profile {self.profile.name!r} emulates no role "
                             f"{role!r}; its roles are {', '.join(self.profile.roles)}")
        return _usage(self.profile.module_for(role))
