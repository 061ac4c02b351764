"""The reference image quality: what the module benchmark's detector was shown.

:data:`agentic_env.oracle.image_quality.REFERENCE_FILE` holds the median
:class:`~agentic_env.oracle.image_quality.ImageQuality` of the shoulder frames the module
benchmark's detector situations come from (:func:`agentic_env.bench.modules.benchmark_sightings`:
sorting and stacking, the lab of AgenticLab's Table II, realistic world, the first 20
calibration seeds), each measured at the rollout's first frame. Frames only, no outcome:
nothing is fitted to a result. The packaged file is written with::

    python -c "from agentic_env.bench.image_quality import write_reference as w; w()"
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentic_env.oracle.image_quality import ImageQuality, measure, reference_toml

#: The module benchmark's detector tasks and setting (:func:`benchmark_sightings`).
TASKS: tuple[str, ...] = ("sorting", "stacking")
SETTING = "lab"


def reference_frames(seeds: Sequence[int] | None = None, tasks: Sequence[str] = TASKS,
                     setting: str = SETTING) -> list[ImageQuality]:
    """The quality of each rollout's first shoulder frame, realistic world (default seeds:
    the first 20 calibration seeds)."""
    from agentic_env.contract.seeds import CALIBRATION_SEEDS, check_calibration_seeds
    from agentic_env.envs.sim_env import SimEnv

    seeds = CALIBRATION_SEEDS[:20] if seeds is None else seeds
    check_calibration_seeds(seeds)
    found = []
    for task in tasks:
        env = SimEnv(task=task, setting=setting, realism="realistic")
        try:
            for seed in seeds:
                observation, _ = env.reset(seed=int(seed))
                found.append(measure(observation["shoulder_rgb"]))
        finally:
            env.close()
    return found


def write_reference() -> Path:
    """Write the packaged reference file from :func:`reference_frames`' defaults; returns
    its path."""
    from agentic_env.oracle import image_quality

    path = Path(image_quality.__file__).parent / "profiles" / image_quality.REFERENCE_FILE
    header = ("The reference image quality of the emulated detectors (agentic_env.oracle."
              "image_quality):\nthe median noise std, RMS contrast and HSV brightness (0..1) "
              "of the module\nbenchmark's shoulder frames: sorting and stacking, lab, "
              "realistic world, calibration\nseeds 2000000-2000019, each rollout's first "
              "frame. Written by\nagentic_env.bench.image_quality.write_reference.")
    path.write_text(reference_toml(reference_frames(), header), encoding="utf-8")
    return path
