#!/usr/bin/env bash
# Installs what the project needs, and only what is missing:
#   1. Debian libraries for headless MuJoCo rendering (EGL and OSMesa),
#   2. a virtual environment in .venv (Python >= 3.12) with the pinned dependencies of
#      requirements-lock.txt, and the project itself as an editable install,
#   3. every LeRobot plugin distribution under plugins/ (lerobot_robot_*, lerobot_camera_*,
#      lerobot_env_*: LeRobot imports installed distributions so named by itself), editable
#      and without dependencies (the lock has them).
# A stamp in .venv records what was installed; a second run with nothing changed does
# no apt or pip work. Exports nothing: run it, or source it (it then runs as a child process).
if [[ ${BASH_SOURCE[0]} != "$0" ]]; then
  bash "${BASH_SOURCE[0]}"
  return
fi
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { echo "setup: $*"; }
die() { echo "setup: error: $*" >&2; exit 1; }

# --- Python --------------------------------------------------------------------------
# Python >= 3.12 (lerobot, the `vla` extra, needs it). The first interpreter on PATH that runs
# and is new enough; then pyenv's installed versions (a pyenv shim answers only for the
# versions its configuration selects).
new_enough() { "$@" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; }
PY=
for cand in python3.12 python3.13 python3; do
  if command -v "$cand" >/dev/null 2>&1 && new_enough "$cand"; then
    PY=$(command -v "$cand")
    break
  fi
done
if [[ -z $PY ]] && command -v pyenv >/dev/null 2>&1; then
  for cand in "$(pyenv root)"/versions/3.1[2-9]*/bin/python3; do
    if [[ -x $cand ]] && new_enough "$cand"; then
      PY=$cand
      break
    fi
  done
fi
[[ -n $PY ]] || die "no Python >= 3.12 found (tried python3.12, python3.13, python3 and pyenv's
  versions); install one (pyenv install 3.12, or Debian 13: apt-get install python3 python3-venv)"

# --- Debian packages -----------------------------------------------------------------
# ffmpeg is not needed: imageio-ffmpeg ships its own binary. chromium renders the docs site
# headless in tests/docs/ (and trace pages in scripts/trace_screenshot.sh).
APT_PACKAGES=(libegl1 libegl-mesa0 libgl1-mesa-dri libgbm1 libosmesa6 chromium)
VENV_PY=.venv/bin/python
venv_ok() { [[ -x $VENV_PY ]] && new_enough "$VENV_PY"; }
# Debian's own Python needs python3-venv for `python3 -m venv`.
if ! venv_ok && ! "$PY" -c 'import ensurepip' >/dev/null 2>&1; then
  APT_PACKAGES+=(python3-venv)
fi

if command -v dpkg >/dev/null 2>&1; then
  missing=()
  for pkg in "${APT_PACKAGES[@]}"; do
    [[ $(dpkg -s "$pkg" 2>/dev/null) == *"Status: install ok installed"* ]] || missing+=("$pkg")
  done
  if ((${#missing[@]})); then
    if [[ $(id -u) -eq 0 ]]; then
      SUDO=()
    elif command -v sudo >/dev/null 2>&1; then
      SUDO=(sudo)
    else
      die "missing Debian packages: ${missing[*]}; install them as root:
  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
    fi
    say "installing Debian packages: ${missing[*]}"
    apt_log=$(mktemp)
    if ! { "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update &&
      "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing[@]}"; } >"$apt_log" 2>&1; then
      cat "$apt_log" >&2
      rm -f "$apt_log"
      die "apt-get failed to install: ${missing[*]}"
    fi
    rm -f "$apt_log"
  fi
else
  say "warning: no dpkg (not Debian?); make sure EGL/OSMesa libraries are installed for rendering" >&2
fi

# --- virtual environment -------------------------------------------------------------
STAMP=.venv/.agentic_env-setup.stamp
if venv_ok; then
  : # usable; its packages are checked below
elif [[ -e .venv ]]; then
  say "existing .venv is broken or older than Python 3.12; recreating it with $PY"
  "$PY" -m venv --clear .venv
else
  say "creating .venv with $PY"
  "$PY" -m venv .venv
fi

# A plugin is a folder plugins/<distribution name>/ with a pyproject.toml; the folder, the
# distribution and the import package share the name (LeRobot imports the distribution name).
shopt -s nullglob
PLUGIN_FILES=(plugins/*/pyproject.toml)
shopt -u nullglob
PLUGINS=()
for file in "${PLUGIN_FILES[@]}"; do
  PLUGINS+=("$(basename "$(dirname "$file")")")
done
installed() { # the project and every plugin are installed distributions
  "$VENV_PY" -c 'import importlib.metadata as m, sys; [m.version(n) for n in sys.argv[1:]]' \
    agentic-env "${PLUGINS[@]}" >/dev/null 2>&1
}

want=$({ cat requirements-lock.txt pyproject.toml setup.py "${PLUGIN_FILES[@]}"; "$VENV_PY" -VV; } |
  sha256sum | cut -d' ' -f1)
if [[ -f $STAMP && $(<"$STAMP") == "$want" ]] && installed; then
  say "environment up to date"
  exit 0
fi

# Runs pip quietly: prints its output only when it fails, and otherwise only pip's own
# warnings (minus the harmless one about a configured index folder that does not exist).
pip_quiet() {
  local log status=0
  log=$(mktemp)
  "$VENV_PY" -m pip --disable-pip-version-check "$@" >"$log" 2>&1 || status=$?
  if ((status)); then
    cat "$log" >&2
  else
    grep -E '^(WARNING|DEPRECATION):' "$log" | grep -v 'is neither a file nor a directory' >&2 || true
  fi
  rm -f "$log"
  return "$status"
}

rm -f "$STAMP"
say "installing pinned dependencies into .venv (requirements-lock.txt)"
pip_quiet install -q -r requirements-lock.txt || die "pip could not install requirements-lock.txt"
say "installing the project (editable) into .venv"
pip_quiet install -q --no-deps -e . || die "pip could not install the project"
if ((${#PLUGINS[@]})); then
  say "installing the LeRobot plugins (editable): ${PLUGINS[*]}"
  editable=()
  for plugin in "${PLUGINS[@]}"; do
    editable+=(-e "plugins/$plugin")
  done
  pip_quiet install -q --no-deps "${editable[@]}" ||
    die "pip could not install the plugins under plugins/ (${PLUGINS[*]}): see pip's output above"
fi
echo "$want" >"$STAMP"
say "environment ready: .venv ($("$VENV_PY" -c 'import sys; print(sys.version.split()[0])'))"
