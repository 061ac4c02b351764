"""Run one episode inside a worker (pool process or Ray task): the code both runners share.

The episode function is named by a ``"module:function"`` path so it can be imported in any
worker process; it is called as ``fn(spec, trace_root=...)`` (it writes the trace to
``trace_root/<spec key>/``) and must return an
:class:`EpisodeResult`. Anything it raises becomes an error result carrying the traceback,
so one crashed episode never stops a sweep.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import os
import pathlib
import socket
import time
import traceback
from collections.abc import Callable
from typing import Any

from agentic_env.entry_points import load_entry_point
from agentic_env.errors import InvalidConfigError
from agentic_env.harness.db import Finished
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec

#: Signature of an episode function.
EpisodeFn = Callable[..., EpisodeResult]
#: Episode functions that moved, old path -> new path (sweep files written before the move
#: keep working).
MOVED_EPISODE_FNS = {"agentic_env.agents.runner:run_episode":
                     "agentic_env.harness.runner:run_episode"}


@functools.cache
def load_episode_fn(path: str) -> EpisodeFn:
    """Import the episode function named ``"module:function"``."""
    path = MOVED_EPISODE_FNS.get(path, path)
    fn = load_entry_point(path, f"episode function {path!r}")
    if not callable(fn):
        raise InvalidConfigError(f"episode function {path!r} is not callable")
    return fn


def error_result(spec: EpisodeSpec, detail: str, text: str, wall_s: float = 0.0
                 ) -> EpisodeResult:
    """The result recorded for an episode that crashed (``failure == "error"``)."""
    return EpisodeResult(spec=spec, success=False, progress=0.0, score=0.0, wall_s=wall_s,
                         failure="error", failure_detail=detail, error=text)


def worker_name() -> str:
    """``host:pid`` of this process."""
    return f"{socket.gethostname()}:{os.getpid()}"


def run_one(spec_data: dict[str, Any], fn_path: str, trace_root: str | None) -> Finished:
    """Run one episode from its spec dict; never raises for a failing episode.

    Args:
        spec_data: :meth:`EpisodeSpec.to_dict` output.
        fn_path: episode function, ``"module:function"``.
        trace_root: folder under which the episode function writes the episode's trace
            (``trace_root/KEY/``), or ``None`` for no trace.
    """
    spec = EpisodeSpec.from_dict(spec_data)
    key = spec.key()
    start = time.perf_counter()
    try:
        fn = load_episode_fn(fn_path)
        result = fn(spec, trace_root=None if trace_root is None else pathlib.Path(trace_root))
        if not isinstance(result, EpisodeResult):
            raise TypeError(f"episode function {fn_path} returned {type(result).__name__}, "
                            "not EpisodeResult")
    except Exception as exc:  # noqa: BLE001  (any crash is recorded, the sweep goes on)
        elapsed = time.perf_counter() - start
        result = error_result(spec, f"{type(exc).__name__}: {exc}"[:500],
                              traceback.format_exc(), wall_s=elapsed)
    return Finished(key=key, result=result, run_s=time.perf_counter() - start,
                    worker=worker_name())


def run_and_release(spec_data: dict[str, Any], fn_path: str, trace_root: str | None
                    ) -> Finished:
    """:func:`run_one`, then :func:`release_memory`: the task function of runners whose
    worker processes outlive an episode and run the next (Ray's workers)."""
    finished = run_one(spec_data, fn_path, trace_root)
    release_memory()
    return finished


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` (``None`` where the C library has none: musl, macOS)."""
    try:
        trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    except OSError:
        return None
    if trim is not None:
        trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_memory() -> None:
    """Give the memory the last episode freed back to the operating system (call between
    episodes).

    An episode allocates and frees hundreds of MiB (camera frames, depth maps, the
    simulator's model and data). glibc keeps freed chunks in its heaps: its mmap threshold
    rises to the largest block freed (up to 32 MiB), so later frames come from the heaps
    rather than from mappings of their own, and a heap returns memory by itself only from its
    top. A worker's resident memory therefore climbed episode after episode with its live
    heap flat (``agentic-env soak``: ``docs/soak.md``). This collects cyclic garbage, then
    ``malloc_trim(0)`` returns every free page of every heap; a no-op without glibc.
    """
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
