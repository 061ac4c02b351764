"""What the sim-oracle's answers read: :class:`OracleContext` (privileged; only the sim-oracle
backend, :mod:`agentic_env.oracle.backend`, builds one).

It holds the simulator, the injected-error draws and one random stream, and the episode's
camera-visibility truth (:attr:`OracleContext.sight`, :mod:`agentic_env.oracle.visibility`).
With a re-ask redraw probability below 1 errors persist: every call's draws come from a
stream keyed by its *situation* (:meth:`OracleContext.situation`; see the backend's module
docstring). An answer states what its call's error depends on (the target's sighting, the
verdict's pixels, the crop's clutter, the goal's size) and :meth:`OracleContext.wrong` draws
at the rate the module's model gives it (:mod:`agentic_env.oracle.difficulty`,
:mod:`agentic_env.oracle.causes`); a module without one errs at its plain rate.

This module imports no answer module, so every answer may import it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, Unpack

import numpy as np

from agentic_env.agents.models.base import ModelQuery
from agentic_env.oracle.boxes import BoxModel
from agentic_env.oracle.causes import CauseModel
from agentic_env.oracle.difficulty import DifficultyModel, Sighting
from agentic_env.oracle.name_book import NameBook, name_book
from agentic_env.oracle.visibility import Visibility
from agentic_env.sim.state import capture_object_poses
from agentic_env.tasks.base import SymbolicTask

if TYPE_CHECKING:
    from agentic_env.envs.sim_env import SimEnv

PartT = TypeVar("PartT")

#: Grid (m) the free bodies' positions are rounded to in a situation's key.
POSITION_GRID = 0.01
#: Grid the free bodies' orientation quaternions are rounded to in a situation's key.
QUATERNION_GRID = 0.1


class OracleOptions(TypedDict, total=False):
    """How a sim-oracle answers beyond its error rates and seed: the keyword arguments of
    :class:`OracleContext` and :class:`~agentic_env.oracle.backend.SimOracle` (every one
    optional; its default in brackets).

    Attributes:
        kinds: module -> its error kinds' relative weights (> 0); a module without them errs
            its answer's own way. A verdict's kinds never change its rate: the only error a
            verdict can make is the one its truth allows. [none]
        min_visible_px: an object with fewer pixels than this in the image a role was sent
            is not seen (1: any pixel will do). [1]
        reask_redraw: probability in [0, 1] that a call in a situation asked before draws
            its errors afresh (1: independent draws on every call). [1.0]
        difficulty: module -> the model that makes its error rate depend on how hard the
            target is to see (:mod:`agentic_env.oracle.difficulty`). [none]
        sees_image_only: answers that list the scene list only what the image sent shows
            (else every object of the task). [False]
        causes: role -> the model that makes its error rate depend on what its call was sent
            (:mod:`agentic_env.oracle.causes`); other roles err at their plain rate. [none]
        boxes: role -> how loose the boxes its answers draw are
            (:mod:`agentic_env.oracle.boxes`); other roles' boxes are tight. [none]
    """

    kinds: Mapping[str, Mapping[str, float]] | None
    min_visible_px: int
    reask_redraw: float
    difficulty: Mapping[str, DifficultyModel] | None
    sees_image_only: bool
    causes: Mapping[str, CauseModel] | None
    boxes: Mapping[str, BoxModel] | None


class OracleContext:
    """What the sim-oracle's answers read: the simulator, the injected-error draw and one
    random stream (privileged; only the sim-oracle backend holds it).

    Args:
        env: the simulator (a symbolic task).
        error_rates: module or error kind -> probability in [0, 1] of a wrong answer.
        seed: seed of the error injection.
        **options: how it answers (:class:`OracleOptions`).

    Raises:
        TypeError: an option :class:`OracleOptions` does not name.

    Attributes:
        env: the simulator the answers read.
        names: the episode's bindings of model names to the simulator's ids.
        rng: the random stream of the error injection (with persistent errors: of the
            current call's situation, set by :meth:`begin`).
        min_visible_px: the visibility threshold, pixels of the image sent.
        reask_redraw: the re-ask redraw probability.
        sees_image_only: whether scene listings hold only what the image sent shows.
        sight: the episode's camera-visibility truth (segmentation cache, what is shown).
        record: where each call's stated situation is appended as ``(role, situation)``
            (``None``: not recorded); the calibration replica is made so.
    """

    def __init__(self, env: SimEnv, error_rates: Mapping[str, float], seed: int,
                 **options: Unpack[OracleOptions]) -> None:
        unknown = sorted(set(options) - set(OracleOptions.__annotations__))
        if unknown:
            raise TypeError(f"OracleContext got unknown options {', '.join(unknown)}; valid: "
                            f"{', '.join(OracleOptions.__annotations__)}")
        self.env = env
        self.sees_image_only = options.get("sees_image_only", False)
        self.names: NameBook = name_book(env)
        self.rng = np.random.default_rng(seed)
        self.min_visible_px = options.get("min_visible_px", 1)
        self.reask_redraw = options.get("reask_redraw", 1.0)
        self.sight = Visibility(env, self.min_visible_px, self.facts)
        self.record: list[tuple[str, Any]] | None = None
        self._rates = dict(error_rates)
        self._kinds = {module: dict(weights)
                       for module, weights in (options.get("kinds") or {}).items()}
        self._difficulty = dict(options.get("difficulty") or {})
        self._causes = dict(options.get("causes") or {})
        self._boxes = dict(options.get("boxes") or {})
        self._parts: dict[type, Any] = {}
        self._seed = seed
        self._situations: dict[str, int] = {}
        self._redraws = np.random.default_rng([seed, 1])  # the re-ask coins and salts

    def begin(self, query: ModelQuery) -> None:
        """Start answering ``query`` (in ids): with persistent errors (``reask_redraw`` < 1),
        point :attr:`rng` at the stream of its situation — the one this situation drew
        before, unless a coin of probability ``reask_redraw`` redraws it (a new situation
        always draws afresh). With independent errors, nothing changes."""
        if self.reask_redraw >= 1.0:
            return
        key = self.situation(query)
        salt = self._situations.get(key)
        if salt is None or self._redraws.random() < self.reask_redraw:
            salt = int(self._redraws.integers(2**62))
            self._situations[key] = salt
        self.rng = np.random.default_rng([self._seed, salt])

    def situation(self, query: ModelQuery) -> str:
        """The key of ``query``'s situation: its module, its fields and conversation (a
        tool-calling model's turns and the feedback it was given; not its images) and the
        world they are about — the true facts and every free body's position (to
        :data:`POSITION_GRID`) and orientation (to :data:`QUATERNION_GRID`)."""
        poses = [(p.name, [round(v / POSITION_GRID) for v in p.position],
                  [round(v / QUATERNION_GRID) for v in p.quaternion])
                 for p in capture_object_poses(self.env.scene_state)]
        text = json.dumps([query.module, query.fields, query.messages, sorted(self.facts()),
                           poses], sort_keys=True, default=_plain)
        return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()

    @property
    def task(self) -> SymbolicTask:
        """The env's task (a symbolic one: the backend checks)."""
        return self.env.task  # type: ignore[return-value]

    def facts(self) -> set[str]:
        """The true PDDL facts now, lower case, written ``p a b``."""
        return {f.lower() for f in self.task.facts(self.env.scene_state)}

    def wrong(self, module: str, kind: str | None = None,
              seen: Callable[[], Sighting] | None = None,
              cause: Callable[[], Any] | None = None) -> bool:
        """Draw whether this answer of ``module`` is wrong, at its injected error rate.

        ``kind`` is the only error this answer can make (a verdict whose truth holds can
        only be a ``false_fail``): it is the direction of an error, never its rate.
        ``seen`` gives the target's sighting in the image sent; where the module's
        difficulty is weighed, the rate is that sighting's
        (:meth:`~agentic_env.oracle.difficulty.DifficultyModel.rate`).
        ``cause`` gives the call's situation (:mod:`agentic_env.oracle.causes`); where the
        module has a cause model, the rate is that situation's. Each situation stated is
        appended to :attr:`record` when it is set.
        """
        rate = self._rates.get(module, 0.0)
        model = self._difficulty.get(module)
        if model is not None and seen is not None and rate > 0.0:
            rate = model.rate(rate, seen())
        causal = self._causes.get(module)
        if cause is not None and (self.record is not None or (causal and rate > 0.0)):
            situation = cause()
            if self.record is not None:
                self.record.append((module, situation))
            if causal is not None:
                rate = causal.rate(rate, situation)
        return rate > 0.0 and bool(self.rng.random() < rate)

    def loosen(self, module: str, box: list[int], shape: tuple[int, int]) -> list[int]:
        """The box ``module``'s answer draws around the tight ``box`` (x0, y0, x1, y1;
        pixels of an image of ``shape`` = (height, width), exclusive upper bounds): loose by
        its box model, from :attr:`rng` (a re-ask in an unchanged situation repeats it), or
        ``box`` itself where the module has none."""
        model = self._boxes.get(module)
        return box if model is None else model.draw(box, self.rng, shape)

    def error_kind(self, module: str) -> str | None:
        """Which of ``module``'s weighed error kinds a wrong answer makes, drawn by weight;
        ``None`` (no draw) when its kinds are not weighed."""
        weights = self._kinds.get(module)
        if not weights:
            return None
        names = sorted(weights)
        shares = np.array([weights[k] for k in names], float)
        return str(names[int(self.rng.choice(len(names), p=shares / shares.sum()))])

    def shown(self, names: Iterable[str], camera: str, size: tuple[int, int]) -> set[str]:
        """Those of ``names`` the image of ``camera`` at ``size`` (height, width; 0, 0: the
        camera's own) shows (:meth:`~agentic_env.oracle.visibility.Visibility.shown`)."""
        return self.sight.shown(names, camera, size)

    def part(self, kind: Callable[[OracleContext], PartT]) -> PartT:
        """The answering helper ``kind(self)``, built on first use and kept for the episode
        (e.g. :class:`~agentic_env.oracle.detection.Detector`)."""
        if kind not in self._parts:
            self._parts[kind] = kind(self)  # type: ignore[index]
        return self._parts[kind]  # type: ignore[index]

    def forget(self) -> None:
        """Drop every helper and the segmentation cache (the env owns the renderer)."""
        self._parts.clear()
        self.sight = Visibility(self.env, self.min_visible_px, self.facts)


def _plain(value: Any) -> Any:
    """A query field's value as JSON for a situation's key: arrays rounded to 1e-3 (a pose's
    metres to the millimetre), anything else by its text."""
    if isinstance(value, np.ndarray | np.generic):
        return np.round(np.asarray(value, float), 3).tolist()
    return str(value)
