"""A pool worker gives the memory an episode freed back to the system before the next one.

``churning_episode`` does what a real episode does to the C heap, in miniature: it allocates
:data:`CHURN_MIB` in blocks below glibc's mmap threshold (so they come from the heap, as a
real episode's frames do once the threshold has risen), each followed by a small block that
outlives the episode (a cache entry, a log record), touches them, and frees the large blocks.
The holes between the survivors stay resident unless someone trims the heap. The worker's
RSS at the start of its second episode, against its first, shows whether it did.
"""

from __future__ import annotations

import ctypes
import os
import pathlib
import sys

import pytest

from agentic_env.harness.episode import EpisodeResult, EpisodeSpec
from agentic_env.harness.execute import _malloc_trim
from agentic_env.harness.pool import run_pool

#: MiB each episode allocates and frees.
CHURN_MIB = 256
#: Bytes of each large block: below glibc's default mmap threshold (128 KiB).
BLOCK = 64 * 1024
#: Small blocks kept from every episode (never freed: they pin the holes between them).
_KEPT: list[int] = []


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None)
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    return libc


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def churning_episode(spec: EpisodeSpec, *, trace_root: pathlib.Path | None = None
                     ) -> EpisodeResult:
    """Churn :data:`CHURN_MIB` through the C heap; the result's ``failure_detail`` is the
    process's RSS (MiB) when the episode started."""
    start, libc = _rss_mib(), _libc()
    large = []
    for _ in range(CHURN_MIB * 2**20 // BLOCK):
        block = libc.malloc(BLOCK)
        ctypes.memset(block, 1, BLOCK)
        large.append(block)
        _KEPT.append(libc.malloc(32))
    for block in large:
        libc.free(block)
    return EpisodeResult(spec=spec, success=True, progress=1.0, score=1.0,
                         failure_detail=f"{start:.1f}")


@pytest.mark.skipif(not sys.platform.startswith("linux") or _malloc_trim() is None,
                    reason="needs glibc's malloc_trim and /proc")
def test_worker_rss_does_not_keep_an_episodes_freed_heap() -> None:
    specs = [EpisodeSpec(task="sorting", seed=seed) for seed in range(3)]
    finished = sorted(run_pool(specs, "test_pool_memory:churning_episode", None, workers=1),
                      key=lambda f: f.result.spec.seed)
    assert [f.result.error for f in finished] == [None] * 3
    first, second, third = (float(f.result.failure_detail) for f in finished)
    # without the trim the worker keeps every freed block resident: +CHURN_MIB
    assert second - first < CHURN_MIB / 2, (first, second, third)
    assert third - first < CHURN_MIB / 2, (first, second, third)



def test_a_ray_task_releases_its_workers_memory_after_the_episode(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray's task function (:func:`run_and_release`, what ``run_ray`` submits) runs the
    episode, then releases the worker's memory, as a pool worker does between episodes."""
    from agentic_env.harness import execute, ray_runner

    calls: list[str] = []
    monkeypatch.setattr(execute, "release_memory", lambda: calls.append("release"))
    spec = EpisodeSpec(task="sorting", seed=0).to_dict()
    finished = execute.run_and_release(spec, "test_pool_memory:churning_episode", None)
    assert finished.result.error is None and calls == ["release"]
    assert ray_runner.run_and_release is execute.run_and_release
