#!/usr/bin/env bash
# Installs what is missing, then lints, builds the docs site and runs the fast tests (slow ones
# are deselected).
# Arguments are passed on to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
export MUJOCO_GL="${MUJOCO_GL:-egl}"
.venv/bin/python -m ruff check .
# The docs site, from scratch (-E), with warnings as errors and every cross-reference checked
# (-n); tests/docs/ then checks its internal links and renders it in headless Chromium.
.venv/bin/python -m sphinx -E -W -n --keep-going -q -b html docs docs/_build/html
export AGENTIC_ENV_DOCS_SITE=docs/_build/html
.venv/bin/python -m pytest -m "not slow" -n 2 -q "$@"
