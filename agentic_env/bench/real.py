"""``agentic-env bench-real``: observation latency through RealEnv + twin vs the sim env.

Both envs observe the same simulated cell (Tabletop, one seed) at the same configured
resolution. The sim env renders at that resolution directly; RealEnv asks the twin drivers
for frames at the devices' native resolutions and formats (Azure Kinect 1280x720 BGRA, D405
848x480), then converts, crops, resizes, adjusts intrinsics, applies the calibration and
reads the arm and the gripper (over the pseudo-terminal serial link). The figures split
RealEnv's time into the twin's capture (rendering native frames: on hardware the devices do
this) and the real pipeline itself. :func:`latency_figures` summarises the samples as the
command prints them and the results database records them.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

#: The measured paths of :func:`observation_latency`, in its order: the two envs, then
#: RealEnv's parts (the printout indents them by two spaces).
SIM, REAL = "SimEnv.observe", "RealEnv+twin observe"
CAPTURE = "  twin capture (native render)"
FITTING = "  frame fitting (convert, crop, resize)"
READ = "  arm state + gripper read (pty)"


def observation_latency(repeats: int, seed: int) -> tuple[dict[str, list[float]], tuple[int, int]]:
    """Milliseconds of ``repeats`` interleaved observations per measured path (the sim env's,
    RealEnv's over the twin, and RealEnv's parts: the twin's capture, the frame fitting, the
    arm and gripper read), after one warm-up each; and the configured resolution (width,
    height) of the cameras."""
    from agentic_env.envs.sim_env import SimEnv
    from agentic_env.real.frames import fit_frame
    from agentic_env.real.twin import make_twin_env

    sim = SimEnv()
    sim.reset(seed=seed)
    real, twin = make_twin_env(seed=seed)
    try:
        with real:
            real.reset()
            frames = {name: camera.capture(1.0) for name, camera in twin.cameras.items()}
            timings = {
                SIM: lambda: sim.observe(),
                REAL: lambda: real.observe(),
                CAPTURE: lambda: [camera.capture(1.0) for camera in twin.cameras.values()],
                FITTING: lambda: [fit_frame(frames[cam.name], cam) for cam in real.cameras],
                READ: real.robot.refresh,
            }
            for function in timings.values():
                function()  # warm up (GL contexts, caches)
            samples: dict[str, list[float]] = {name: [] for name in timings}
            for _ in range(repeats):  # interleaved, so load changes hit all alike
                for name, function in timings.items():
                    start = time.perf_counter()
                    function()
                    samples[name].append((time.perf_counter() - start) * 1e3)
    finally:
        sim.close()
    return samples, (sim.cameras[0].width, sim.cameras[0].height)


def latency_figures(samples: dict[str, list[float]], resolution: tuple[int, int]
                    ) -> dict[str, Any]:
    """:func:`observation_latency`'s result as the results database records it: per path
    (``paths``, its name without the indent -> ``mean_ms``, ``median_ms``, ``p95_ms``), the
    ``resolution`` (``WxH``, pixels), ``overhead_ratio`` (RealEnv + twin over SimEnv, mean
    times), ``pipeline_ms`` (RealEnv's own work without the twin's rendering: frame fitting
    plus the arm and gripper read, mean ms) and ``pipeline_ratio`` (that over SimEnv's)."""
    paths = {name.strip(): {"mean_ms": float(np.mean(values)),
                            "median_ms": float(np.median(values)),
                            "p95_ms": float(np.percentile(values, 95))}
             for name, values in samples.items()}
    mean = {name: cell["mean_ms"] for name, cell in paths.items()}
    pipeline = mean[FITTING.strip()] + mean[READ.strip()]
    return {"resolution": f"{resolution[0]}x{resolution[1]}", "paths": paths,
            "overhead_ratio": mean[REAL] / mean[SIM], "pipeline_ms": pipeline,
            "pipeline_ratio": pipeline / mean[SIM]}
