#!/usr/bin/env bash
# Installs what is missing, then lints and runs the fast tests (slow ones are deselected).
# Arguments are passed on to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
export MUJOCO_GL="${MUJOCO_GL:-egl}"
.venv/bin/python -m ruff check .
.venv/bin/python -m pytest -m "not slow" -n 2 -q "$@"
