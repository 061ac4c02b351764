"""Report figures (matplotlib, no display): each function returns PNG bytes.

Figures are drawn on :class:`matplotlib.figure.Figure` objects directly (no pyplot global
state), so they are safe to make from any thread or process without a display.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from agentic_env.harness.extras import require
from agentic_env.reports.metrics import CompoundingPoint, GroupStats

_DPI = 110
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf")


def _figure(width: float, height: float) -> Any:
    require("matplotlib", "harness")
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=_DPI, layout="constrained")


def _label(text: str) -> str:
    """A legend label wrapped to lines of at most 36 characters (a model spec with its
    per-module mix is long enough to squeeze the axes away)."""
    return textwrap.fill(text.replace(",", ", "), 36, break_on_hyphens=False)


def _png(figure: Any) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def success_plot(stats: Sequence[GroupStats]) -> bytes:
    """Success rate (Wilson 95 % bars) and mean progress score (± std) per cell.

    ``stats`` are grouped by ``(task, setting, model)``: x = task/setting, one bar per model.
    """
    cells = sorted({(s.group[0], s.group[1]) for s in stats})
    models = sorted({s.group[2] for s in stats})
    by = {s.group: s for s in stats}
    figure = _figure(max(6.0, 1.1 * len(cells) * max(1, len(models)) ** 0.5 + 3), 5.2)
    top, bottom = figure.subplots(2, 1, sharex=True)
    width = 0.8 / len(models)
    for m, model in enumerate(models):
        xs, rates, low, high, scores, stds = [], [], [], [], [], []
        for c, cell in enumerate(cells):
            s = by.get((*cell, model))
            if s is None:
                continue
            xs.append(c - 0.4 + width * (m + 0.5))
            rates.append(s.success_rate)
            low.append(s.success_rate - s.ci_low)
            high.append(s.ci_high - s.success_rate)
            scores.append(s.mean_score)
            stds.append(s.std_score)
        colour = _COLOURS[m % len(_COLOURS)]
        top.bar(xs, rates, width, yerr=[low, high], capsize=3, color=colour,
                label=_label(model))
        bottom.bar(xs, scores, width, yerr=stds, capsize=3, color=colour)
    top.set_ylabel("success rate")
    top.set_ylim(0, 1.05)
    top.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    top.set_title("Success (95 % Wilson interval) and progress score (± std)")
    bottom.set_ylabel("progress score")
    bottom.set_ylim(0, 1.05)
    bottom.set_xticks(range(len(cells)), [f"{t}\n{s}" for t, s in cells])
    return _png(figure)


def failure_plot(breakdown: Mapping[tuple[Any, ...], Mapping[str, int]], title: str) -> bytes:
    """Stacked bars of first-failing sources per group (counts of failed episodes)."""
    groups = list(breakdown)
    sources = [s for s in next(iter(breakdown.values())) if any(
        counts[s] for counts in breakdown.values())]
    from matplotlib.ticker import MaxNLocator

    figure = _figure(7.5, 0.45 * len(groups) + 1.6)
    axes = figure.subplots()
    left = [0] * len(groups)
    labels = [_label(" / ".join(map(str, g))) for g in groups]
    for i, source in enumerate(sources):
        values = [breakdown[g][source] for g in groups]
        axes.barh(labels, values, left=left, color=_COLOURS[i % len(_COLOURS)], label=source)
        left = [a + b for a, b in zip(left, values, strict=True)]
    axes.invert_yaxis()
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("failed episodes")
    axes.set_title(title)
    if sources:
        axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _png(figure)


def ablation_plot(stats: Sequence[GroupStats]) -> bytes:
    """Progress score vs episode time per verification mode (± std on both axes).

    ``stats`` are grouped by ``(task, disturbance, verification)``; one panel per task.
    """
    tasks = sorted({s.group[0] for s in stats})
    modes = sorted({s.group[2] for s in stats})
    figure = _figure(4.2 * len(tasks) + 1.5, 3.8)
    panels = figure.subplots(1, len(tasks), squeeze=False)[0]
    markers = "osD^v<>"
    disturbances = sorted({s.group[1] for s in stats})
    for axes, task in zip(panels, tasks, strict=True):
        for m, mode in enumerate(modes):
            for d, disturbance in enumerate(disturbances):
                cell = [s for s in stats if s.group == (task, disturbance, mode)]
                if not cell:
                    continue
                s = cell[0]
                axes.errorbar(s.mean_episode_s, s.mean_score, xerr=s.std_episode_s,
                              yerr=s.std_score, fmt=markers[d % len(markers)], capsize=3,
                              color=_COLOURS[m % len(_COLOURS)],
                              label=f"{mode} / {disturbance}")
        axes.set_title(task)
        axes.set_xlabel("episode time: robot + model (s)")
        axes.set_ylabel("progress score")
        axes.set_ylim(-0.05, 1.05)
    panels[-1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0),
                      title="verification / disturbance")
    return _png(figure)


def compounding_plot(points: Sequence[CompoundingPoint]) -> bytes:
    """Success vs injected error rate per module and mode; dashed: independent-error
    prediction ``p0 (1 - e)^k`` (see :class:`~agentic_env.reports.metrics.CompoundingPoint`)."""
    figure = _figure(7.0, 4.2)
    axes = figure.subplots()
    curves = sorted({(p.module, p.verification) for p in points})
    for i, (module, mode) in enumerate(curves):
        curve = sorted((p for p in points if (p.module, p.verification) == (module, mode)),
                       key=lambda p: p.error_rate)
        xs = [p.error_rate for p in curve]
        colour = _COLOURS[i % len(_COLOURS)]
        axes.errorbar(xs, [p.success_rate for p in curve],
                      yerr=[[p.success_rate - p.ci_low for p in curve],
                            [p.ci_high - p.success_rate for p in curve]],
                      fmt="o-", capsize=3, color=colour, label=f"{module} error, {mode}")
        axes.plot(xs, [p.predicted for p in curve], "--", color=colour, alpha=0.7)
    axes.set_xlabel("injected error rate per call")
    axes.set_ylabel("success rate")
    axes.set_ylim(-0.05, 1.05)
    axes.set_title("Compounding of module errors\n(dashed: p0·(1−e)^k, k = calls per "
                   "error-free episode, no recovery)")
    axes.legend(fontsize="small")
    return _png(figure)
