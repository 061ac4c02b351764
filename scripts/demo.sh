#!/usr/bin/env bash
# Headless demo: installs what is missing, then runs agentic_env.demo (video and camera
# pictures under runs/). Arguments are passed on to the demo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
MUJOCO_GL="${MUJOCO_GL:-egl}" exec .venv/bin/python -m agentic_env.demo "$@"
