"""Real-hardware env and drivers (imported as agentic_env.real).

:class:`RealEnv` has the sim env's spaces and primitives on real drivers
(:mod:`agentic_env.real.drivers`) or their MuJoCo twins (:mod:`agentic_env.real.twin`),
behind the safety layer (:mod:`agentic_env.real.safety`) and the camera calibration
(:mod:`agentic_env.real.calibration`, solved by :mod:`agentic_env.real.handeye`).
"""

from agentic_env.real.calibration import Calibration
from agentic_env.real.hardware import Hardware, real_hardware
from agentic_env.real.real_env import RealEnv, console_confirm
from agentic_env.real.safety import SafetyConfig, SafetyFault, SafetyFaultError

__all__ = [
    "Calibration",
    "Hardware",
    "RealEnv",
    "SafetyConfig",
    "SafetyFault",
    "SafetyFaultError",
    "console_confirm",
    "real_hardware",
]
