#!/usr/bin/env bash
# Main job, headless and offline: installs what is missing, then runs the AgenticLab agent
# with the sim-oracle model on one sorting trial (live progress, a summary, and a trace with
# a video and an HTML page under runs/). Arguments replace the defaults, e.g.
#   bash scripts/demo.sh --task stacking --seed 3
#   bash scripts/demo.sh --model gemini/gemini-3-flash     # a real VLM (needs its API key)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
if (($# == 0)); then
  set -- --task sorting --setting lab --agent agenticlab --model sim-oracle --seed 0
fi
MUJOCO_GL="${MUJOCO_GL:-egl}" exec .venv/bin/agentic-env run "$@"
