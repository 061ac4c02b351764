"""Report plots stay readable when a model's label is a long per-module mix."""

from __future__ import annotations

import io

import pytest

from agentic_env.reports import metrics, plots

pytest.importorskip("matplotlib")

#: A Fig. 6 configuration's label: without wrapping, its legend entry squeezed the axes to
#: nothing (matplotlib warned that constrained layout collapsed them).
LONG = ("emulated:gemini-3-flash [detector=emulated:qwen3-vl-plus,"
        "goal=emulated:claude-4.5-opus]")


def _row(task: str, model: str, success: bool) -> dict:
    return {"task": task, "setting": "lab", "model": model, "success": success,
            "score": float(success), "progress": float(success), "wall_s": 1.0,
            "input_tokens": 0, "output_tokens": 0, "cost_usd": None,
            "failure": None if success else "goal"}


def test_long_model_labels_are_wrapped_and_the_axes_kept() -> None:
    from PIL import Image

    rows = [_row(task, model, ok) for task in ("sorting", "stacking", "crossword", "kitchen")
            for model in ("emulated:gemini-3-flash", LONG) for ok in (True, False)]
    stats = metrics.group_stats(rows, ("task", "setting", "model"))
    image = Image.open(io.BytesIO(plots.success_plot(stats)))  # warnings fail the test
    assert image.width > image.height
    failures = {(r["task"], r["model"]): {"goal": 1} for r in rows}
    assert plots.failure_plot(failures, "first failures")
    assert all(len(line) <= 36 for line in plots._label(LONG).splitlines())
