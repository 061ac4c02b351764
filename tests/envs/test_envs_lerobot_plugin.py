"""The ``lerobot_env_agentic`` distribution: LeRobot finds it by its name and importing it
registers ``--env.type=agentic_env``, with no ``--env.discover_packages_path``."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import PackageNotFoundError, distribution

import pytest

pytest.importorskip("lerobot")

#: What ``lerobot-eval`` does before parsing its arguments, in a fresh interpreter.
DISCOVER = """
from lerobot.utils.import_utils import register_third_party_plugins
register_third_party_plugins()
import sys
from lerobot.envs.configs import EnvConfig
config = EnvConfig.get_choice_class("agentic_env")
print(config.__module__, "lerobot_env_agentic" in sys.modules)
"""


def test_lerobot_imports_the_env_plugin_by_itself() -> None:
    try:
        plugin = distribution("lerobot_env_agentic")
    except PackageNotFoundError:
        pytest.fail("the lerobot_env_agentic plugin is not installed: run scripts/setup.sh or "
                    "`pip install --no-deps -e plugins/lerobot_env_agentic`")
    assert plugin.metadata["Name"] == "lerobot_env_agentic"  # LeRobot imports this name
    done = subprocess.run([sys.executable, "-c", DISCOVER], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["agentic_env.envs.lerobot.config", "True"]
