"""``agentic-env bench-real``: observation latency through RealEnv + twin vs the sim env.

Both envs observe the same simulated cell (Tabletop, one seed) at the same configured
resolution. The sim env renders at that resolution directly; RealEnv asks the twin drivers
for frames at the devices' native resolutions and formats (Azure Kinect 1280x720 BGRA, D405
848x480), then converts, crops, resizes, adjusts intrinsics, applies the calibration and
reads the arm and the gripper (over the pseudo-terminal serial link). The figures split
RealEnv's time into the twin's capture (rendering native frames: on hardware the devices do
this) and the real pipeline itself.
"""

from __future__ import annotations

import time


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
                "SimEnv.observe": lambda: sim.observe(),
                "RealEnv+twin observe": lambda: real.observe(),
                "  twin capture (native render)":
                    lambda: [camera.capture(1.0) for camera in twin.cameras.values()],
                "  frame fitting (convert, crop, resize)":
                    lambda: [fit_frame(frames[cam.name], cam) for cam in real.cameras],
                "  arm state + gripper read (pty)": real.robot.refresh,
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
