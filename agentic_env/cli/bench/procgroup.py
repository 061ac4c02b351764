"""A process group's members and their resident memory, read from Linux ``/proc``: what the
sweep part of ``agentic-env soak`` samples while a sweep runs."""

from __future__ import annotations

import os


def rss_mib(pid: int | str = "self") -> float:
    """A process's resident memory (this one's by default), MiB (Linux ``/proc``)."""
    with open(f"/proc/{pid}/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def members(pgid: int) -> dict[int, int]:
    """The live (not zombie) processes of process group ``pgid``: pid -> parent pid."""
    pids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as stat:
                state, ppid, group = stat.read().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue  # gone meanwhile
        if int(group) == pgid and state != "Z":
            pids[int(name)] = int(ppid)
    return pids


def live(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group ``pgid``."""
    return list(members(pgid))


def role(pid: int, ppid: int, leader: int) -> str:
    """What ``pid`` (parent ``ppid``) is in the group of the sweep process ``leader``:
    ``sweep`` (the leader), ``worker`` (an episode worker of its pool) or ``other`` (the
    multiprocessing resource tracker, a worker's planner run, ...)."""
    if pid == leader:
        return "sweep"
    if ppid == leader:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            command = cmdline.read()
        if b"spawn_main" in command and b"resource_tracker" not in command:
            return "worker"
    return "other"


def group_rss(pgid: int) -> dict[int, tuple[str, float]]:
    """The live processes of the group of the sweep process ``pgid``: pid -> (its
    :func:`role`, its resident memory in MiB)."""
    sample = {}
    for pid, ppid in members(pgid).items():
        try:
            sample[pid] = (role(pid, ppid, pgid), rss_mib(pid))
        except (OSError, ValueError, IndexError):
            continue  # exited between the listing and the read
    return sample
