#!/usr/bin/env bash
# The test suite with numpy and OpenBLAS forced onto other kernels than this CPU's best: the
# AVX-512 paths numpy dispatches to here are switched off (NPY_DISABLE_CPU_FEATURES) and
# OpenBLAS runs its Haswell (AVX2) kernels, as on a CPU without AVX-512 (an AMD EPYC of
# Zen 2/3, say). A test that compares against one CPU's last bits fails here while the plain
# run passes. Arguments go to pytest (default: the fast tests). Needs scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
features=$(.venv/bin/python -c 'from numpy._core._multiarray_umath import __cpu_features__ as f
print(" ".join(n for n, on in f.items() if on and n.startswith("AVX512")))')
export NPY_DISABLE_CPU_FEATURES="$features" OPENBLAS_CORETYPE=Haswell
export MUJOCO_GL="${MUJOCO_GL:-egl}"
echo "test_other_kernels: NPY_DISABLE_CPU_FEATURES='$features' OPENBLAS_CORETYPE=Haswell"
if (($#)); then
  .venv/bin/python -m pytest "$@"
else
  .venv/bin/python -m pytest -m "not slow" -n 2 -q
fi
